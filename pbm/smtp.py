"""The SMTP listener (aiosmtpd) and the worker that answers what it stored.

The listener accepts a mail only once it is stored (`inbox.store`); a mail over
PBM_MAX_MAIL_BYTES is refused at SMTP (552), a sender over PBM_MAILS_PER_SENDER is told to try
later (451). The worker runs each stored mail's commands and hands the replies to the outgoing
mail server (Django's e-mail backend); on start it first finishes what a stopped server left.
When the outgoing server fails, the replies wait, and it is tried again after 1 s, 2 s, 4 s
... up to RETRY_MAX_SECONDS apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiosmtpd.controller import Controller
from django.conf import settings
from django.db import close_old_connections

from pbm import inbox
from pbm.identity import HashDue, address_of, hashes_deferred
from realtime import outgoing_mail
from realtime.limits import over_limit
from realtime.outgoing_mail import Backoff

logger = logging.getLogger(__name__)

# The worker looks for leftover work this often even when nothing new arrived.
IDLE_SECONDS = 1.0
# After the outgoing mail server failed, the next try waits (realtime/outgoing_mail.py).
RETRY_FIRST_SECONDS = outgoing_mail.RETRY_FIRST_SECONDS
RETRY_MAX_SECONDS = outgoing_mail.RETRY_MAX_SECONDS


def _sender_refused(address: str) -> bool:
    return over_limit("mail-sender", address, settings.PBM_MAILS_PER_SENDER, increment=True)


class Inbox:
    """aiosmtpd's handler: store, then wake the worker."""

    def __init__(self, wake: threading.Event) -> None:
        self.wake = wake

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if len(envelope.rcpt_tos) >= 5:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        sender = address_of(envelope.mail_from or "")
        if sender and await asyncio.to_thread(_guarded, _sender_refused, sender):
            return "451 4.7.1 Too many mails from this address: try again later"
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        stored = await asyncio.to_thread(
            _guarded, inbox.store, raw, envelope.mail_from or "", list(envelope.rcpt_tos)
        )
        if stored is not None:
            self.wake.set()
        return "250 2.0.0 Stored; the answer follows by mail"


def _guarded(function: Any, *args: Any) -> Any:
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


def hashing_threads() -> int:
    """A mail password's hash is pure CPU (PBKDF2, the GIL released): one thread a core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# The hashing threads' niceness: when the cores are short, the answers (and the database and
# the web processes beside them) go first, and first mails of new accounts wait.
HASHING_NICENESS = 10


def _yield_the_cores() -> None:
    """A hashing thread's start: a lower priority for this thread only (Linux schedules
    threads one by one; elsewhere nothing changes)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASHING_NICENESS)


