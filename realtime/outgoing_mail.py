"""Whether e-mail is going out, for the people who run the site.

Every process sends through `EmailBackend` (Django's SMTP backend when EMAIL_HOST is set: the
web servers' password resets and address confirmations, the sweeper's "your move" mails, the
mail door's replies). It records each attempt's outcome where every process can read it (the
cache: Redis in production; without Redis each process sees its own), logs an ERROR with
the likely fix when handing mail over starts failing in this process and a WARNING when it
works again, and /readyz shows the record (realtime/health.py) without leaving the rotation:
a web process that cannot send mail still serves its games.

A mail the server refuses for its own sake (an unknown recipient, its content) is that
mail's problem, not the server's: it does not count as mail failing.
"""

from __future__ import annotations

import logging
import smtplib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend as SMTPBackend

logger = logging.getLogger(__name__)

STATUS_KEY = "outgoing-mail"
# A record no attempt has refreshed for this long is dropped (nothing was sent for a day).
KEPT_SECONDS = 86_400
# While mail goes out, each process rewrites the record at most this often; a change is
# written at once.
REFRESH_SECONDS = 60.0
# Errors that concern one mail (its recipient, its content), not the server.
ONE_MAIL_ERRORS = (smtplib.SMTPRecipientsRefused, smtplib.SMTPDataError)
# After the outgoing mail server failed, the next try waits this long, doubled after each
# failure up to the cap (a relay that is down for an hour is tried every 5 minutes, not
# 3,600 times); a success starts again from the first.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 300.0


class EmailBackend(SMTPBackend):
    """Django's SMTP backend, recording whether mail goes out (`status`)."""

    def open(self) -> bool | None:
        try:
            opened: bool | None = super().open()
        except OSError as error:
            failed(error)
            raise
        return opened

    def _send(self, message: EmailMessage) -> bool:
        try:
            sent = bool(super()._send(message))
        except ONE_MAIL_ERRORS:
            went_out()  # the server answered: it works
            raise
        except OSError as error:
            failed(error)
            raise
        if sent:
            went_out()
        return sent

    def send_messages(self, messages: Sequence[EmailMessage]) -> int:
        return int(super().send_messages(messages))


class Backoff:
    """When to try the outgoing mail server again: at once while it works; after a failure,
    RETRY_FIRST_SECONDS later, then twice as long after each failure, up to the cap. Tries
    that ran together and failed together count as one failure."""

    def __init__(
        self,
        first: float = RETRY_FIRST_SECONDS,
        cap: float = RETRY_MAX_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first, self.cap, self.clock = first, cap, clock
        self.lock = threading.Lock()
        self.delay = 0.0
        self.next_try = float("-inf")
        self.failed_at = float("-inf")

    def begin(self) -> float | None:
        """The start of a try if one is due now, else None."""
        now = self.clock()
        with self.lock:
            return now if now >= self.next_try else None

    def failed(self, began: float) -> float | None:
        """The wait before the next try; None if a try that ran beside it counted already."""
        with self.lock:
            if began <= self.failed_at:
                return None
            self.delay = min(self.cap, self.delay * 2 if self.delay else self.first)
            self.failed_at = self.clock()
            self.next_try = self.failed_at + self.delay
            return self.delay

    def succeeded(self) -> None:
        with self.lock:
            self.delay, self.next_try = 0.0, float("-inf")


def server_failed(error: BaseException) -> bool:
    """Whether a send failed for the server's sake (down, refusing TLS or the login), so
    that the mail is kept for a later try, not for its own (its recipient, its content)."""
    return isinstance(error, OSError) and not isinstance(error, ONE_MAIL_ERRORS)


def hint(error: BaseException) -> str:
    """The likely fix of a failure to hand mail over, in the settings' words ("" if none)."""
    text = str(error)
    if isinstance(error, smtplib.SMTPNotSupportedError) and "STARTTLS" in text:
        return (
            "the server offers no STARTTLS: set EMAIL_USE_TLS=0 for a plain local relay, "
            "or point EMAIL_HOST and EMAIL_PORT at one that offers TLS"
        )
    if isinstance(error, smtplib.SMTPNotSupportedError) and "AUTH" in text:
        return "the server takes no login: leave EMAIL_HOST_USER and EMAIL_HOST_PASSWORD empty"
    if isinstance(error, smtplib.SMTPAuthenticationError):
        return "the server refused the login: check EMAIL_HOST_USER and EMAIL_HOST_PASSWORD"
    if isinstance(error, smtplib.SMTPSenderRefused):
        return "the server refuses the sender: check DEFAULT_FROM_EMAIL and PBM_ADDRESS"
    if isinstance(error, ssl.SSLError):
        return "TLS with the server failed: check EMAIL_PORT (587 for STARTTLS) and its certificate"
    if isinstance(error, ConnectionRefusedError):
        return "nothing listens there: check EMAIL_HOST and EMAIL_PORT, and that the relay runs"
    if isinstance(error, socket.gaierror):
        return "EMAIL_HOST is not a known host name"
    if isinstance(error, TimeoutError):
        return "no answer within EMAIL_TIMEOUT seconds: check EMAIL_HOST, EMAIL_PORT, the firewall"
    return ""


class _Local:
    """This process's last outcome (which decides what is logged and when to write)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ok: bool | None = None
        self.since = 0.0  # when this process's mail began failing
        self.written = 0.0


_local = _Local()


def went_out() -> None:
    now = time.time()
    with _local.lock:
        was, since = _local.ok, _local.since
        if was is True and now - _local.written < REFRESH_SECONDS:
            return
        _local.ok, _local.written = True, now
    if was is False:
        logger.warning("outgoing mail goes out again (it failed for %.0f s)", now - since)
    _write({"ok": True, "at": now})


def failed(error: BaseException) -> None:
    now = time.time()
    detail = f"{type(error).__name__}: {error}"[:300]
    fix = hint(error)
    with _local.lock:
        was = _local.ok
        if was is not False:
            _local.since = now
        _local.ok, _local.written = False, now
        since = _local.since
    if was is not False:
        where = f"{getattr(settings, 'EMAIL_HOST', '')}:{getattr(settings, 'EMAIL_PORT', '')}"
        logger.error(
            "outgoing mail fails: the server at %s took nothing (%s)%s",
            where,
            detail,
            f"; {fix}" if fix else "",
        )
        shared = _read()  # another process may have seen it fail first
        if shared is not None and shared.get("ok") is False:
            since = min(since, float(shared.get("since", since)))
    _write({"ok": False, "at": now, "since": since, "error": detail, "hint": fix})


def _write(record: dict[str, Any]) -> None:
    try:
        cache.set(STATUS_KEY, record, KEPT_SECONDS)
    except Exception as error:  # the record is a report: sending goes on without it
        logger.debug("the outgoing mail status was not written (%s)", error)


def _read() -> dict[str, Any] | None:
    try:
        return status()
    except Exception:  # the cache is away: this process's view only
        return None


def status() -> dict[str, Any] | None:
    """The last attempt's record: {"ok", "at"} and, while failing, "since", "error", "hint"
    (times are Unix seconds); None if no mail was tried for a day."""
    record = cache.get(STATUS_KEY)
    return record if isinstance(record, dict) else None


def forget() -> None:
    """Forget every outcome (tests, and a process whose settings changed)."""
    with _local.lock:
        _local.ok, _local.since, _local.written = None, 0.0, 0.0
    cache.delete(STATUS_KEY)
