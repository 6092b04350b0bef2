"""`python -m session` serves the main session; `python -m session migrate` only migrates;
`python -m session retain` runs the retention pass over everyone now."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator
from datetime import timedelta

import grpc

from session.accounts import AccountRules, Accounts
from session.accounts_service import AccountsService, OperatorService
from session.actions import MainActions, WorkStarter
from session.activity import Activity
from session.archive import Archive
from session.capture.owed import Bounds, OwedCaptures
from session.capture.sender import CaptureSender
from session.devices import Devices
from session.erasure import Erasure, Standing
from session.feed import Feed, listener_conninfo
from session.fold import Fold
from session.key_check import key_check
from session.memory_client import MemoryClient
from session.notify.notifier import Notifier
from session.notify.outbox import Outbox
from session.notify.presence import Presence
from session.notify.service import NotificationsService
from session.notify.subscriptions import Subscriptions
from session.person_service import YourDataService
from session.reminders.firing import Firing
from session.reminders.page import ReminderPage
from session.retention import Keeping, Retention
from session.runner import Delivery, Replica, TurnRunner
from session.service import SessionService
from session.settings import SessionSettings
from session.store import ConversationStore
from session.turn import MainSession
from session.turn_context import person_language
from session.turn_lock import turn_lock
from session.window import Window
from violet import database
from violet.channels import peers_of
from violet.clock import Clock, utc_now
from violet.identity import resolve_operator_secret, resolve_secret
from violet.keyring import resolve_keyring
from violet.language import ENGLISH
from violet.models.factory import personal_model_client
from violet.models.usage import UsageBatches
from violet.push import WebPusher, resolve_vapid
from violet.server import Command, Hosted, run, start
from violet.tasks import cancel_all
from violet.v1 import (
    accounts_pb2,
    accounts_pb2_grpc,
    notifications_pb2,
    notifications_pb2_grpc,
    persons_pb2,
    persons_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)

NAME = "session"
# The services the session calls.
PEERS = ("memory", "router", "worker")


def migrate(settings: SessionSettings) -> None:
    database.migrate_service(settings, NAME)


@contextlib.asynccontextmanager
async def resources(settings: SessionSettings) -> AsyncIterator[Hosted]:
    url = database.service_url(settings, NAME)
    db = database.service_database(settings, NAME)
    replica = replica_of(settings)
    # PostgreSQL: other replicas' appends wake this one's streams once LISTEN is made.
    feed = Feed(settings.poll_s, settings.idle_poll_s, notified=not database.is_postgres(url))
    clock = person_clock(settings)
    store = ConversationStore.open(db, notify=database.is_postgres(url), person_clock=clock)
    secret = resolve_secret(settings.secret, settings.home)
    usage = UsageBatches(lambda person, rows: accounts.record_usage(person, rows))
    standing = Standing(db, secret)
    accounts = Accounts(
        db,
        resolve_keyring(settings.key_encryption_keys, settings.home),
        account_rules(settings),
        key_check(settings, usage),
        standing,
        quiet_s=settings.key_cache_s,
    )
    model = personal_model_client(settings, accounts, usage)
    window = Window(settings.window)
    peers = peers_of(settings, NAME, PEERS)
    memory = MemoryClient(
        peers, settings.recall_timeout_s, settings.recall_wait_s, model.known_credential
    )
    actions = MainActions(store.pins, store.effects, peers, store.reminders)
    activity = Activity(store.transcript, feed)
    main = MainSession(
        model,
        store.pins,
        memory,
        actions,
        window,
        activity,
        accounts,
        zone=settings.timezone,
        clock=clock,
    )
    lock = turn_lock(db, replica, settings.lock_lease_s)
    outbox = Outbox(db, settings.push_group_s)
    captures = CaptureSender(
        OwedCaptures(db, replica, settings.lock_lease_s),
        memory,
        secret,
        Bounds(settings.captures_owed_per_person, settings.captures_owed_at_most),
    )
    runner = TurnRunner(
        store,
        main,
        Fold(model, store, window, replica),
        Delivery(feed, captures, outbox),
        Replica(replica, secret, lock),
        backlog=settings.turn_backlog,
    )
    firing = Firing(store.reminders, runner, store.pins, WorkStarter(peers), secret)
    presence = Presence(db)
    devices = Devices(db)
    service = SessionService(
        store, runner, feed, activity, memory, secret, standing, devices, presence
    )
    archive = Archive(db, peers, secret)
    erasure = Erasure(
        db,
        peers,
        feed,
        # A holder of its own: the removal waits for this replica's turns of the person too.
        turn_lock(db, f"{replica}/removal", settings.lock_lease_s),
        secret,
        replica,
        settings.lock_lease_s,
        captures.settled,
    )

    async def language_of(person: str) -> str:
        conversation = await store.conversations.found(person)
        if conversation is None:
            return ENGLISH
        newest = await store.conversations.last_seq(conversation)
        return person_language(await store.transcript.since(conversation.id, newest - 10))

    retention = Retention(
        db, peers, secret, keeping(settings), standing, replica, settings.lock_lease_s
    )
    vapid = resolve_vapid(settings.vapid_private_key, settings.home)
    pusher = WebPusher(vapid, settings.vapid_subject, settings.fetch_block_private)
    subscriptions = Subscriptions(db)
    notifier = Notifier(
        db, outbox, subscriptions, presence, {pusher.kind: pusher}, language_of, replica
    )
    faces = (
        AccountsService(accounts, secret, language_of, standing),
        OperatorService(
            accounts,
            resolve_operator_secret(settings.operator_secret, settings.home),
            archive,
            erasure,
            devices,
            feed,
        ),
        YourDataService(
            archive,
            erasure,
            standing,
            secret,
            devices,
            feed,
            ReminderPage(store.reminders, store.conversations, settings.timezone),
        ),
        NotificationsService(
            subscriptions, vapid.public_key_b64, secret, standing, settings.fetch_block_private
        ),
    )
    background = [
        asyncio.create_task(runner.sweep_forever(settings.sweep_s)),
        asyncio.create_task(captures.sweep_forever(settings.capture_sweep_s)),
        asyncio.create_task(erasure.sweep_forever(settings.sweep_s)),
        asyncio.create_task(retention.daily_forever()),
        asyncio.create_task(usage.flush_forever()),
        asyncio.create_task(notifier.forever(settings.push_group_s)),
        asyncio.create_task(firing.forever(settings.reminder_poll_s)),
    ]
    if database.is_postgres(url):
        listening = feed.listen_postgres(listener_conninfo(url, replica))
        background.append(asyncio.create_task(listening))

    def register(server: grpc.aio.Server) -> list[str]:
        session_pb2_grpc.add_SessionServicer_to_server(service, server)
        accounts_pb2_grpc.add_AccountsServicer_to_server(faces[0], server)
        accounts_pb2_grpc.add_OperatorServicer_to_server(faces[1], server)
        persons_pb2_grpc.add_YourDataServicer_to_server(faces[2], server)
        notifications_pb2_grpc.add_NotificationsServicer_to_server(faces[3], server)
        return [
            session_pb2.DESCRIPTOR.services_by_name["Session"].full_name,
            *(service.full_name for service in accounts_pb2.DESCRIPTOR.services_by_name.values()),
            persons_pb2.DESCRIPTOR.services_by_name["YourData"].full_name,
            notifications_pb2.DESCRIPTOR.services_by_name["Notifications"].full_name,
        ]

    try:
        yield Hosted(register, on_drain=feed.close)
    finally:
        await cancel_all(background)
        await runner.stop(settings.drain_s)
        await captures.stop(settings.drain_s)
        await peers.close()
        await model.aclose()
        await pusher.aclose()
        await usage.aclose()
        await db.dispose()


def account_rules(settings: SessionSettings) -> AccountRules:
    return AccountRules(
        operator_key=bool(settings.anthropic_api_key),
        operator_shared=settings.operator_key_shared,
        day_usd=settings.budget_day_usd,
        month_usd=settings.budget_month_usd,
        warn_share=settings.budget_warn_share,
        people_bring_keys=settings.people_bring_keys,
    )


def person_clock(settings: SessionSettings) -> Clock:
    """The clock of what is said to and for the person: the machine's, unless a test moves it
    ahead (`VIOLET_CLOCK_AHEAD_S`)."""
    if not settings.clock_ahead_s:
        return utc_now
    ahead = timedelta(seconds=settings.clock_ahead_s)
    return lambda: utc_now() + ahead


def replica_of(settings: SessionSettings) -> str:
    return settings.replica or f"{socket.gethostname()}-{os.getpid()}"


def keeping(settings: SessionSettings) -> Keeping:
    return Keeping(settings.keep_transcript_days, settings.keep_work_days)


async def retain(settings: SessionSettings) -> int:
    db = database.service_database(settings, NAME)
    secret = resolve_secret(settings.secret, settings.home)
    peers = peers_of(settings, NAME, PEERS)
    replica = replica_of(settings)
    retention = Retention(
        db, peers, secret, keeping(settings), Standing(db, secret), replica, settings.lock_lease_s
    )
    try:
        report = await retention.run()
    finally:
        await peers.close()
        await db.dispose()
    print(json.dumps(vars(report)))
    return 1 if report.failed else 0


def retain_everyone(args: argparse.Namespace) -> int:
    return asyncio.run(retain(start(NAME, SessionSettings, migrate)))


RETAIN = Command(
    "retain",
    "run the retention pass over everyone now (VIOLET_KEEP_TRANSCRIPT_DAYS, VIOLET_KEEP_WORK_DAYS)",
    retain_everyone,
)


def main() -> None:
    run(NAME, SessionSettings, resources, migrate, [RETAIN])


if __name__ == "__main__":
    main()
