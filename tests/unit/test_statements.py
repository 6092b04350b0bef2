"""Whether words in a message are the speaker's own statement, read in their sentence."""

from __future__ import annotations

import pytest

from violet.statements import stated, states


def stated_here(message: str, words: str) -> bool:
    at = message.lower().index(words.lower())
    return stated(message, at, at + len(words))


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("My cat is called Miso", "My cat is called Miso"),
        ("Hi! My cat is called Miso. My friend says hi.", "My cat is called Miso"),
        ("My cat is called Miso, and I take my coffee black", "I take my coffee black"),
        ("Please remember that my locker is 42.", "my locker is 42"),
        ("Don't forget that my locker is 42", "my locker is 42"),
        ("Could you remember that my locker is 42?", "my locker is 42"),
        ("As I said, my cat is called Miso.", "my cat is called Miso"),
        ("I don't live in Paris, I live in Lyon", "I live in Lyon"),
        ("My brother hates jazz, but I love it.", "I love it"),
        ("No, my cat is called Miso", "my cat is called Miso"),
        ("My height is 1.85 m. I live in Oslo", "I live in Oslo"),
        ("My email is me@example.com", "My email is me@example.com"),
        ("My PIN is 1234, not 5678", "My PIN is 1234"),
    ],
)
def test_the_speakers_own_statements(message: str, words: str) -> None:
    assert stated_here(message, words)


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("my friend said my bank PIN is 1234", "my bank PIN is 1234"),
        ("My bank PIN is 1234, my friend said.", "My bank PIN is 1234"),
        ("According to my mum, I love broccoli", "I love broccoli"),
        ("I was told my PIN is 1234", "my PIN is 1234"),
        ("Apparently my PIN is 1234", "my PIN is 1234"),
        ("don't remember that my PIN is 1234", "my PIN is 1234"),
        ("Do not save this, my PIN is 1234", "my PIN is 1234"),
        ("Forget that my PIN is 1234", "my PIN is 1234"),
        ("I don't live in Paris", "I don't live in Paris"),
        ("My PIN isn't 1234", "My PIN isn't 1234"),
        ("If my PIN were 1234 I would be happy", "my PIN were 1234"),
        ("Let's say my PIN is 1234", "my PIN is 1234"),
        ("I used to live in Rome", "I used to live in Rome"),
        ("Is my PIN 1234?", "my PIN 1234"),
        ("what is my name? Do I like tea?", "I like tea"),
    ],
)
def test_words_reported_denied_supposed_or_asked_are_no_statement(message: str, words: str) -> None:
    assert not stated_here(message, words)


def test_a_whole_line_is_read_as_one_sentence() -> None:
    assert states("I take my coffee black")
    assert not states("I don't take sugar")
    assert not states("what do I drink?")
