"""Who pays for a person's calls, as memory and the worker ask the session (`RemoteAccounts`): a
session that went away as it was asked is asked once more; any other failure is told at once.
A credential the session hands over with a capture (`RemoteModel.offer`) spares the asking."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from tests.support.grpc_server import serving
from violet.accounts_client import RemoteAccounts, RemoteModel, credential_reply
from violet.channels import Peers
from violet.keyring import ApiKey, Sealed, resolve_keyring
from violet.models.credentials import Credential, Hold, Payer
from violet.models.errors import ModelUnavailable
from violet.models.offline import OfflineModelClient
from violet.models.personal import PersonalModelClient
from violet.v1 import accounts_pb2, accounts_pb2_grpc

SECRET = "a secret only this test knows"


class Accounts(accounts_pb2_grpc.AccountsServicer):
    """The session's Accounts, ending its first calls with `failures`, in order."""

    def __init__(self, *failures: grpc.StatusCode) -> None:
        self.failures = list(failures)
        self.asked = 0

    async def Credential(
        self, request: accounts_pb2.CredentialRequest, context: grpc.aio.ServicerContext
    ) -> accounts_pb2.CredentialReply:
        self.asked += 1
        if self.failures:
            await context.abort(self.failures.pop(0), "as it stopped")
        return accounts_pb2.CredentialReply(
            payer=Payer.OPERATOR.value, hold=Hold.NONE.value, pseudonym="p-ana"
        )


async def asked(accounts: Accounts, home: Path) -> tuple[Payer, str]:
    async with serving(accounts_pb2_grpc.add_AccountsServicer_to_server, accounts) as address:
        peers = Peers({"session": address}, 5.0)
        try:
            remote = RemoteAccounts(peers, SECRET, resolve_keyring("", home))
            credential = await remote.credential("ana")
            return credential.payer, credential.pseudonym
        finally:
            await peers.close()


@pytest.mark.parametrize("went_away", [grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE])
async def test_a_session_that_went_away_as_it_was_asked_is_asked_once_more(
    went_away: grpc.StatusCode, tmp_path: Path
) -> None:
    accounts = Accounts(went_away)
    assert await asked(accounts, tmp_path) == (Payer.OPERATOR, "p-ana")
    assert accounts.asked == 2


async def test_a_session_away_twice_fails_the_call_in_plain_words(tmp_path: Path) -> None:
    accounts = Accounts(grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(ModelUnavailable, match=r"could not be learned \(UNAVAILABLE\)"):
        await asked(accounts, tmp_path)
    assert accounts.asked == 2


async def test_any_other_failure_is_told_at_once(tmp_path: Path) -> None:
    accounts = Accounts(grpc.StatusCode.UNAUTHENTICATED)
    with pytest.raises(ModelUnavailable, match=r"could not be learned \(UNAUTHENTICATED\)"):
        await asked(accounts, tmp_path)
    assert accounts.asked == 1


ANA_KEY = ApiKey("sk-ant-api03-ana-aaaaaaaaaaaaaaaaaaaa-AAAA")


async def test_a_credential_handed_over_is_opened_and_spares_asking_the_session(
    tmp_path: Path,
) -> None:
    accounts = Accounts()
    keyring = resolve_keyring("", tmp_path)
    sealed = keyring.seal(ANA_KEY, "ana")
    async with serving(accounts_pb2_grpc.add_AccountsServicer_to_server, accounts) as address:
        peers = Peers({"session": address}, 5.0)
        try:
            remote = RemoteAccounts(peers, SECRET, keyring)
            model = PersonalModelClient(
                accounts=remote,
                operator=None,
                built_in=OfflineModelClient(),
                on_key=lambda key: OfflineModelClient(),
                cache_s=30.0,
            )
            handed = RemoteModel(model, remote)
            handed.offer("ana", credential_reply(Payer.OWN, Hold.NONE, sealed, "p-ana"), 2.0)
            known = model.known_credential("ana")
            assert known is not None
            assert known[0] == Credential(Payer.OWN, key=ANA_KEY)
            assert (known[0].pseudonym, known[0].sealed) == ("p-ana", sealed)
            assert known[1] >= 2.0
            # A key that does not open (another person's is sealed to them), or a payer not
            # known here, is left: asked for when needed, it fails the call in plain words.
            broken = Sealed(sealed.kek_id, sealed.nonce, b"not the sealed key at all")
            handed.offer("bo", credential_reply(Payer.OWN, Hold.NONE, broken, "p-bo"), 0.0)
            handed.offer("dee", credential_reply(Payer.OWN, Hold.NONE, sealed, "p-dee"), 0.0)
            assert model.known_credential("dee") is None
            unknown = accounts_pb2.CredentialReply(payer="a friend", pseudonym="p-cy")
            handed.offer("cy", unknown, 0.0)
            assert model.known_credential("bo") is None
            assert model.known_credential("cy") is None
            assert accounts.asked == 0
            with pytest.raises(ModelUnavailable, match="is not understood"):
                remote.opened("cy", unknown)
            await model.aclose()
        finally:
            await peers.close()
