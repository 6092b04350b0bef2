"""Email through the SMTP relay at `VIOLET_SMTP_URL`, and the rule on whom it may go to.

`smtp://host:port` sends in the clear (a relay inside the cluster), `smtps://host:port` over
TLS; `user:password@` in the URL logs in first.
"""

from __future__ import annotations

import asyncio
import re
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from urllib.parse import unquote, urlsplit

SMTP_TIMEOUT_S = 30.0
_ADDRESS = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$")


class MailError(Exception):
    """The email could not be sent; the message is plain words for the model."""


@dataclass(frozen=True)
class Email:
    to: str
    subject: str
    body: str


def valid_address(address: str) -> bool:
    return bool(_ADDRESS.match(address)) and len(address) <= 254


def named_by_person(address: str, requests: list[str]) -> bool:
    """Whether the person wrote this exact address in one of their own requests. Text from a
    page, a search, a document or other work never counts, so none of it can choose whom an
    email goes to."""
    whole = re.compile(
        r"(?<![\w.+'%-])" + re.escape(address) + r"(?![\w-]|\.[A-Za-z0-9])", re.IGNORECASE
    )
    return any(whole.search(request) for request in requests)


class Mailer:
    def __init__(self, url: str, sender: str) -> None:
        self._url = url
        self._sender = sender

    async def send(self, email: Email) -> None:
        if not self._url:
            raise MailError("Sending email is not set up here.")
        await asyncio.to_thread(self._send, email)

    def _send(self, email: Email) -> None:
        parts = urlsplit(self._url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise MailError("The email relay is not set up correctly.")
        message = EmailMessage()
        message["From"] = self._sender
        message["To"] = email.to
        message["Subject"] = " ".join(email.subject.split())
        message["Message-ID"] = make_msgid(domain="violet.local")
        message.set_content(email.body)
        relay = smtplib.SMTP_SSL if parts.scheme == "smtps" else smtplib.SMTP
        port = parts.port or (465 if parts.scheme == "smtps" else 25)
        options = {"context": ssl.create_default_context()} if parts.scheme == "smtps" else {}
        try:
            with relay(parts.hostname, port, timeout=SMTP_TIMEOUT_S, **options) as smtp:
                if parts.username:
                    smtp.login(unquote(parts.username), unquote(parts.password or ""))
                smtp.send_message(message)
        except (OSError, smtplib.SMTPException) as error:
            raise MailError("The email relay did not take the email just now.") from error
