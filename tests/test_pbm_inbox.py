"""The mail door's store-then-answer steps, in-process on the test database: a mail is stored
once per Message-ID, a bug answers it once with `server_error` instead of retrying forever,
and a database outage leaves it stored for later."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError

from pbm import handlers, inbox
from pbm.models import InboundMail, OutboundMail

pytestmark = pytest.mark.django_db


def raw(message_id: str, subject: str = "list", **headers: str) -> bytes:
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (
        f"From: p@players.test\r\nTo: pbm@localhost\r\nMessage-ID: {message_id}\r\n"
        f"Subject: {subject}\r\n{extra}\r\nbody\r\n"
    ).encode()


def test_a_mail_is_stored_once_and_answered_once() -> None:
    first = inbox.store(raw("<one@players.test>"), "p@players.test", ["pbm@localhost"])
    assert first is not None
    assert inbox.store(raw("<one@players.test>"), "p@players.test", ["pbm@localhost"]) is None
    assert inbox.process(first.pk) == 1
    assert inbox.process(first.pk) == 0
    reply = OutboundMail.objects.get()
    assert (reply.to, reply.subject, reply.in_reply_to) == (
        "p@players.test",
        "list",
        "<one@players.test>",
    )


def test_a_bug_in_a_command_is_answered_once_with_server_error(monkeypatch: Any) -> None:
    mail = inbox.store(raw("<bug@players.test>"), "p@players.test", ["pbm@localhost"])
    assert mail is not None

    def broken(*args: Any) -> handlers.Reply:
        raise RuntimeError("a bug")

    monkeypatch.setattr(handlers, "answer", broken)
    assert inbox.process(mail.pk) == 1
    mail.refresh_from_db()
    assert mail.status == InboundMail.Status.ANSWERED
    assert OutboundMail.objects.get().subject.startswith("error (server_error)")


def test_a_database_outage_leaves_the_mail_stored_for_later(monkeypatch: Any) -> None:
    mail = inbox.store(raw("<later@players.test>"), "p@players.test", ["pbm@localhost"])
    assert mail is not None

    def away(*args: Any) -> handlers.Reply:
        raise OperationalError("the server closed the connection")

    monkeypatch.setattr(handlers, "answer", away)
    with pytest.raises(OperationalError):
        inbox.process(mail.pk)
    mail.refresh_from_db()
    assert mail.status == InboundMail.Status.RECEIVED
    assert not OutboundMail.objects.exists()


@pytest.mark.parametrize(
    ("headers", "envelope"),
    [
        ({"Auto-Submitted": "auto-replied"}, "p@players.test"),
        ({"List-Id": "<games.lists.test>"}, "p@players.test"),
        ({"Precedence": "bulk"}, "p@players.test"),
        ({}, ""),
    ],
)
def test_a_robots_mail_is_stored_but_never_answered(headers: dict[str, str], envelope: str) -> None:
    mail = inbox.store(
        raw(f"<robot{len(headers)}{envelope}@x>", **headers), envelope, ["pbm@localhost"]
    )
    assert mail is not None and mail.status == InboundMail.Status.IGNORED
    assert inbox.process(mail.pk) == 0
    assert not OutboundMail.objects.exists()


def test_a_mail_to_an_altered_reply_address_beside_the_door_is_answered_as_not_valid() -> None:
    # The Cc'd door's own address comes first; the altered reply address is still the one
    # that matters, so the subject (a move) is not read as a command.
    forged = "pbm+r-1-2-3-0123456789abcdef0123@localhost"
    mail = inbox.store(
        raw("<forged@players.test>", "b"), "p@players.test", ["pbm@localhost", forged]
    )
    assert mail is not None and mail.recipient == forged
    inbox.process(mail.pk)
    reply = OutboundMail.objects.get()
    assert reply.subject == "error (bad_reply_address): b"
    assert "Nothing was played" in reply.body


def test_an_html_part_in_an_unknown_charset_is_read_as_an_empty_body() -> None:
    message = (
        b"From: p@players.test\r\nTo: pbm@localhost\r\nMessage-ID: <charset@players.test>\r\n"
        b"Subject: multiple\r\nContent-Type: text/html; charset=no-such-charset\r\n\r\n"
        b"<div>list</div>\r\n"
    )
    mail = inbox.store(message, "p@players.test", ["pbm@localhost"])
    assert mail is not None and mail.body == ""
    inbox.process(mail.pk)
    assert OutboundMail.objects.get().subject == "multiple: 0 of 0 done"
