"""People's Anthropic keys at rest: sealed with AES-GCM under a key-encryption key.

The key-encryption keys (`VIOLET_KEY_ENCRYPTION_KEYS`: `ID:BASE64`, comma-separated, the first
one current) come from the deployment's secrets; with none set, a local stack keeps them in
`VIOLET_HOME/key-encryption-keys`, made on first use. A sealed key names the encryption key it
was sealed under, so `violet keys rotate` can seal every key again under the current one while
the older ones still open what is not yet rotated. The person the key belongs to is the
additional data of the seal: a sealed key copied to another person's row does not open.

`ApiKey` holds a key in memory: it shows only its last 4 characters, in a repr, an f-string or a
log line, so printing one by mistake leaks nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from violet.secret_files import made_once

KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12  # what AES-GCM is specified for
SHOWN_CHARS = 4
LOCAL_FILE = "key-encryption-keys"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
# What an Anthropic key looks like in a person's words: its prefix, then a long token.
_LOOKS_LIKE_A_KEY = re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")


class KeyringError(Exception):
    """The key-encryption keys are missing, malformed, or cannot open a sealed key."""


class ApiKey:
    """An Anthropic key in memory; only `reveal()` gives its characters, for the call itself."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        value = value.strip()
        if not value:
            raise ValueError("An empty key is no key.")
        self._value = value

    def reveal(self) -> str:
        return self._value

    @property
    def ending(self) -> str:
        return self._value[-SHOWN_CHARS:]

    def fingerprint(self) -> str:
        """A digest that tells keys apart in memory (client pools), never stored or shown."""
        return hashlib.sha256(self._value.encode()).hexdigest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiKey) and secrets.compare_digest(self._value, other._value)

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __repr__(self) -> str:
        return f"ApiKey(…{self.ending})"

    __str__ = __repr__


def redact_keys(text: str) -> str:
    """`text` with anything that looks like an Anthropic key cut down to its last 4 characters."""
    return _LOOKS_LIKE_A_KEY.sub(lambda found: f"sk-ant-…{found.group()[-SHOWN_CHARS:]}", text)


def holds_a_key(text: str) -> bool:
    return _LOOKS_LIKE_A_KEY.search(text) is not None


@dataclass(frozen=True)
class Sealed:
    """A key as it is stored: which encryption key sealed it, the nonce, and the ciphertext
    (with its tag)."""

    kek_id: str
    nonce: bytes
    ciphertext: bytes


class Keyring:
    """The key-encryption keys by id; `current` seals, any of them opens."""

    def __init__(self, keys: list[tuple[str, bytes]]) -> None:
        self._load(keys)

    def _load(self, keys: list[tuple[str, bytes]]) -> None:
        if not keys:
            raise KeyringError("no key-encryption key is set")
        self._current = keys[0][0]
        self._keys = dict(keys)

    def _refresh(self) -> None:
        """Keys set in the deployment change only with a new deployment."""

    @property
    def current(self) -> str:
        self._refresh()
        return self._current

    @property
    def ids(self) -> list[str]:
        self._refresh()
        return list(self._keys)

    def seal(self, key: ApiKey, person: str) -> Sealed:
        self._refresh()
        nonce = os.urandom(NONCE_BYTES)
        cipher = AESGCM(self._keys[self._current])
        return Sealed(
            self._current, nonce, cipher.encrypt(nonce, key.reveal().encode(), _bound(person))
        )

    def open(self, sealed: Sealed, person: str) -> ApiKey:
        self._refresh()
        secret = self._keys.get(sealed.kek_id)
        if secret is None:
            raise KeyringError(f"the key-encryption key {sealed.kek_id!r} is not configured")
        try:
            plain = AESGCM(secret).decrypt(sealed.nonce, sealed.ciphertext, _bound(person))
        except InvalidTag:
            raise KeyringError("a sealed key did not open: altered, or not this person's") from None
        return ApiKey(plain.decode())

    def needs_rotation(self, sealed: Sealed) -> bool:
        return sealed.kek_id != self.current

    def add_key(self) -> str | None:
        """A new current key, where this keyring may make one (a local file); None where the
        deployment sets the keys (a new one is put first there, then the replicas restarted)."""
        return None


class LocalKeyring(Keyring):
    """Keys kept in a file of `VIOLET_HOME`, read again whenever the file changes: a key added
    by `violet keys rotate` is used by every service of the stack from their next call."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int, int] | None = None
        self._refresh()

    def _refresh(self) -> None:
        # Not the time alone: a coarse filesystem clock may give a rewritten file the same one.
        found = self._path.stat()
        stamp = (found.st_mtime_ns, found.st_ino, found.st_size)
        if stamp != self._seen:
            self._load(parse_entries(",".join(self._path.read_text().split())))
            self._seen = stamp

    def add_key(self) -> str:
        entry = new_entry()
        written = self._path.with_suffix(".new")
        descriptor = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(entry + "\n" + self._path.read_text())
        written.replace(self._path)  # whole or not at all: a reader never sees half a file
        self._refresh()
        return entry.partition(":")[0]


def _bound(person: str) -> bytes:
    return f"violet person key\0{person}".encode()


def parse_keyring(configured: str) -> Keyring:
    """`ID:BASE64,ID:BASE64,...`, each key 32 bytes; the first one is current."""
    return Keyring(parse_entries(configured))


def parse_entries(configured: str) -> list[tuple[str, bytes]]:
    keys: list[tuple[str, bytes]] = []
    for entry in filter(None, (part.strip() for part in configured.split(","))):
        kek_id, _, encoded = entry.partition(":")
        if not _ID.match(kek_id):
            raise KeyringError(
                "each key-encryption key is ID:BASE64, the id 1 to 32 letters, digits, - or _"
            )
        try:
            secret = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise KeyringError(f"the key-encryption key {kek_id!r} is not base64") from None
        if len(secret) != KEY_BYTES:
            raise KeyringError(f"the key-encryption key {kek_id!r} is not {KEY_BYTES} bytes")
        if kek_id in dict(keys):
            raise KeyringError(f"the key-encryption key id {kek_id!r} appears twice")
        keys.append((kek_id, secret))
    return keys


def new_entry(kek_id: str | None = None) -> str:
    """A fresh key-encryption key as one `ID:BASE64` entry."""
    kek_id = kek_id or f"k{secrets.token_hex(4)}"
    return f"{kek_id}:{base64.b64encode(os.urandom(KEY_BYTES)).decode()}"


def resolve_keyring(configured: str, home: Path) -> Keyring:
    """The configured keys, or the ones kept in `home` (the file made on first use)."""
    if configured:
        return parse_keyring(configured)
    path = home / LOCAL_FILE
    made_once(path, lambda: new_entry() + "\n")
    return LocalKeyring(path)
