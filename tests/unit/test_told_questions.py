"""Questions about what Violet told, told apart from questions about the person
(`violet.told`), on phrasings other than those the rules were first written from."""

from __future__ import annotations

import pytest

from violet.told import about_the_person, asks_what_was_told, may_recall_told

ABOUT_WHAT_WAS_TOLD = [
    "Remind me what the weather site said for Saturday",
    "What was the name of that café you recommended?",
    "How much did you say the tickets cost?",
    "what were the opening hours you found for the pool?",
    "Can you repeat what you told me about the bus strike?",
    "the recipe you sent me — how many eggs again?",
    "Which hotel did you pick for us?",
    "What did that article say about the new law?",
    "what number did you get for the mortgage?",
    "Where is the packing list you made?",
    "What was the link you gave me for the concert?",
    "Tell me again what you found out about the museum",
    "What did the search turn up about cheap flights?",
    "Which trail did you suggest for Sunday's hike?",
    "what did you come up with for dinner ideas?",
    "When did you say the library closes?",
    "What was on that website about vaccines?",
    "What's the total you worked out for the party?",
    "¿Qué restaurante me recomendaste?",
    "Was stand auf der Seite über die Gezeiten?",
]
ABOUT_THE_PERSON = [
    "What is my password?",
    "Where do I work?",
    "Who is my dentist?",
    "When is my mum's birthday?",
    "What did I say my PIN was?",
    "What do I usually order?",
    "Quel est mon mot de passe ?",
    "Wo wohne ich?",
    "Onde eu moro?",
    "¿Dónde vivo?",
]


@pytest.mark.parametrize("question", ABOUT_WHAT_WAS_TOLD)
def test_a_question_about_what_violet_told_gets_told_records(question: str) -> None:
    assert asks_what_was_told(question)
    assert may_recall_told(question)
    assert not about_the_person(question)


@pytest.mark.parametrize("question", ABOUT_THE_PERSON)
def test_a_question_about_the_person_never_gets_told_records(question: str) -> None:
    assert not may_recall_told(question)


def test_other_questions_get_them_beside_the_items_in_english_alone() -> None:
    assert may_recall_told("when does the museum open?")
    assert not may_recall_told("¿cuándo abre el museo?")
    assert not may_recall_told("thanks, that's lovely")
