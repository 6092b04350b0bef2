"""Two session replicas on PostgreSQL, each behind its own gateway: a device following through one
replica gets what the person says through the other, woken by LISTEN/NOTIFY and not by a poll
(replica A's safety-net poll is an hour, its sweep too, so only a wake-up can bring it); when A's
LISTEN connection is lost it polls until the connection is back, and then notifications carry
the messages again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually_blocking
from violet_cli.run import free_port

HOUR = "3600"
LISTENER_A = "violet-session-listen-replica-a"


@dataclass
class Replicas:
    a: Stack  # the whole stack, with session replica A
    b: Stack  # a second session and gateway on the same database and services


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    env = {
        "VIOLET_REPLICA": "replica-a",
        "VIOLET_IDLE_POLL_S": HOUR,
        "VIOLET_SWEEP_S": HOUR,
        "VIOLET_POLL_S": "0.5",
    }
    with running_stack(tmp_path_factory.mktemp("replica-a"), "postgres", env=env) as a:
        b = Stack(
            tmp_path_factory.mktemp("replica-b"),
            extra_env={**a.extra_env, "VIOLET_REPLICA": "replica-b"},
            ports={**a.ports, "session": free_port(), "gateway": free_port()},
            secret=a.secret,
        )
        b.start("session", "gateway")
        try:
            yield Replicas(a, b)
        finally:
            b.stop()


def listener_of_a(stack: Stack) -> int | None:
    """The backend of replica A's LISTEN connection, once it listens."""
    rows = stack.rows(
        "session",
        "SELECT pid FROM pg_stat_activity WHERE application_name = :name AND query LIKE 'LISTEN%'",
        name=LISTENER_A,
    )
    return rows[0].pid if rows else None


async def said_on_b_reaches_a(replicas: Replicas, token: str, following: Device) -> None:
    speaking, _ = await Device.open(replicas.b.live_url, token)
    text = f"Hello from elsewhere {uuid.uuid4().hex[:6]}"
    said = await speaking.say(text)
    await following.until(lambda f: f["type"] == "message" and f["text"] == text)
    await following.answer_to(said)
    await speaking.close()


async def test_a_message_said_on_another_replica_reaches_the_device_by_notification(
    replicas: Replicas,
) -> None:
    token = replicas.a.token("two-" + uuid.uuid4().hex[:6])
    eventually_blocking(lambda: listener_of_a(replicas.a), "replica A listening")
    following, _ = await Device.open(replicas.a.live_url, token)
    await said_on_b_reaches_a(replicas, token, following)
    await following.close()


async def test_a_lost_listen_connection_falls_back_to_polling_and_recovers(
    replicas: Replicas,
) -> None:
    token = replicas.a.token("lost-" + uuid.uuid4().hex[:6])
    lost = eventually_blocking(lambda: listener_of_a(replicas.a), "replica A listening")
    following, _ = await Device.open(replicas.a.live_url, token)

    replicas.a.rows("session", "SELECT pg_terminate_backend(:pid)", pid=lost)
    await said_on_b_reaches_a(replicas, token, following)

    eventually_blocking(
        lambda: (listener_of_a(replicas.a) or lost) != lost, "replica A listening again"
    )
    await said_on_b_reaches_a(replicas, token, following)
    await following.close()
