"""Checking a person's Anthropic key with one small call before it is kept: a routing pick on
the fast model, the smallest call Violet makes, counted to the person's own key."""

from __future__ import annotations

from session.accounts import KeyCheck
from violet.fallbacks import fallback
from violet.keyring import ApiKey
from violet.models import Candidate, ModelError, make_model_client, pick
from violet.models.credentials import Payer
from violet.models.errors import KeyRefused
from violet.models.personal import PayingLedger, UsageSink
from violet.settings import CommonSettings

# One retry at most: the person is waiting for the answer on their key page.
TRIES = 2


def key_check(settings: CommonSettings, usage: UsageSink) -> KeyCheck:
    async def check(key: ApiKey, person: str) -> str | None:
        client = make_model_client(
            api_key=key.reveal(),
            base_url=settings.anthropic_base_url,
            main_model=settings.main_model,
            fast_model=settings.fast_model,
            max_retries=TRIES - 1,
            ledger=PayingLedger(Payer.OWN, usage),
        )
        try:
            await pick(
                client,
                request="Is this account answering?",
                candidates=[Candidate("answering", "the account answers calls", 1.0)],
                person=person,
            )
        except KeyRefused:
            return "refused"
        except ModelError as error:
            fallback("key_unchecked", f"{error}; the key was not kept")
            return "unchecked"
        finally:
            await client.aclose()
        return None

    return check
