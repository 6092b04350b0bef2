"""The gRPC faces of people's accounts: `Accounts` for the person's own calls (their devices,
through the gateway, and the services making model calls for them) and `Operator` for the
operator's commands, behind a token only the operator secret can make."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date

import grpc

from session.account_phrases import not_kept_phrase, state_phrase
from session.accounts import Accounts, AccountView, KeyNotKept
from session.archive import Archive
from session.devices import Devices
from session.erasure import Erasure, Standing
from session.feed import Feed
from session.person_service import (
    archive_chunks,
    devices_reply,
    may_serve,
    remove,
    signed_out,
)
from violet.accounts_client import credential_reply, usage_row_message, usage_row_of
from violet.clock import utc_now
from violet.identity import acting_for, authenticate, authenticate_operator
from violet.keyring import ApiKey
from violet.v1 import accounts_pb2, accounts_pb2_grpc, persons_pb2

MAX_KEY_CHARS = 500
LanguageOf = Callable[[str], Awaitable[str]]


def reply_of(
    view: AccountView, language: str, refused: str = "", *, own_keys: str
) -> accounts_pb2.AccountReply:
    return accounts_pb2.AccountReply(
        key=view.key,
        ending=view.ending,
        month_usd=round(view.month_usd, 6),
        text=state_phrase(view.key, view.ending, view.month_usd, language),
        refused=refused,
        own_keys=own_keys,
    )


async def _key_of(text: str, context: grpc.aio.ServicerContext) -> ApiKey:
    if not text.strip() or len(text) > MAX_KEY_CHARS or any(c.isspace() for c in text.strip()):
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a key is one word of characters")
    return ApiKey(text)


async def _set(
    accounts: Accounts, person: str, key: ApiKey, language: str
) -> accounts_pb2.AccountReply:
    try:
        view = await accounts.set_key(person, key)
    except KeyNotKept as not_kept:
        refused = not_kept_phrase(not_kept.reason, language)
        view = await accounts.view(person)
        return reply_of(view, language, refused, own_keys=accounts.own_keys)
    return reply_of(view, language, own_keys=accounts.own_keys)


class AccountsService(accounts_pb2_grpc.AccountsServicer):
    def __init__(
        self, accounts: Accounts, secret: str, language_of: LanguageOf, standing: Standing
    ) -> None:
        """Each call is for a person who may still be served (`standing`): nothing of theirs
        is read or written while they are being removed, or after."""
        self._accounts = accounts
        self._secret = secret
        self._language_of = language_of
        self._standing = standing

    async def _served(self, context: grpc.aio.ServicerContext) -> str:
        """The person the call is for, once they may be served."""
        identity = await authenticate(context, self._secret)
        await may_serve(self._standing, identity.person, context)
        return identity.person

    async def Credential(
        self,
        request: accounts_pb2.CredentialRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.CredentialReply:
        person = await self._served(context)
        paying, pseudonym = await self._accounts.sealed_with_pseudonym(person)
        return credential_reply(
            paying.payer, paying.hold, paying.sealed, pseudonym, budgeted=paying.budgeted
        )

    async def RecordUsage(
        self,
        request: accounts_pb2.RecordUsageRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.RecordUsageReply:
        identity = await authenticate(context, self._secret)
        try:
            rows = [usage_row_of(row) for row in request.rows]
        except ValueError:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a usage row's day is YYYY-MM-DD")
        await self._accounts.record_usage(identity.person, rows)
        return accounts_pb2.RecordUsageReply()

    async def ReportKeyRefused(
        self,
        request: accounts_pb2.KeyRefusedRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        person = await self._served(context)
        await self._accounts.report_refused(person, request.ending, request.reason)
        return await self._show(person)

    async def Show(
        self,
        request: accounts_pb2.ShowRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        return await self._show(await self._served(context))

    async def SetKey(
        self,
        request: accounts_pb2.SetKeyRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        person = await self._served(context)
        if self._accounts.own_keys == "off":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "people bring no keys here")
        language = await self._language_of(person)
        if not request.key.strip():
            view = await self._accounts.view(person)
            refused = not_kept_phrase("empty", language)
            return reply_of(view, language, refused, own_keys=self._accounts.own_keys)
        key = await _key_of(request.key, context)
        return await _set(self._accounts, person, key, language)

    async def RemoveKey(
        self,
        request: accounts_pb2.RemoveKeyRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        person = await self._served(context)
        view = await self._accounts.remove_key(person)
        return reply_of(view, await self._language_of(person), own_keys=self._accounts.own_keys)

    async def _show(self, person: str) -> accounts_pb2.AccountReply:
        view = await self._accounts.view(person)
        language = await self._language_of(person)
        return reply_of(view, language, own_keys=self._accounts.own_keys)


class OperatorService(accounts_pb2_grpc.OperatorServicer):
    def __init__(
        self,
        accounts: Accounts,
        operator_secret: str,
        archive: Archive,
        erasure: Erasure,
        devices: Devices,
        feed: Feed,
    ) -> None:
        self._accounts = accounts
        self._operator_secret = operator_secret
        self._archive = archive
        self._erasure = erasure
        self._devices = devices
        self._feed = feed

    async def SetPersonKey(
        self,
        request: accounts_pb2.PersonKeyRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        person = await self._person(request.person, context)
        key = await _key_of(request.key, context)
        with acting_for(person):
            return await _set(self._accounts, person, key, "en")

    async def RemovePersonKey(
        self,
        request: accounts_pb2.PersonRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.AccountReply:
        person = await self._person(request.person, context)
        with acting_for(person):
            view = await self._accounts.remove_key(person)
            return reply_of(view, "en", own_keys=self._accounts.own_keys)

    async def SetBudget(
        self,
        request: accounts_pb2.BudgetRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.BudgetReply:
        person = await self._person(request.person, context)
        with acting_for(person):
            day, month = await self._accounts.set_budget(person, request.day_usd, request.month_usd)
        return accounts_pb2.BudgetReply(day_usd=day, month_usd=month)

    async def Usage(
        self,
        request: accounts_pb2.UsageRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.UsageReply:
        await authenticate_operator(context, self._operator_secret)
        try:
            since = date.fromisoformat(request.since) if request.since else None
        except ValueError:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "since is a date, YYYY-MM-DD")
        since = since or utc_now().date().replace(day=1)
        found = await self._accounts.usage(request.person or None, since)
        return accounts_pb2.UsageReply(
            rows=[accounts_pb2.PersonUsage(person=p, row=usage_row_message(r)) for p, r in found]
        )

    async def RotateKeys(
        self,
        request: accounts_pb2.RotateKeysRequest,
        context: grpc.aio.ServicerContext,
    ) -> accounts_pb2.RotateKeysReply:
        await authenticate_operator(context, self._operator_secret)
        rotated, skipped = await self._accounts.rotate()
        return accounts_pb2.RotateKeysReply(
            rotated=rotated, skipped=skipped, current=self._accounts.current_kek
        )

    async def ExportPerson(
        self,
        request: accounts_pb2.PersonRequest,
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[persons_pb2.ArchiveChunk]:
        person = await self._person(request.person, context)
        async for chunk in archive_chunks(self._archive, person, context):
            yield chunk

    async def DeletePerson(
        self,
        request: accounts_pb2.PersonRequest,
        context: grpc.aio.ServicerContext,
    ) -> persons_pb2.DeleteReply:
        person = await self._person(request.person, context)
        return await remove(self._erasure, person, "operator", context)

    async def PersonDevices(
        self,
        request: accounts_pb2.PersonRequest,
        context: grpc.aio.ServicerContext,
    ) -> persons_pb2.DevicesReply:
        person = await self._person(request.person, context)
        return devices_reply(await self._devices.listed(person))

    async def SignOutPerson(
        self,
        request: accounts_pb2.PersonSignOutRequest,
        context: grpc.aio.ServicerContext,
    ) -> persons_pb2.DevicesReply:
        person = await self._person(request.person, context)
        if not request.all and not request.device:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "name the device, or all")
        handle = None if request.all else request.device
        await signed_out(self._devices, self._feed, person, handle, context)
        return devices_reply(await self._devices.listed(person))

    async def _person(self, person: str, context: grpc.aio.ServicerContext) -> str:
        await authenticate_operator(context, self._operator_secret)
        if not person.strip():
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "name the person")
        return person
