"""People's keys at rest: an `ApiKey` never shows itself, a sealed key opens only for its person
and only unaltered, the configured key-encryption keys are checked, and a local stack's keyring
file is made once, owner-only, and seen by every keyring on it when a key is added."""

from __future__ import annotations

import base64
import logging
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from violet import keyring as keyring_module
from violet.keyring import (
    LOCAL_FILE,
    ApiKey,
    Keyring,
    KeyringError,
    LocalKeyring,
    holds_a_key,
    new_entry,
    parse_keyring,
    redact_keys,
    resolve_keyring,
)

SECRET = "sk-ant-api03-Zq9xW8vU7tS6rR5qP4oN3mL2kJ1i-WXYZ"
OTHER_SECRET = "sk-ant-api03-Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9-ABCD"


def a_keyring(*ids: str) -> Keyring:
    return parse_keyring(",".join(new_entry(kek_id) for kek_id in ids or ("k1",)))


# --- a key in memory ------------------------------------------------------------------------


def test_a_key_shows_only_its_last_four_characters() -> None:
    key = ApiKey(SECRET)
    assert repr(key) == "ApiKey(…WXYZ)"
    assert str(key) == "ApiKey(…WXYZ)"
    in_a_dict = {"key": key}
    shown = f"{key} {key!r} {[key]} {in_a_dict}"
    assert shown.count("…WXYZ") == 4
    assert SECRET not in shown
    assert key.ending == "WXYZ"
    assert key.reveal() == SECRET


def test_logging_a_key_never_writes_it(caplog: pytest.LogCaptureFixture) -> None:
    key = ApiKey(SECRET)
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("test.keyring").info("key %s, again %r, in a dict %s", key, key, {1: key})
    assert "…WXYZ" in caplog.text
    assert SECRET not in caplog.text
    assert SECRET[:-4] not in caplog.text


