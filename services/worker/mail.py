"""Email through the SMTP relay at `VIOLET_SMTP_URL`, and the rule on whom it may go to.

`smtp://host:port` sends in the clear (a relay inside the cluster), `smtps://host:port` over
TLS; `user:password@` in the URL logs in first.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import smtplib
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import SplitResult, unquote, urlsplit

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
    """Hands emails to the relay at most once each.

    An email is sent under a Message-ID made from its key, so every copy of it names the same
    message. The relay first takes the sender and the recipient; then `claim` records that the
    email is being handed over, and only then does the message itself go. A worker that stops
    after the claim never sends that email again: it may have reached the relay, and a person
    would rather miss one email than get it twice (at most once). A stop before the claim
    leaves it unsent, to be sent when the work resumes.
    """

    def __init__(self, url: str, sender: str) -> None:
        self._url = url
        self._sender = sender

    def message_id(self, key: str) -> str:
        domain = self._sender.rpartition("@")[2] or "violet.local"
        return f"<{key}@{domain}>"

    async def send(self, email: Email, key: str, claim: Callable[[], Awaitable[bool]]) -> bool:
        """Sends the email; False, sending nothing, when `claim` says another run has it."""
        if not self._url:
            raise MailError("Sending email is not set up here.")
        parts = urlsplit(self._url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise MailError("The email relay is not set up correctly.")
        message = self._message(email, self.message_id(key))
        try:
            relay = await asyncio.to_thread(_connect, parts)
            try:
                await asyncio.to_thread(_envelope, relay, self._sender, email.to)
                if not await claim():
                    return False
                await asyncio.to_thread(_transfer, relay, message)
            finally:
                await asyncio.to_thread(_close, relay)
        except (OSError, smtplib.SMTPException) as error:
            raise MailError("The email relay did not take the email just now.") from error
        return True

    def _message(self, email: Email, message_id: str) -> bytes:
        message = EmailMessage()
        message["From"] = self._sender
        message["To"] = email.to
        message["Subject"] = " ".join(email.subject.split())
        message["Message-ID"] = message_id
        message.set_content(email.body)
        return message.as_bytes(policy=message.policy.clone(linesep="\r\n"))


def _connect(parts: SplitResult) -> smtplib.SMTP:
    host = parts.hostname or ""
    relay: smtplib.SMTP
    if parts.scheme == "smtps":
        relay = smtplib.SMTP_SSL(
            host, parts.port or 465, timeout=SMTP_TIMEOUT_S, context=ssl.create_default_context()
        )
    else:
        relay = smtplib.SMTP(host, parts.port or 25, timeout=SMTP_TIMEOUT_S)
    try:
        relay.ehlo_or_helo_if_needed()
        if parts.username:
            relay.login(unquote(parts.username), unquote(parts.password or ""))
    except BaseException:
        relay.close()
        raise
    return relay


def _envelope(relay: smtplib.SMTP, sender: str, recipient: str) -> None:
    code, answer = relay.mail(sender)
    if code != 250:
        raise smtplib.SMTPSenderRefused(code, answer, sender)
    code, answer = relay.rcpt(recipient)
    if code not in (250, 251):
        raise smtplib.SMTPRecipientsRefused({recipient: (code, answer)})


def _transfer(relay: smtplib.SMTP, message: bytes) -> None:
    code, answer = relay.data(message)
    if code != 250:
        raise smtplib.SMTPDataError(code, answer)


def _close(relay: smtplib.SMTP) -> None:
    with contextlib.suppress(OSError, smtplib.SMTPException):
        relay.quit()
    relay.close()
