from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator

from gateway.allowlist import Allowlist
from violet.settings import CommonSettings

# Hosts an issuer may be reached on over plain http: the machine itself, never a network.
LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}


def checked_url(value: str) -> str:
    """An https:// URL, or http:// on the loopback interface; empty stays empty."""
    if not value:
        return value
    parts = urlsplit(value)
    if parts.scheme == "https" and parts.hostname:
        return value
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return value
    raise ValueError("needs an https:// URL (http:// only on 127.0.0.1 or localhost)")


class GatewaySettings(CommonSettings):
    hello_timeout_s: float = Field(default=10.0, gt=0, description="Time to send hello.")
    says_per_minute: int = Field(default=30, gt=0, description="Says a person may send a minute.")
    say_burst: int = Field(default=10, gt=0, description="Says a person may send at once.")
    says_in_flight: int = Field(
        default=500,
        gt=0,
        description="Says this replica holds unanswered before it refuses new ones.",
    )
    oidc_issuer: str = Field(
        default="",
        description="OpenID Connect issuer whose tokens sign a device in; empty: local only.",
    )
    oidc_audience: str = Field(
        default="", description="The `aud` the issuer's tokens must carry: Violet's client id."
    )
    oidc_allow: str = Field(
        default="",
        description="Who may sign in through the issuer: email addresses, @domains or "
        "claim=value pairs, comma-separated; empty: nobody.",
    )
    oidc_client_secret: str = Field(
        default="",
        description="The web page's client secret at the issuer, if it is a confidential client.",
    )
    oidc_jwks_url: str = Field(
        default="",
        description="The issuer's signing keys; default the jwks_uri of its discovery document.",
    )
    oidc_person_claim: str = Field(
        default="sub",
        min_length=1,
        max_length=64,
        description="The claim naming the person (prefixed so it never meets a local name).",
    )
    oidc_leeway_s: int = Field(
        default=30, ge=0, le=300, description="Clock difference allowed on exp and nbf."
    )
    oidc_keys_max_age_s: int = Field(
        default=3600, ge=60, description="How long fetched signing keys are used before a refetch."
    )
    oidc_refetch_min_s: int = Field(
        default=60, ge=1, description="Least time between refetches for a token's unknown key."
    )

    @field_validator("oidc_allow")
    @classmethod
    def allow_is_readable(cls, value: str) -> str:
        Allowlist.parse(value)  # its ValueError says which entry is wrong
        return value

    @field_validator("oidc_issuer", "oidc_jwks_url")
    @classmethod
    def issuer_urls_are_safe(cls, value: str) -> str:
        return checked_url(value)

    @field_validator("oidc_audience")
    @classmethod
    def issuer_needs_audience(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("oidc_issuer") and not value:
            raise ValueError("VIOLET_OIDC_ISSUER needs the audience its tokens are issued for")
        return value

    @field_validator("oidc_client_secret", "oidc_jwks_url")
    @classmethod
    def needs_issuer(cls, value: str, info: ValidationInfo) -> str:
        if value and not info.data.get("oidc_issuer"):
            what = {"oidc_client_secret": "a client secret", "oidc_jwks_url": "a JWKS URL"}
            raise ValueError(f"{what[str(info.field_name)]} needs VIOLET_OIDC_ISSUER too")
        return value
