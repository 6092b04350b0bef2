from pydantic import Field, ValidationInfo, field_validator

from session.window import MAX_WINDOW, MIN_WINDOW
from violet.settings import OperatorSettings
from violet.zones import is_zone


class SessionSettings(OperatorSettings):
    window: int = Field(default=30, description="Live messages the main model sees (20 to 50).")
    poll_s: float = Field(
        default=1.0, gt=0, description="Poll for new messages while notifications are out."
    )
    idle_poll_s: float = Field(
        default=30.0,
        gt=0,
        description="Safety-net poll for new messages while notifications work (jittered).",
    )
    recall_timeout_s: float = Field(
        default=5.0, gt=0, description="Deadline of one recall from memory."
    )
    recall_wait_s: float = Field(
        default=8.0,
        gt=0,
        description="Longest a turn waits for memory, a second try included.",
    )
    lock_lease_s: float = Field(default=30.0, gt=0, description="Turn lock lease, renewed.")
    sweep_s: float = Field(default=5.0, gt=0, description="How often unanswered turns are sought.")
    turn_backlog: int = Field(
        default=1000,
        gt=0,
        description="People whose turns may wait on this replica before new ones are refused.",
    )
    capture_sweep_s: float = Field(
        default=1.0, gt=0, description="How often captures owed to memory are sought."
    )
    captures_owed_per_person: int = Field(
        default=1000,
        gt=0,
        description="Captures owed to memory for one person at most; past it the oldest go.",
    )
    captures_owed_at_most: int = Field(
        default=100_000,
        gt=0,
        description="Captures owed to memory for everyone at most; past it the oldest of the "
        "people owed the most go.",
    )
    replica: str = Field(default="", description="This replica's name; default host and pid.")
    timezone: str = Field(
        default="UTC",
        description="The time zone of a person whose device never said theirs (an IANA name).",
    )
    reminder_poll_s: float = Field(
        default=1.0, gt=0, le=60, description="How often reminders due are sought."
    )
    clock_ahead_s: float = Field(
        default=0.0,
        ge=0,
        description="For tests and trials only: the person's clock (reminders, the time the "
        "main model is told) runs this many seconds ahead of the machine's.",
    )
    budget_day_usd: float = Field(
        default=0.0, ge=0, description="Each person's daily limit on the operator's key; 0: none."
    )
    budget_month_usd: float = Field(
        default=0.0, ge=0, description="Each person's monthly limit on the operator's key; 0: none."
    )
    keep_transcript_days: int | None = Field(
        default=None,
        ge=1,
        description="Days the conversation is kept before the daily pass removes it; unset: ever.",
    )
    keep_work_days: int | None = Field(
        default=None,
        ge=1,
        description="Days finished work is kept before the daily pass removes it; unset: ever.",
    )
    vapid_private_key: str = Field(
        default="",
        repr=False,
        description="The key notifications are signed with (PEM, P-256); default a key made in "
        "home.",
    )
    vapid_subject: str = Field(
        default="mailto:violet@localhost",
        description="Who push services may contact about the notifications: mailto: or https:.",
    )
    push_group_s: float = Field(
        default=10.0,
        gt=0,
        description="How long a notification waits for others finishing close to it, to go as one.",
    )
    fetch_block_private: bool = Field(
        default=True,
        description="Refuse notification addresses on loopback, private and link-local "
        "addresses, and plain http (false: tests).",
    )
    budget_warn_share: float = Field(
        default=0.8, gt=0, lt=1, description="The share of a limit at which the person is told."
    )

    @field_validator("recall_wait_s")
    @classmethod
    def recall_wait_covers_one_try(cls, value: float, info: ValidationInfo) -> float:
        timeout = info.data.get("recall_timeout_s")
        if timeout is not None and value < timeout:
            raise ValueError(f"must be at least VIOLET_RECALL_TIMEOUT_S ({timeout} s)")
        return value

    @field_validator("timezone")
    @classmethod
    def timezone_known(cls, value: str) -> str:
        if not is_zone(value):
            raise ValueError(f"{value!r} is not a time zone's IANA name, like Europe/Lisbon")
        return value

    @field_validator("window")
    @classmethod
    def window_in_range(cls, value: int) -> int:
        if not MIN_WINDOW <= value <= MAX_WINDOW:
            raise ValueError(
                f"the window must be from {MIN_WINDOW} to {MAX_WINDOW} messages, not {value}"
            )
        return value
