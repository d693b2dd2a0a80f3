"""The SMTP listener (aiosmtpd) and the worker that answers what it stored.

The listener accepts a mail only once it is stored (`inbox.store`); a mail over
PBM_MAX_MAIL_BYTES is refused at SMTP (552), a sender over PBM_MAILS_PER_SENDER is told to try
later (451). The worker runs each stored mail's commands and hands the replies to the outgoing
mail server (Django's e-mail backend); on start it first finishes what a stopped server left.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiosmtpd.controller import Controller
from django.conf import settings
from django.db import close_old_connections

from pbm import inbox
from pbm.identity import address_of
from realtime.limits import over_limit

logger = logging.getLogger(__name__)

# The worker looks for leftover work this often even when nothing new arrived.
IDLE_SECONDS = 1.0


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


class Worker:
    """Answers stored mails on a few threads (checking a new mail password costs a tenth of a
    second of CPU, and must not hold up everyone's moves), one mail of a sender at a time and
    in the order they came, so that a player's moves mailed one after the other are played in
    that order."""

    def __init__(self, threads: int, wake: threading.Event) -> None:
        self.wake = wake  # set when a mail is done: its sender's next may be waiting
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mail")
        self.lock = threading.Lock()
        self.busy_senders: set[str] = set()
        self.busy_mails: set[int] = set()

    def dispatch(self) -> None:
        """Hand out the stored mails whose senders have none in hand; send leftover replies."""
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
            _guarded(_deliver_all)

    def answer(self, mail_id: int, sender: str) -> None:
        try:
            _guarded(inbox.process, mail_id)
            _guarded(_deliver_all)
        except Exception:
            logger.exception("mail %s could not be answered; it stays stored", mail_id)
        finally:
            with self.lock:
                self.busy_mails.discard(mail_id)
                self.busy_senders.discard(sender)
            self.wake.set()

    def stop(self) -> None:
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
