"""Email: whom it may go to (only addresses in the person's own words), the question the person
is asked, and the relay."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.smtp import SmtpSink
from violet_cli.run import free_port
from worker.mail import Email, Mailer, MailError, named_by_person, valid_address
from worker.toolbox import approval_question


@pytest.mark.parametrize(
    ("address", "requests", "named"),
    [
        ("a@example.org", ["send an email to a@example.org saying hi"], True),
        ("A@Example.org", ["send an email to a@example.org."], True),
        ("a@example.org", ["mail a@example.org, then b@example.org"], True),
        ("a@example.org", ["send an email to ba@example.org saying hi"], False),
        ("a@example.org", ["send an email to a@example.org.uk saying hi"], False),
        ("x@evil.test", ["look up http://127.0.0.1/page"], False),
        ("x@evil.test", [], False),
        ("a@example.org", ["look up the page", "now email a@example.org the title"], True),
    ],
)
def test_only_addresses_the_person_wrote_count(
    address: str, requests: list[str], named: bool
) -> None:
    assert named_by_person(address, requests) is named


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("a@example.org", True),
        ("first.last+tag@mail.example.co.uk", True),
        ("no-at-sign", False),
        ("a@b", False),
        ("a@example.org\nBcc: x@evil.test", False),
        ("<a@example.org>", False),
    ],
)
def test_addresses_are_checked(address: str, valid: bool) -> None:
    assert valid_address(address) is valid


def test_the_question_says_whom_and_what_in_plain_words() -> None:
    question = approval_question(Email("a@example.org", "hi", "hi"))
    assert question == 'Shall I send an email to a@example.org saying "hi"?'
    with_subject = approval_question(Email("a@example.org", "Plans", "See you at nine."))
    assert with_subject == (
        'Shall I send an email to a@example.org with the subject "Plans", '
        'saying "See you at nine."?'
    )
    assert len(approval_question(Email("a@example.org", "x", "word " * 500))) < 400


@pytest.fixture
def sink() -> Iterator[SmtpSink]:
    started = SmtpSink().start()
    yield started
    started.stop()


async def claimed() -> bool:
    return True


async def test_an_email_goes_through_the_relay_under_a_message_id_made_from_its_key(
    sink: SmtpSink,
) -> None:
    mailer = Mailer(sink.url, "violet@localhost")
    assert await mailer.send(Email("a@example.org", "Hello", "hi there"), "ap_1", claimed)
    received = await sink.wait_for("a@example.org")
    assert received.body == "hi there"
    assert received.message["Subject"] == "Hello"
    assert received.message["Message-ID"] == "<ap_1@localhost>" == mailer.message_id("ap_1")
    assert received.sender == "violet@localhost"


async def test_the_claim_comes_after_the_relay_took_the_envelope_and_decides(
    sink: SmtpSink,
) -> None:
    moments: list[int] = []

    async def refused() -> bool:
        moments.append(len(sink.received))
        return False

    mailer = Mailer(sink.url, "violet@localhost")
    assert not await mailer.send(Email("b@example.org", "s", "b"), "ap_2", refused)
    assert moments == [0] and not sink.to("b@example.org")


async def test_no_relay_means_a_plain_error_and_no_claim() -> None:
    async def never() -> bool:
        raise AssertionError("claimed without a relay")

    with pytest.raises(MailError, match="not set up"):
        await Mailer("", "violet@localhost").send(Email("a@example.org", "s", "b"), "k", never)
    with pytest.raises(MailError, match="^The mail server could not be reached just now.$"):
        await Mailer(f"smtp://127.0.0.1:{free_port()}", "v@l").send(
            Email("a@example.org", "s", "b"), "k", never
        )


class RefusingSink(SmtpSink):
    async def handle_RCPT(self, server, session, envelope, address, options) -> str:  # type: ignore[no-untyped-def]
        return "550 No such mailbox here"


async def test_a_relay_that_refuses_the_recipient_is_told_plainly() -> None:
    async def never() -> bool:
        raise AssertionError("claimed though the relay refused the envelope")

    refusing = RefusingSink().start()
    try:
        with pytest.raises(MailError, match="^The mail server refused it.$"):
            await Mailer(refusing.url, "v@l").send(Email("a@example.org", "s", "b"), "k", never)
    finally:
        refusing.stop()