class Worker:
    """Answers stored mails on a few threads, one mail of a sender at a time and in the order
    they came, so that a player's moves mailed one after the other are played in that order.

    Checking a mail password the first time (or setting one) costs a fifth of a CPU-second:
    a mail that needs one stops before writing anything (identity.HashDue), the hash runs on
    threads of its own, one a core, and the mail runs again once it is known, its sender
    kept busy meanwhile. So the answer threads never hash, and a crowd of new senders does
    not hold up the moves of players already known."""

    def __init__(self, threads: int, wake: threading.Event) -> None:
        self.wake = wake  # set when a mail is done: its sender's next may be waiting
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mail")
        self.hashing = ThreadPoolExecutor(
            max_workers=hashing_threads(),
            thread_name_prefix="mail-hash",
            initializer=_yield_the_cores,
        )
        self.lock = threading.Lock()
        self.busy_senders: set[str] = set()
        self.busy_mails: set[int] = set()
        # Mails whose hash is known, for `dispatch` to answer again (their senders stay busy);
        # None instead of the hashes: its hash failed, and the mail's answer runs it itself.
        self.hashed: list[tuple[int, str, dict[tuple[str, ...], object] | None]] = []
        self.retry = Backoff()

    def dispatch(self) -> None:
        """Hand out the mails whose hash is known, and the stored mails whose senders have
        none in hand; send leftover replies. Only this thread starts answer threads, so none
        inherits a hashing thread's lower priority."""
        with self.lock:
            hashed, self.hashed = self.hashed, []
        for mail_id, sender, hashes in hashed:
            if hashes is None:
                self.pool.submit(self.answer, mail_id, sender, {}, defer=False)
            else:
                self.pool.submit(self.answer, mail_id, sender, hashes)
        for mail_id, sender in _guarded(inbox.pending_mails):
            with self.lock:
                if mail_id in self.busy_mails or sender in self.busy_senders:
                    continue
                self.busy_mails.add(mail_id)
                self.busy_senders.add(sender)
            self.pool.submit(self.answer, mail_id, sender)
        with self.lock:
            idle = not self.busy_mails
        if idle:  # replies left by a stopped server, or by an outgoing server that was down
            self.send_replies()

    def answer(
        self,
        mail_id: int,
        sender: str,
        hashes: dict[tuple[str, ...], object] | None = None,
        *,
        defer: bool = True,
    ) -> None:
        hashes = {} if hashes is None else hashes
        try:
            with hashes_deferred(hashes) if defer else contextlib.nullcontext():
                _guarded(inbox.process, mail_id)
        except HashDue as due:
            try:
                self.hashing.submit(self.hash_then_answer, due, mail_id, sender, hashes)
                return  # the sender stays busy until its mail is answered
            except RuntimeError:  # stopping: the mail stays stored for the next start
                pass
        except Exception:
            logger.exception("mail %s could not be answered; it stays stored", mail_id)
        self.done(mail_id, sender)
        self.send_replies()

    def hash_then_answer(
        self, due: HashDue, mail_id: int, sender: str, hashes: dict[tuple[str, ...], object]
    ) -> None:
        answer_with: dict[tuple[str, ...], object] | None = hashes
        try:
            hashes[due.key] = due.work()
        except Exception:  # a bug: answered (once) as any bug is, by `inbox.process`
            logger.exception("mail %s: its password's hash failed", mail_id)
            answer_with = None
        with self.lock:
            self.hashed.append((mail_id, sender, answer_with))
        self.wake.set()  # dispatch hands it to an answer thread

    def done(self, mail_id: int, sender: str) -> None:
        with self.lock:
            self.busy_mails.discard(mail_id)
            self.busy_senders.discard(sender)
        self.wake.set()

    def send_replies(self) -> None:
        """Hand the stored replies to the outgoing mail server, unless it failed lately and
        its next try is not due."""
        began = self.retry.begin()
        if began is None:
            return
        try:
            _guarded(_deliver_all)
        except inbox.OutgoingServerFailed as error:
            wait = self.retry.failed(began)
            if wait is not None:
                logger.warning(
                    "the mail door's replies wait: the outgoing mail server failed (%s); "
                    "next try in %.0f s",
                    error,
                    wait,
                )
            return
        except Exception:
            logger.exception("the mail door's replies could not be sent; they stay stored")
            return
        self.retry.succeeded()

    def stop(self) -> None:
        # Hashes not begun are dropped: their mails stay stored for the next start.
        self.hashing.shutdown(wait=True, cancel_futures=True)
        self.pool.shutdown(wait=True)


def _deliver_all() -> int:
    sent = 0
    while batch := inbox.deliver():
        sent += batch
    return sent


def serve(host: str, port: int, stop: threading.Event | None = None) -> None:
    """Listen and answer until `stop` is set (or forever)."""
    wake = threading.Event()
    controller = Controller(
        Inbox(wake),
        hostname=host,
        port=port,
        data_size_limit=settings.PBM_MAX_MAIL_BYTES,
        server_hostname=address_of(settings.PBM_ADDRESS).partition("@")[2] or "localhost",
    )
    controller.start()
    logger.warning("mail server listening on %s:%s", host, port)
    worker = Worker(settings.PBM_WORKER_THREADS, wake)
    stop = stop or threading.Event()
    try:
        while not stop.is_set():
            wake.wait(IDLE_SECONDS)
            wake.clear()
            try:
                worker.dispatch()
            except Exception:
                logger.exception("the mail worker's pass failed; it tries again")
    finally:
        controller.stop()
        worker.stop()
