from pathlib import Path
from typing import Literal

from pydantic import Field

from violet.settings import CommonSettings


class WorkerSettings(CommonSettings):
    workspace_dir: Path | None = Field(
        default=None, description="The people's folders; default VIOLET_HOME/workspaces."
    )
    work_idle_s: float = Field(
        default=300.0, gt=0, description="A work session is unloaded this long after its turn."
    )
    work_per_person: int = Field(default=2, ge=1, description="Work sessions running per person.")
    work_overall: int = Field(default=8, ge=1, description="Work sessions running at once.")
    work_max_steps: int = Field(
        default=12, ge=1, description="Model calls one request may take before it is given up."
    )
    work_window_requests: int = Field(
        default=6, ge=1, description="Earlier requests whose full exchange the model sees again."
    )
    work_sweep_s: float = Field(
        default=5.0, gt=0, description="How often unfinished work is sought."
    )
    work_lease_s: float = Field(
        default=60.0, gt=0, description="A replica's hold on a work session."
    )
    replica: str = Field(default="", description="This replica's name; default host and pid.")
    search_url: str = Field(default="", description="Search endpoint: GET URL?q=... gives JSON.")
    smtp_url: str = Field(default="", description="The SMTP relay: smtp://host:port.")
    smtp_from: str = Field(default="violet@localhost", description="The sender of emails.")
    fetch_timeout_s: float = Field(default=10.0, gt=0)
    fetch_max_bytes: int = Field(default=2_000_000, gt=0)
    fetch_block_private: bool = Field(
        default=True,
        description="Refuse pages on loopback, private and link-local addresses (false: tests).",
    )
    sandbox_timeout_s: float = Field(default=10.0, gt=0)
    sandbox_memory_mb: int = Field(default=256, ge=64)
    sandbox_disk_mb: int = Field(
        default=64, ge=1, description="What one run of code may write in its working folder."
    )
    person_disk_mb: int = Field(
        default=50, ge=1, description="What one person's documents may take on disk in all."
    )
    sandbox_backend: Literal["wasm", "bubblewrap"] = Field(
        default="wasm",
        description="wasm: CPython for WebAssembly, needs no privileges; bubblewrap: Linux "
        "namespaces, needs user namespaces (local machines).",
    )
    sandbox_cache_dir: Path | None = Field(
        default=None,
        description="Where the compiled WebAssembly interpreter is kept; default "
        "VIOLET_HOME/sandbox-cache. Writable by this service alone.",
    )

    def workspace_root(self) -> Path:
        return (self.workspace_dir or self.home / "workspaces").resolve()

    def sandbox_cache(self) -> Path:
        return (self.sandbox_cache_dir or self.home / "sandbox-cache").resolve()

    def sandbox_runs(self) -> Path:
        """Where each run of code gets its working folder, removed when the run ends."""
        return (self.home / "sandbox-runs").resolve()
