"""Choosing the implementation at start: Anthropic when a key is set, else the offline model;
for the services, a client per person's account (`violet.models.personal`)."""

from __future__ import annotations

from violet.keyring import ApiKey
from violet.models.accounting import UsageLedger
from violet.models.anthropic_client import AnthropicModelClient
from violet.models.base import ModelClient
from violet.models.credentials import Payer
from violet.models.offline import OfflineModelClient
from violet.models.personal import KeyAccounts, PayingLedger, PersonalModelClient, UsageSink
from violet.models.policy import POLICIES
from violet.models.retry import Backoff
from violet.settings import CommonSettings

DEFAULT_MAIN_MODEL = "claude-opus-5-5"
DEFAULT_FAST_MODEL = "claude-haiku-5-5"


def make_model_client(
    *,
    api_key: str | None,
    base_url: str | None,
    main_model: str,
    fast_model: str,
    timeout_s: float | None = None,
    max_retries: int | None = None,
    backoff_base_s: float = 0.5,
    backoff_max_s: float = 8.0,
    ledger: UsageLedger | None = None,
) -> ModelClient:
    """An empty model name means the default; an empty key means offline. `timeout_s` and
    `max_retries` shorten every kind of call's policy (`violet.models.policy`), for tests and
    checks that must not wait as long as a person's turn may."""
    if not api_key:
        return OfflineModelClient(ledger=ledger)
    attempts = None if max_retries is None else max_retries + 1
    policies = {
        kind: policy.with_limits(attempt_s=timeout_s, attempts=attempts)
        for kind, policy in POLICIES.items()
    }
    return AnthropicModelClient(
        api_key=api_key,
        base_url=base_url or None,
        main_model=main_model or DEFAULT_MAIN_MODEL,
        fast_model=fast_model or DEFAULT_FAST_MODEL,
        policies=policies,
        backoff=Backoff(base_s=backoff_base_s, max_s=backoff_max_s),
        ledger=ledger,
    )


def model_client_for(settings: CommonSettings) -> ModelClient:
    """The model client a service's settings ask for: Anthropic with a key, offline without."""
    return make_model_client(
        api_key=settings.anthropic_api_key,
        base_url=settings.anthropic_base_url,
        main_model=settings.main_model,
        fast_model=settings.fast_model,
    )


def personal_model_client(
    settings: CommonSettings, accounts: KeyAccounts, usage: UsageSink
) -> PersonalModelClient:
    """A service's model client: each call on the account that pays for its person (their own
    key, the operator's, or the built-in model), its usage handed to `usage` with the payer."""

    def on_key(key: ApiKey) -> ModelClient:
        return make_model_client(
            api_key=key.reveal(),
            base_url=settings.anthropic_base_url,
            main_model=settings.main_model,
            fast_model=settings.fast_model,
            ledger=PayingLedger(Payer.OWN, usage),
        )

    operator = None
    if settings.anthropic_api_key:
        operator = make_model_client(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            main_model=settings.main_model,
            fast_model=settings.fast_model,
            ledger=PayingLedger(Payer.OPERATOR, usage),
        )
    return PersonalModelClient(
        accounts=accounts,
        operator=operator,
        built_in=OfflineModelClient(ledger=PayingLedger(Payer.BUILT_IN, usage)),
        on_key=on_key,
        cache_s=settings.key_cache_s,
        usage=usage,
    )
