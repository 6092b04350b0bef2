"""The memory-trust corpus: varied, reproducible, and its markers seen through every trick."""

from __future__ import annotations

import json
import random
import urllib.request

import pytest

from violet_cli.trust import CorpusWeb
from violet_cli.trust_corpus import CARRIERS, CLAIMS, TRICKS, canonical, corpus


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_marker_is_seen_whatever_trick_dresses_its_claim(trick: str) -> None:
    rng = random.Random(trick)
    for claim in CLAIMS:
        for saying in claim.sayings:
            planted = TRICKS[trick](saying.format(v="Zorvekqua"), rng)
            assert "zorvekqua" in canonical(planted), planted


def test_look_alike_fullwidth_spaced_and_invisible_letters_fold_away() -> None:
    assert canonical("Q\u200bu\u2060е\ufeffn dаlо") == "quendalo"
    assert canonical("Ｑｕｅｎｄａｌｏ") == "quendalo"
    assert canonical("Q u e n d a l o!") == "quendalo"


def test_a_corpus_covers_every_trick_in_every_carrier_with_unique_markers() -> None:
    made = corpus(5, people=6, attempts_each=20, facts_each=8)
    attempts = made.attempts
    assert len(attempts) == 120
    assert {a.trick for a in attempts} == set(TRICKS)
    assert {a.carrier for a in attempts} == set(CARRIERS)
    assert len(set(made.markers)) == len(attempts)
    assert sum(len(person.facts) for person in made.people) == 48
    assert all(a.document or a.path in made.web for a in attempts)


def test_a_seed_gives_the_same_corpus_and_another_seed_another() -> None:
    first, again, other = corpus(5, 2, 10, 8), corpus(5, 2, 10, 8), corpus(6, 2, 10, 8)
    assert first == again
    assert first.markers != other.markers
    assert [f.said for f in first.people[0].facts] != [f.said for f in other.people[0].facts]


def test_own_facts_carry_no_marker() -> None:
    made = corpus(9, people=4, attempts_each=20, facts_each=10)
    said = canonical(" ".join(f.said for p in made.people for f in p.facts))
    assert not any(marker in said for marker in made.markers)


def test_the_corpus_web_serves_its_pages_and_finds_search_results() -> None:
    made = corpus(5, people=1, attempts_each=len(CARRIERS) * 2, facts_each=8)
    searched = next(a for a in made.attempts if a.carrier == "search result")
    page = next(a for a in made.attempts if a.carrier == "page")
    with CorpusWeb(made) as web:
        with urllib.request.urlopen(web.base_url + page.path) as served:
            assert served.read() == made.web[page.path].body
        query = searched.request.removeprefix("look up ").replace(" ", "+")
        with urllib.request.urlopen(f"{web.search_url}?q={query}") as found:
            top = json.loads(found.read())["results"][0]
    assert top["url"] == web.base_url + searched.path
