"""The web page's words in every language Violet speaks: one file a language, each with every
word of the English one, the same blanks, and a form for every plural the language has; and
every word the page shows is in them."""

from __future__ import annotations

import json
import re

import pytest
from babel import Locale

from gateway.app import PAGE_DIR, PAGE_FILES
from violet.language import LANGUAGES

WORDS_DIR = PAGE_DIR / "words"
BLANK = re.compile(r"\{(\w+)\}")
# Words that may read the same as the English in a language (names, units, loanwords).
MAY_BE_ENGLISH = frozenset({"nav.chat", "documents.kb", "memory.origin", "devices.browserOn"})


def words_of(language: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((WORDS_DIR / f"{language}.json").read_text("utf-8"))
    return loaded


ENGLISH = words_of("en")


def forms(value: object) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [str(value)]


def blanks(value: object) -> set[str]:
    return {name for form in forms(value) for name in BLANK.findall(form)}


def test_there_is_a_file_for_each_language_and_no_other() -> None:
    assert {path.stem for path in WORDS_DIR.glob("*.json")} == set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_language_has_every_word_with_the_same_blanks(language: str) -> None:
    words = words_of(language)
    assert set(words) == set(ENGLISH)
    for key, english in ENGLISH.items():
        said = words[key]
        assert isinstance(said, dict) == isinstance(english, dict), key
        assert blanks(said) == blanks(english), (language, key)
        assert all(form.strip() for form in forms(said)), (language, key)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_counted_word_has_a_form_for_every_plural_of_its_language(language: str) -> None:
    locale = Locale.parse(language)
    needed = {locale.plural_form(count) for count in range(0, 2000)} | {"other"}
    for key, said in words_of(language).items():
        if isinstance(said, dict):
            assert needed <= set(said), (language, key, needed - set(said))
            assert set(said) <= {"zero", "one", "two", "few", "many", "other"}, (language, key)


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_a_language_says_its_words_in_its_own_words(language: str) -> None:
    words = words_of(language)
    same = [k for k in ENGLISH if k not in MAY_BE_ENGLISH and words[k] == ENGLISH[k]]
    assert same == [], language


def test_every_word_the_page_shows_is_in_the_words_and_every_word_is_shown() -> None:
    page = (PAGE_DIR / "index.html").read_text("utf-8")
    script = (PAGE_DIR / "app.js").read_text("utf-8")
    in_page = set(re.findall(r'data-words(?:-[a-z]+)?="([\w.]+)"', page))
    # A call's key is the first whole key quoted on its line; some are chosen between two.
    called = set(re.findall(r'\b(?:words|fill)\([^"\n]*?"([\w.]+)"', script))
    quoted = set(re.findall(r'"([\w.]+)"', script)) & set(ENGLISH)
    assert in_page and called
    assert (in_page | called) - set(ENGLISH) == set()
    assert set(ENGLISH) - (in_page | quoted) == set()
    # No sentence is left in the page itself: each element's words come from the files.
    left = re.findall(r">\s*([A-Z][a-z]+(?:\s+[a-z']+)+)", page)
    assert left == []


def test_right_to_left_languages_are_known_to_the_page() -> None:
    script = (PAGE_DIR / "app.js").read_text("utf-8")
    listed = re.search(r"const LANGUAGES = \[(.*?)\];", script, re.S)
    assert listed is not None
    assert re.findall(r'"(\w+)"', listed[1]) == list(LANGUAGES)
    assert 'RIGHT_TO_LEFT = new Set(["ar"])' in script


def test_the_files_are_served_and_kept_for_offline() -> None:
    for language in LANGUAGES:
        name, kind = PAGE_FILES[f"/words/{language}.json"]
        assert (PAGE_DIR / name).is_file() and kind.startswith("application/json")
