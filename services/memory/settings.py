from pydantic import Field

from memory.queries import QUERY_WAIT_AT_MOST_S
from violet.settings import VectorSettings


class MemorySettings(VectorSettings):
    memory_quiet_s: float = Field(
        default=300.0, gt=0, description="Idle time after which a person's memory is consolidated."
    )
    memory_sweep_s: float = Field(
        default=10.0,
        gt=0,
        description="How often quiet people and stray captured turns are sought.",
    )
    memory_undo_days: float = Field(
        default=30.0, ge=0, description="How long a forgotten item can be restored."
    )
    memory_query_wait_s: float = Field(
        default=QUERY_WAIT_AT_MOST_S,
        gt=0,
        description="Longest a recall waits for its query's vector while the embedder is busy; "
        "past it the recall ranks on words alone.",
    )
