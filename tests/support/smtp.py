"""An SMTP sink for tests: a local relay that keeps every email it is given."""

from __future__ import annotations

from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller

from tests.support.waiting import eventually
from violet_cli.run import free_port


@dataclass(frozen=True)
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage

    @property
    def body(self) -> str:
        return self.message.get_content().strip()


class SmtpSink:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._controller = Controller(self, hostname="127.0.0.1", port=free_port())

    async def handle_DATA(self, server, session, envelope) -> str:  # type: ignore[no-untyped-def]
        message = message_from_bytes(envelope.content, policy=policy.default)
        self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"

    @property
    def url(self) -> str:
        return f"smtp://{self._controller.hostname}:{self._controller.port}"

    def to(self, address: str) -> list[Received]:
        return [r for r in self.received if address in r.recipients]

    async def wait_for(self, address: str, timeout: float = 20.0) -> Received:
        found = await eventually(
            lambda: self.to(address), f"an email to {address}", timeout_s=timeout
        )
        return found[0]

    def start(self) -> SmtpSink:
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()
