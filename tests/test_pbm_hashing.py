"""A mail password's hash (a fifth of a CPU-second in production) is computed away from the
mail door's answer threads: a mail that needs one stops before writing anything, and runs
again once the hash is known, while other senders' mails are answered meanwhile and each
sender's mails keep their order."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.hashers import check_password
from django.db import connections

from accounts.models import User
from pbm import identity, inbox, smtp
from pbm.models import InboundMail, MailPassword, OutboundMail
from tests.games_helpers import make_user


def player(name: str) -> User:
    user = make_user(name)
    user.email = f"{name}@players.test"
    user.save(update_fields=["email"])
    identity.set_mail_password(user, f"{name}-mailpw")
    identity._PROVEN.pop(user.pk, None)  # its password not yet proven in this process
    return user


def stored(sender: str, subject: str) -> InboundMail:
    raw = (
        f"From: {sender}\r\nTo: pbm@localhost\r\nMessage-ID: <{time.monotonic_ns()}@p.test>\r\n"
        f"Subject: {subject}\r\n\r\n\r\n"
    ).encode()
    mail = inbox.store(raw, sender, ["pbm@localhost"])
    assert mail is not None
    return mail


def reply_to(mail: InboundMail) -> str:
    return OutboundMail.objects.get(inbound=mail).subject


@pytest.mark.django_db
class TestDeferredHashes:
    def test_a_mail_needing_a_hash_stops_before_writing_and_runs_again_with_it(self) -> None:
        alice = player("alice")
        mail = stored(alice.email, "signoff alice alice-mailpw")
        hashes: dict[tuple[str, ...], object] = {}
        with identity.hashes_deferred(hashes), pytest.raises(identity.HashDue) as due:
            inbox.process(mail.pk)
        mail.refresh_from_db()
        alice.refresh_from_db()
        assert mail.status == InboundMail.Status.RECEIVED
        assert not OutboundMail.objects.exists()
        assert alice.email_on_move is True
        assert "alice-mailpw" not in str(due.value)
        hashes[due.value.key] = due.value.work()
        with identity.hashes_deferred(hashes):
            assert inbox.process(mail.pk) == 1
        alice.refresh_from_db()
        assert alice.email_on_move is False
        assert reply_to(mail).startswith("signoff alice")
        # Proven now: the next mail needs no hash.
        with identity.hashes_deferred({}):
            inbox.process(stored(alice.email, "signoff alice alice-mailpw").pk)

    def test_a_wrong_password_is_refused_after_its_hash_as_before(self) -> None:
        alice = player("alice")
        mail = stored(alice.email, "signoff alice not-hers")
        hashes: dict[tuple[str, ...], object] = {}
        with identity.hashes_deferred(hashes), pytest.raises(identity.HashDue) as due:
            inbox.process(mail.pk)
        hashes[due.value.key] = due.value.work()
        with identity.hashes_deferred(hashes):
            inbox.process(mail.pk)
        assert reply_to(mail).startswith("error (bad_credentials)")

    def test_a_signup_hashes_its_password_before_creating_or_counting_anything(self) -> None:
        mail = stored("carol@players.test", "signup carol carol-mailpw")
        hashes: dict[tuple[str, ...], object] = {}
        with identity.hashes_deferred(hashes), pytest.raises(identity.HashDue) as due:
            inbox.process(mail.pk)
        assert not User.objects.filter(username="carol").exists()
        hashes[due.value.key] = due.value.work()
        with identity.hashes_deferred(hashes):
            inbox.process(mail.pk)
        assert reply_to(mail).startswith("signup carol")
        kept = MailPassword.objects.get(user__username="carol").password
        assert kept == hashes[due.value.key]
        assert check_password("carol-mailpw", kept)


def wait_until(condition: Callable[[], bool], worker: smtp.Worker, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the mail door did not get there"
        worker.wake.wait(0.05)
        worker.wake.clear()
        worker.dispatch()


@pytest.mark.django_db(transaction=True)
def test_a_new_senders_hash_holds_up_neither_other_senders_nor_its_own_order() -> None:
    alice, bob = player("alice"), player("bob")
    identity.authenticate("bob", "bob-mailpw", bob.email)  # bob mailed before: proven
    worker = smtp.Worker(1, threading.Event())  # one answer thread
    gate = threading.Event()
    # Every hashing thread busy: alice's hash waits at the gate, as behind a crowd of them.
    for _ in range(smtp.hashing_threads()):
        worker.hashing.submit(gate.wait, 60)
    try:
        first = stored(alice.email, "change password alice alice-mailpw alice-new-pw")
        second = stored(alice.email, "signoff alice alice-new-pw")  # right only after `first`
        known = stored(bob.email, "signoff bob bob-mailpw")

        def status(mail: InboundMail) -> str:
            return InboundMail.objects.get(pk=mail.pk).status

        wait_until(lambda: status(known) == InboundMail.Status.ANSWERED, worker)
        assert status(first) == status(second) == InboundMail.Status.RECEIVED
        gate.set()
        wait_until(lambda: status(second) == InboundMail.Status.ANSWERED, worker)
        assert reply_to(first).startswith("change password alice")
        assert reply_to(second).startswith("signoff alice")
        assert reply_to(known).startswith("signoff bob")
    finally:
        gate.set()
        worker.pool.submit(connections.close_all).result()  # the answer thread's connection
        worker.stop()


def test_the_hashing_threads_yield_the_cores_and_the_answer_threads_do_not() -> None:
    worker = smtp.Worker(1, threading.Event())

    def niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    try:
        assert worker.hashing.submit(niceness).result() == smtp.HASHING_NICENESS
        # An answer thread started after a hashing thread keeps the process's priority.
        assert worker.pool.submit(niceness).result() == niceness()
    finally:
        worker.stop()
