from pydantic import Field

from violet.settings import CommonSettings


class RouterSettings(CommonSettings):
    qdrant_url: str = Field(
        default="", description="Qdrant server; default an embedded store in home."
    )
