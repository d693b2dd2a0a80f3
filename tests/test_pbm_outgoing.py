"""The mail door's replies against an outgoing mail server that fails: here a plain local
relay (no STARTTLS) with EMAIL_USE_TLS left on, its default. The replies wait, the server is
tried less and less often, the log says once, as an ERROR, what to set, and a metric says
how long mail has failed."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from django.db import connections
from django.test import override_settings

from pbm import smtp
from pbm.metrics import mail_failing
from pbm.models import OutboundMail
from tests.mail import mail_site
from tests.relay import failing_relay, plain_relay

FIX = "set EMAIL_USE_TLS=0 for a plain local relay"


def test_the_wait_doubles_up_to_its_cap_and_a_success_ends_it() -> None:
    now = [0.0]
    backoff = smtp.Backoff(first=1, cap=300, clock=lambda: now[0])
    waits = []
    for _ in range(11):
        began = backoff.begin()
        assert began is not None
        waits.append(backoff.failed(began))
        assert backoff.begin() is None  # not due before its wait
        now[0] += waits[-1] or 0
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]
    # Two tries that ran together and failed together are one failure.
    began = backoff.begin()
    assert began is not None
    assert backoff.failed(began) == 300
    assert backoff.failed(began) is None
    backoff.succeeded()
    assert backoff.begin() == now[0]


@pytest.mark.django_db(transaction=True)
def test_replies_wait_while_the_outgoing_server_fails_and_it_is_tried_less_and_less_often(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    worker = smtp.Worker(1, threading.Event())
    worker.retry = smtp.Backoff(clock=lambda: now[0])
    caplog.set_level(logging.WARNING)
    with failing_relay() as (relay, _port):
        OutboundMail.objects.create(to="p@players.test", subject="s", body="b", message_id="<1@x>")
        tried = []
        for second in range(40):  # the worker's passes, a second apart
            now[0] = float(second)
            before = relay.greetings
            worker.send_replies()
            if relay.greetings > before:
                tried.append(second)
        assert tried == [0, 1, 3, 7, 15, 31]
        reply = OutboundMail.objects.get()
        assert reply.sent_at is None and reply.attempts == 0  # it waits, its tries not used up
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and FIX in errors[0], caplog.text
        waits = [r.getMessage() for r in caplog.records if "next try in" in r.getMessage()]
        assert [w.rsplit(" ", 2)[-2] for w in waits] == ["1", "2", "4", "8", "16", "32"]
        assert mail_failing()[()] > 0
        # The relay fixed (here: TLS off): the next due try sends, and the wait is over.
        with override_settings(EMAIL_USE_TLS=False):
            now[0] = 63.0
            worker.send_replies()
        assert OutboundMail.objects.get().sent_at is not None
        assert len(relay.mails) == 1
        assert worker.retry.begin() == 63.0
        assert mail_failing() == {(): 0.0}
    worker.stop()
    connections.close_all()


@pytest.mark.sqlite(reason="the outgoing mail server, not the database, is under test: run once")
def test_the_mail_door_says_once_what_to_set_and_when_it_tries_again(
    tmp_path: Path,
) -> None:
    with (
        plain_relay() as (relay, port),
        mail_site(tmp_path, EMAIL_PORT=str(port), EMAIL_USE_TLS="1") as site,
    ):
        site.send("someone@players.test", "help")
        deadline = time.monotonic() + 20
        while "next try in 2 s" not in site.output():  # its second failure, a second later
            assert time.monotonic() < deadline, site.output()
            time.sleep(0.1)
        output = site.output()
    errors = [line for line in output.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and FIX in errors[0], output
    assert "STARTTLS extension not supported" in errors[0]
    assert "next try in 1 s" in output
    assert relay.mails == []
    assert "Traceback" not in output
