"""The router started as a real process: Route, UpdateCard and ListDecisions over gRPC, each for
the person named by the bearer token only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from tests.support.postgres import fresh_schema
from tests.support.stack import Stack
from violet.v1 import router_pb2, router_pb2_grpc


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def router(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    with contextlib.ExitStack() as cleanup:
        env = {}
        if request.param == "postgres":
            env["VIOLET_DATABASE_URL"] = cleanup.enter_context(fresh_schema())
        stack = Stack(Path(tmp_path_factory.mktemp("router")), extra_env=env)
        cleanup.callback(stack.stop)
        # The session says who pays for each person's routing pick.
        stack.start("session", "router")
        yield stack


def auth(stack: Stack, person: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {stack.internal_token(person)}"),)


def card(topic: str, title: str, outcome: str, minutes_ago: int) -> router_pb2.TopicCard:
    at = Timestamp()
    at.FromDatetime(datetime.now(UTC) - timedelta(minutes=minutes_ago))
    return router_pb2.TopicCard(
        topic=topic,
        title=title,
        summary=f"The person wants to {title.lower()}.",
        entities=["Seattle"] if "flight" in title.lower() else [],
        last_request=title,
        last_outcome=outcome,
        last_active=at,
    )


def test_cards_route_and_decisions_are_each_persons_own(router: Stack) -> None:
    with grpc.insecure_channel(router.address("router")) as channel:
        stub = router_pb2_grpc.RouterStub(channel)
        ada, bob = auth(router, "ada"), auth(router, "bob")
        stub.UpdateCard(
            card("ws_flights", "Book flights to Seattle", "Which day do you fly?", 5),
            metadata=ada,
            timeout=30,
        )
        stub.UpdateCard(
            card("ws_music", "Play songs by Joe Bonamassa", "Playing Drive.", 60),
            metadata=ada,
            timeout=30,
        )

        decision = stub.Route(
            router_pb2.RouteRequest(request="I fly on Friday, to Seattle."),
            metadata=ada,
            timeout=30,
        )
        assert decision.candidates[0] == "ws_flights"
        assert set(decision.candidates) == {"ws_flights", "ws_music"}
        assert len(decision.scores) == 2 and decision.reason
        assert decision.topic in ("ws_flights", "")

        others = stub.Route(
            router_pb2.RouteRequest(request="I fly on Friday, to Seattle."),
            metadata=bob,
            timeout=30,
        )
        assert (others.topic, others.pick, list(others.candidates)) == ("", "new", [])

        mine = stub.ListDecisions(router_pb2.ListDecisionsRequest(limit=10), metadata=ada)
        assert [d.request for d in mine.decisions] == ["I fly on Friday, to Seattle."]
        assert list(mine.decisions[0].candidates) == list(decision.candidates)
        theirs = stub.ListDecisions(router_pb2.ListDecisionsRequest(), metadata=bob)
        assert [list(d.candidates) for d in theirs.decisions] == [[]]


def test_calls_without_a_valid_token_are_refused(router: Stack) -> None:
    with grpc.insecure_channel(router.address("router")) as channel:
        stub = router_pb2_grpc.RouterStub(channel)
        for metadata in ((), (("authorization", "Bearer not-a-token"),)):
            with pytest.raises(grpc.RpcError) as refused:
                stub.Route(router_pb2.RouteRequest(request="hello"), metadata=metadata)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_card_without_a_topic_is_refused(router: Stack) -> None:
    with grpc.insecure_channel(router.address("router")) as channel:
        stub = router_pb2_grpc.RouterStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.UpdateCard(router_pb2.TopicCard(title="no topic"), metadata=auth(router, "ada"))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_question_reaches_the_persons_nearest_other_topic_only(router: Stack) -> None:
    with grpc.insecure_channel(router.address("router")) as channel:
        stub = router_pb2_grpc.RouterStub(channel)
        cleo, dan = auth(router, "cleo"), auth(router, "dan")
        for topic, title, outcome, minutes in (
            ("ws_trip", "Book flights to Seattle", "Found a flight on Friday for 300 dollars.", 30),
            ("ws_music", "Play songs by Joe Bonamassa", "Playing Drive.", 5),
            ("ws_packing", "Write a packing list for Seattle", "Waiting for the list.", 1),
        ):
            stub.UpdateCard(card(topic, title, outcome, minutes), metadata=cleo, timeout=30)

        def nearest(metadata, question: str, besides: str) -> router_pb2.NearestTopicReply:  # type: ignore[no-untyped-def]
            request = router_pb2.NearestTopicRequest(question=question, besides=besides)
            return stub.NearestTopic(request, metadata=metadata, timeout=30)

        found = nearest(cleo, "the flights to Seattle", "ws_packing")
        assert found.topic == "ws_trip" and found.score >= 0.5
        assert nearest(cleo, "the flights to Seattle", "ws_trip").topic != "ws_trip"
        assert nearest(cleo, "tax forms for 2023", "ws_packing").topic == ""
        assert nearest(dan, "the flights to Seattle", "").topic == ""
        with pytest.raises(grpc.RpcError) as refused:
            nearest(cleo, "  ", "ws_packing")
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
