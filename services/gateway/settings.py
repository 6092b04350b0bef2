from pydantic import Field

from violet.settings import CommonSettings


class GatewaySettings(CommonSettings):
    hello_timeout_s: float = Field(default=10.0, gt=0, description="Time to send hello.")
    says_per_minute: int = Field(default=30, gt=0, description="Says a person may send a minute.")
    say_burst: int = Field(default=10, gt=0, description="Says a person may send at once.")