def test_a_key_is_its_characters_without_surrounding_space() -> None:
    assert ApiKey(f"  {SECRET}\n").reveal() == SECRET
    assert ApiKey(f" {SECRET} ") == ApiKey(SECRET)
    assert ApiKey(SECRET) != ApiKey(OTHER_SECRET)
    assert ApiKey(SECRET) != SECRET  # a key is never equal to its bare characters
    assert len({ApiKey(SECRET), ApiKey(SECRET), ApiKey(OTHER_SECRET)}) == 2


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_an_empty_key_is_no_key(blank: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        ApiKey(blank)


def test_anything_that_looks_like_a_key_in_text_is_cut_to_its_ending() -> None:
    text = f"my key is {SECRET}, the old one was {OTHER_SECRET}."
    redacted = redact_keys(text)
    assert redacted == "my key is sk-ant-…WXYZ, the old one was sk-ant-…ABCD."
    assert holds_a_key(text)
    assert not holds_a_key(redacted)
    assert redact_keys(redacted) == redacted


@pytest.mark.parametrize("text", ["no key here", "sk-ant-short", "sk-live-abcdefghijklmnopqrstu"])
def test_text_without_a_key_is_left_as_it_is(text: str) -> None:
    assert not holds_a_key(text)
    assert redact_keys(text) == text


# --- sealing ----------------------------------------------------------------------------------


def test_a_sealed_key_opens_for_its_person() -> None:
    keys = a_keyring()
    sealed = keys.seal(ApiKey(SECRET), "ann")
    assert sealed.kek_id == "k1"
    assert len(sealed.nonce) == keyring_module.NONCE_BYTES
    assert SECRET.encode() not in sealed.ciphertext
    assert keys.open(sealed, "ann") == ApiKey(SECRET)


def test_the_same_key_sealed_twice_looks_different_each_time() -> None:
    keys = a_keyring()
    first, second = keys.seal(ApiKey(SECRET), "ann"), keys.seal(ApiKey(SECRET), "ann")
    assert first.nonce != second.nonce
    assert first.ciphertext != second.ciphertext


def test_a_sealed_key_does_not_open_for_another_person() -> None:
    keys = a_keyring()
    sealed = keys.seal(ApiKey(SECRET), "ann")
    with pytest.raises(KeyringError, match="not this person's") as refused:
        keys.open(sealed, "bob")
    assert SECRET not in str(refused.value)


def test_an_altered_sealed_key_does_not_open() -> None:
    keys = a_keyring()
    sealed = keys.seal(ApiKey(SECRET), "ann")
    flipped = bytes([sealed.ciphertext[0] ^ 1]) + sealed.ciphertext[1:]
    for altered in (
        replace(sealed, ciphertext=flipped),
        replace(sealed, ciphertext=sealed.ciphertext[:-1]),
        replace(sealed, nonce=bytes(len(sealed.nonce))),
    ):
        with pytest.raises(KeyringError, match="altered"):
            keys.open(altered, "ann")


def test_a_key_sealed_under_another_keyring_does_not_open() -> None:
    sealed = a_keyring("k1").seal(ApiKey(SECRET), "ann")
    with pytest.raises(KeyringError, match="altered"):
        a_keyring("k1").open(sealed, "ann")  # same id, another secret
    with pytest.raises(KeyringError, match="'k1' is not configured"):
        a_keyring("k2").open(sealed, "ann")


def test_the_first_key_seals_and_every_key_opens() -> None:
    old = new_entry("old")
    before = parse_keyring(old)
    sealed_before = before.seal(ApiKey(SECRET), "ann")
    after = parse_keyring(f"{new_entry('new')},{old}")
    assert after.current == "new"
    assert after.ids == ["new", "old"]
    assert after.needs_rotation(sealed_before)
    assert after.open(sealed_before, "ann") == ApiKey(SECRET)
    assert not after.needs_rotation(after.seal(ApiKey(SECRET), "ann"))
    assert after.add_key() is None  # a deployment's keys change with its setting


# --- configured keys --------------------------------------------------------------------------


def test_configured_keys_may_be_spaced_and_end_with_a_comma() -> None:
    first, second = new_entry("a-1"), new_entry("B_2")
    keys = parse_keyring(f"  {first} ,\n {second},")
    assert keys.ids == ["a-1", "B_2"]
    assert keys.current == "a-1"


@pytest.mark.parametrize(
    ("configured", "complaint"),
    [
        ("", "no key-encryption key is set"),
        (" , ", "no key-encryption key is set"),
        (f"bad id:{base64.b64encode(bytes(32)).decode()}", "ID:BASE64"),
        (f":{base64.b64encode(bytes(32)).decode()}", "ID:BASE64"),
        (f"{'x' * 33}:{base64.b64encode(bytes(32)).decode()}", "ID:BASE64"),
        ("k1:not*base64!", "'k1' is not base64"),
        ("k1", "'k1' is not 32 bytes"),
        (f"k1:{base64.b64encode(bytes(16)).decode()}", "'k1' is not 32 bytes"),
        (f"k1:{base64.b64encode(bytes(33)).decode()}", "'k1' is not 32 bytes"),
        (f"{new_entry('k1')},{new_entry('k1')}", "'k1' appears twice"),
    ],
)
def test_malformed_configured_keys_are_refused_with_the_reason(
    configured: str, complaint: str
) -> None:
    with pytest.raises(KeyringError, match=complaint) as refused:
        parse_keyring(configured)
    secret = configured.partition(":")[2]
    assert not secret or secret not in str(refused.value)


def test_configured_keys_are_used_without_a_local_file(tmp_path: Path) -> None:
    keys = resolve_keyring(new_entry("set"), tmp_path / "home")
    assert type(keys) is Keyring
    assert keys.current == "set"
    assert not (tmp_path / "home").exists()


# --- a local stack's keyring file -------------------------------------------------------------


def test_a_local_keyring_file_is_made_owner_only_on_first_use(tmp_path: Path) -> None:
    home = tmp_path / "home"
    keys = resolve_keyring("", home)
    path = home / LOCAL_FILE
    assert isinstance(keys, LocalKeyring)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip().startswith(f"{keys.current}:")
    assert len(keys.ids) == 1


def test_two_services_starting_on_one_home_agree_on_one_key(tmp_path: Path) -> None:
    first, second = resolve_keyring("", tmp_path), resolve_keyring("", tmp_path)
    assert first.current == second.current
    assert second.open(first.seal(ApiKey(SECRET), "ann"), "ann") == ApiKey(SECRET)


def test_a_service_starting_while_another_makes_the_file_agrees_on_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file appears whole or not at all: a service that starts while another is making it
    never reads it empty."""
    make_entry = keyring_module.new_entry
    meanwhile: list[Keyring] = []

    def entry_while_another_starts(kek_id: str | None = None) -> str:
        monkeypatch.setattr(keyring_module, "new_entry", make_entry)
        meanwhile.append(resolve_keyring("", tmp_path))
        return make_entry(kek_id)

    monkeypatch.setattr(keyring_module, "new_entry", entry_while_another_starts)
    first = resolve_keyring("", tmp_path)
    assert len(meanwhile) == 1
    assert first.current == meanwhile[0].current
    assert first.ids == meanwhile[0].ids
    assert [path.name for path in tmp_path.iterdir()] == [LOCAL_FILE]


def test_an_added_key_becomes_current_and_the_old_ones_still_open(tmp_path: Path) -> None:
    keys = resolve_keyring("", tmp_path)
    old = keys.current
    sealed = keys.seal(ApiKey(SECRET), "ann")
    new = keys.add_key()
    assert new != old
    assert keys.ids == [new, old]
    assert keys.current == new
    assert keys.needs_rotation(sealed)
    assert keys.open(sealed, "ann") == ApiKey(SECRET)
    assert keys.seal(ApiKey(SECRET), "ann").kek_id == new
    path = tmp_path / LOCAL_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [line.partition(":")[0] for line in path.read_text().split()] == [new, old]
    assert [p.name for p in tmp_path.iterdir()] == [LOCAL_FILE]


def test_another_keyring_on_the_same_file_sees_the_added_key(tmp_path: Path) -> None:
    rotating, other = resolve_keyring("", tmp_path), resolve_keyring("", tmp_path)
    new = rotating.add_key()
    assert other.current == new
    assert other.open(rotating.seal(ApiKey(SECRET), "ann"), "ann") == ApiKey(SECRET)


def test_an_added_key_is_seen_even_where_the_clock_left_the_files_time_alone(
    tmp_path: Path,
) -> None:
    """Filesystems with coarse timestamps may give the rewritten file the very same time."""
    rotating, other = resolve_keyring("", tmp_path), resolve_keyring("", tmp_path)
    path = tmp_path / LOCAL_FILE
    before = path.stat()
    new = rotating.add_key()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert other.current == new
