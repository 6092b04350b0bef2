"""The session service's `Accounts`, as the other services reach it: who pays for a person's
calls (their key arriving sealed, opened here with the key-encryption keys), a key refused, and
the usage of calls made here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, fields
from datetime import date

import grpc

from violet.channels import Peers, peers_of
from violet.identity import ACCOUNT_DELETED, resolve_secret, service_identity
from violet.keyring import ApiKey, Keyring, KeyringError, Sealed, resolve_keyring
from violet.models.credentials import Credential, Hold, Payer
from violet.models.errors import ModelUnavailable, PersonGone
from violet.models.factory import personal_model_client
from violet.models.personal import PersonalModelClient
from violet.models.usage import UsageBatches, UsageRow
from violet.settings import CommonSettings
from violet.tasks import cancel_all
from violet.v1 import accounts_pb2, accounts_pb2_grpc

log = logging.getLogger(__name__)

# How a call ends that reached a session as it stopped. Our own cancellations end a call with
# asyncio's CancelledError instead, never with this status.
SESSION_WENT_AWAY = frozenset({grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE})


def credential_reply(
    payer: Payer, hold: Hold, sealed: Sealed | None, pseudonym: str, budgeted: bool = False
) -> accounts_pb2.CredentialReply:
    """Who pays for a person's calls, as the session hands it to another service."""
    reply = accounts_pb2.CredentialReply(
        payer=payer.value, hold=hold.value, pseudonym=pseudonym, budgeted=budgeted
    )
    if sealed is not None:
        reply.key.CopyFrom(
            accounts_pb2.SealedKey(
                kek_id=sealed.kek_id, nonce=sealed.nonce, ciphertext=sealed.ciphertext
            )
        )
    return reply


def usage_row_message(row: UsageRow) -> accounts_pb2.UsageRow:
    return accounts_pb2.UsageRow(**{**asdict(row), "day": row.day.isoformat()})


def usage_row_of(message: accounts_pb2.UsageRow) -> UsageRow:
    """Raises ValueError for a day that is not YYYY-MM-DD."""
    kept = {field.name: getattr(message, field.name) for field in fields(UsageRow)}
    return UsageRow(**{**kept, "day": date.fromisoformat(message.day)})


# Whom a service's model client calls: the session's Accounts (who pays, and the usage).
REMOTE_MODEL_PEERS = ("session",)


def is_person_gone(error: grpc.aio.AioRpcError) -> bool:
    """Whether the session refused a call because its person was deleted (or is being)."""
    return error.code() == grpc.StatusCode.UNAUTHENTICATED and (error.details() or "").startswith(
        ACCOUNT_DELETED
    )


class RemoteAccounts:
    def __init__(self, peers: Peers, secret: str, keyring: Keyring) -> None:
        self._peers = peers
        self._secret = secret
        self._keyring = keyring

    def _stub(self) -> accounts_pb2_grpc.AccountsAsyncStub:
        return self._peers.stub("session", accounts_pb2_grpc.AccountsStub)

    def _as(self, person: str) -> tuple[tuple[str, str], ...]:
        return service_identity(person, self._secret).metadata()

    async def credential(self, person: str) -> Credential:
        """Raises `ModelUnavailable` when it cannot be learned: the call then fails as any
        call the API could not take, and is handled (and retried) as one."""
        try:
            reply = await self._credential_reply(person)
        except grpc.aio.AioRpcError as error:
            if is_person_gone(error):
                raise PersonGone("the person was deleted; no call is made for them") from None
            raise ModelUnavailable(
                f"who pays for the call could not be learned ({error.code().name})"
            ) from None
        return self.opened(person, reply)

    def opened(self, person: str, reply: accounts_pb2.CredentialReply) -> Credential:
        """The credential the session sent, its key opened. Raises `ModelUnavailable` for a
        key that does not open, or a payer or hold this service does not know."""
        sealed = key = None
        if reply.HasField("key"):
            sealed = Sealed(reply.key.kek_id, reply.key.nonce, reply.key.ciphertext)
            try:
                key = self._keyring.open(sealed, person)
            except KeyringError as error:
                raise ModelUnavailable(f"the person's key could not be opened: {error}") from None
        try:
            payer, hold = Payer(reply.payer), Hold(reply.hold)
            return Credential(payer, hold, key, reply.pseudonym, sealed, reply.budgeted)
        except ValueError as error:
            raise ModelUnavailable(f"who pays for the call is not understood: {error}") from None

    async def _credential_reply(self, person: str) -> accounts_pb2.CredentialReply:
        """Asked a second time when the session went away as it was asked: a session that
        stops ends the calls it had not begun with CANCELLED (grpc/grpc#41785), or they find
        it gone (UNAVAILABLE). The question only reads, and the second try waits for a
        session to answer (`wait_for_ready`)."""
        request = accounts_pb2.CredentialRequest()
        try:
            return await self._stub().Credential(request, metadata=self._as(person))
        except grpc.aio.AioRpcError as error:
            if error.code() not in SESSION_WENT_AWAY:
                raise
            log.info("asked again who pays: the session went away (%s)", error.code().name)
        return await self._stub().Credential(request, metadata=self._as(person))

    async def key_refused(self, person: str, key: ApiKey, reason: str) -> None:
        try:
            await self._stub().ReportKeyRefused(
                accounts_pb2.KeyRefusedRequest(ending=key.ending, reason=reason[:200]),
                metadata=self._as(person),
            )
        except grpc.aio.AioRpcError as error:
            # Not set aside yet: the next call on it is refused and reported again.
            log.warning("a refused key could not be reported: %s", error.code().name)

    async def send_usage(self, person: str, rows: list[UsageRow]) -> None:
        await self._stub().RecordUsage(
            accounts_pb2.RecordUsageRequest(rows=[usage_row_message(row) for row in rows]),
            metadata=self._as(person),
        )


@dataclass(frozen=True)
class RemoteModel:
    """A service's model client, with what the session hands it of who pays (`offer`)."""

    model: PersonalModelClient
    accounts: RemoteAccounts

    def offer(self, person: str, reply: accounts_pb2.CredentialReply, age_s: float) -> None:
        """Keeps the person's credential as the session read it `age_s` ago, so that their
        calls here need not ask for it. One that cannot be used is left: asked for, it would
        fail the call and be told then."""
        try:
            credential = self.accounts.opened(person, reply)
        except ModelUnavailable as error:
            log.warning("a credential handed over was not kept: %s", error)
            return
        self.model.offer_credential(person, credential, age_s)


@contextlib.asynccontextmanager
async def remote_model(settings: CommonSettings, name: str) -> AsyncIterator[RemoteModel]:
    """The model client of service `name` (not the session): each call on the account paying
    for its person, as the session service says, and the usage sent back to it."""
    peers = peers_of(settings, name, REMOTE_MODEL_PEERS)
    secret = resolve_secret(settings.secret, settings.home)
    accounts = RemoteAccounts(
        peers, secret, resolve_keyring(settings.key_encryption_keys, settings.home)
    )
    usage = UsageBatches(accounts.send_usage)
    model = personal_model_client(settings, accounts, usage)
    flushing = asyncio.create_task(usage.flush_forever())
    try:
        yield RemoteModel(model, accounts)
    finally:
        await cancel_all([flushing])
        await model.aclose()
        await usage.aclose()
        await peers.close()


@contextlib.asynccontextmanager
async def personal_model(settings: CommonSettings, name: str) -> AsyncIterator[PersonalModelClient]:
    """`remote_model`'s client alone, for a service the session hands no credential to."""
    async with remote_model(settings, name) as remote:
        yield remote.model
