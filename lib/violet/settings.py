"""Typed settings from environment variables, validated at start.

Each service declares one settings class deriving from `CommonSettings`; a wrong value stops the
service at start with a message that names the variable and what it accepts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TypeVar

from pydantic import (
    AliasChoices,
    Field,
    FilePath,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_ADDRESSES = {
    "gateway": "127.0.0.1:8080",
    "session": "127.0.0.1:50051",
    "router": "127.0.0.1:50052",
    "memory": "127.0.0.1:50053",
    "worker": "127.0.0.1:50054",
}

MIN_SECRET_CHARS = 32


class CommonSettings(BaseSettings):
    """Settings every service reads. Environment variable names are `VIOLET_` + the field name."""

    # An empty variable is an unset one: `ANTHROPIC_BASE_URL=` means the default address.
    model_config = SettingsConfigDict(
        env_prefix="VIOLET_", extra="ignore", frozen=True, env_ignore_empty=True
    )

    home: Path = Field(default=Path("var"), description="Folder for all local state.")
    secret: str = Field(
        default="", repr=False, description="Token signing secret; generated in home if empty."
    )
    log_level: str = Field(default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR)$")
    log_format: str = Field(
        default="auto",
        pattern="^(auto|text|json)$",
        description="Log lines as JSON, or readable text; auto: text on a terminal.",
    )
    listen_addr: str = Field(
        default="", description="Where this service binds; default its address."
    )
    gateway_addr: str = DEFAULT_ADDRESSES["gateway"]
    session_addr: str = DEFAULT_ADDRESSES["session"]
    router_addr: str = DEFAULT_ADDRESSES["router"]
    memory_addr: str = DEFAULT_ADDRESSES["memory"]
    worker_addr: str = DEFAULT_ADDRESSES["worker"]
    grpc_tls: str = Field(
        default="loopback",
        pattern="^(on|loopback|off)$",
        description="Internal gRPC: on (TLS, client certificates), loopback (plain text only "
        "while every address is loopback) or off (plain text anywhere).",
    )
    tls_dir: Path | None = Field(
        default=None,
        description="Folder of this party's ca.crt, tls.crt and tls.key; default home/tls/NAME.",
    )
    health_addr: str = Field(
        default="",
        description="With TLS on, where the health service alone is also served in plain text, "
        "for probes that cannot speak TLS; empty: nowhere.",
    )
    database_url: str = Field(default="", description="SQLAlchemy URL; default SQLite in home.")
    database_service_password: str = Field(
        default="",
        repr=False,
        description="PostgreSQL: the password of the services' own login roles; empty: none.",
    )
    database_pool_size: int = Field(
        default=5, ge=1, description="Database connections each replica keeps open."
    )
    database_max_overflow: int = Field(
        default=5, ge=0, description="Database connections a replica may open beyond the pool."
    )
    rpc_timeout_s: float = Field(default=30.0, gt=0)
    drain_s: float = Field(default=10.0, ge=0, description="Grace period for in-flight calls.")
    anthropic_api_key: str = Field(
        default="", validation_alias=AliasChoices("ANTHROPIC_API_KEY"), repr=False
    )
    anthropic_base_url: str = Field(default="", validation_alias=AliasChoices("ANTHROPIC_BASE_URL"))
    main_model: str = Field(default="", description="Main model name; empty for the default.")
    fast_model: str = Field(default="", description="Fast model name; empty for the default.")
    operator_key_shared: bool = Field(
        default=True,
        description="Whether people without a key of their own use ANTHROPIC_API_KEY.",
    )
    people_bring_keys: bool = Field(
        default=True,
        description="Whether people may add their own Anthropic key through the page and "
        "violet chat; the operator's `violet person key set` works either way.",
    )
    key_encryption_keys: str = Field(
        default="",
        repr=False,
        description="ID:BASE64 keys (32 bytes) sealing people's Anthropic keys, the first "
        "current; default a file made in home.",
    )
    key_cache_s: float = Field(
        default=30.0,
        gt=0,
        le=60,
        description="How long a replica uses a person's key before asking again (at most 60).",
    )

    @field_validator("secret")
    @classmethod
    def secret_long_enough(cls, value: str) -> str:
        return long_enough(value, "the secret")

    def address_of(self, service: str) -> str:
        return getattr(self, f"{service}_addr")

    def bind_address(self, service: str) -> str:
        return self.listen_addr or self.address_of(service)


class OperatorSettings(CommonSettings):
    """The settings of who checks or makes operator tokens: the session and the operator's
    `violet` commands, never the gateway or the worker."""

    operator_secret: str = Field(
        default="",
        repr=False,
        description="What operator tokens are signed with (only the session and the operator "
        "hold it); default one the session makes in home.",
    )

    @field_validator("operator_secret")
    @classmethod
    def operator_secret_long_enough(cls, value: str) -> str:
        return long_enough(value, "the operator secret")


def long_enough(secret: str, what: str) -> str:
    """`secret` when empty (made in home) or long enough to sign tokens with."""
    if secret and len(secret) < MIN_SECRET_CHARS:
        raise ValueError(f"{what} needs at least {MIN_SECRET_CHARS} characters")
    return secret


class VectorSettings(CommonSettings):
    """The settings of a service that keeps vectors (memory, router)."""

    qdrant_url: str = Field(
        default="",
        pattern=r"^(https?://.+)?$",
        description="Qdrant server (http:// or https://); default an embedded store in home.",
    )
    qdrant_api_key: str = Field(
        default="", repr=False, description="The Qdrant server's API key (its api-key header)."
    )
    qdrant_ca_file: FilePath | None = Field(
        default=None,
        description="CA certificates (PEM) that an https:// server's certificate is checked "
        "against; default the system's.",
    )
    qdrant_timeout_s: int = Field(
        default=10, ge=1, description="How long one call to the Qdrant server may take."
    )

    @field_validator("qdrant_ca_file")
    @classmethod
    def certificates_need_https(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is not None and not info.data.get("qdrant_url", "").startswith("https://"):
            raise ValueError("CA certificates need an https:// VIOLET_QDRANT_URL")
        return value


S = TypeVar("S", bound=CommonSettings)


class SettingsError(SystemExit):
    """Raised at start when the environment holds a value the service cannot use."""


def load_settings(cls: type[S]) -> S:
    """Reads `cls` from the environment, or stops with one plain line per wrong variable."""
    try:
        return cls()
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            field = str(problem["loc"][0]) if problem["loc"] else "?"
            lines.append(f"VIOLET_{field.upper()}: {problem['msg']}")
        message = "Violet cannot start; fix these settings:\n  " + "\n  ".join(lines)
        print(message, file=sys.stderr)
        raise SettingsError(2) from None
