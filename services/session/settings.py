from pydantic import Field, field_validator

from session.window import MAX_WINDOW, MIN_WINDOW
from violet.settings import CommonSettings


class SessionSettings(CommonSettings):
    window: int = Field(default=30, description="Live messages the main model sees (20 to 50).")
    poll_s: float = Field(default=1.0, gt=0, description="Fallback poll for new messages.")
    lock_lease_s: float = Field(default=30.0, gt=0, description="Turn lock lease, renewed.")
    sweep_s: float = Field(default=5.0, gt=0, description="How often unanswered turns are sought.")
    replica: str = Field(default="", description="This replica's name; default host and pid.")

    @field_validator("window")
    @classmethod
    def window_in_range(cls, value: int) -> int:
        if not MIN_WINDOW <= value <= MAX_WINDOW:
            raise ValueError(
                f"the window must be from {MIN_WINDOW} to {MAX_WINDOW} messages, not {value}"
            )
        return value
