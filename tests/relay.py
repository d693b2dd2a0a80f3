"""A plain outgoing mail server for tests: a real SMTP listener (aiosmtpd) that offers no
STARTTLS, as a local relay (postfix on 127.0.0.1:25) does, and counts its connections."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiosmtpd.controller import Controller
from django.test import override_settings

from tests.servers import free_port


class PlainRelay:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.greetings = 0  # EHLOs: one a connection a client opens
        self.mails: list[bytes] = []

    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        session.host_name = hostname  # what aiosmtpd does without the hook
        with self.lock:
            self.greetings += 1
        return responses

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.mails.append(envelope.original_content or envelope.content)
        return "250 OK"


@contextmanager
def plain_relay() -> Iterator[tuple[PlainRelay, int]]:
    """The relay and its port, listening on 127.0.0.1."""
    relay = PlainRelay()
    controller = Controller(relay, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield relay, controller.port
    finally:
        controller.stop()


# This test's record of whether mail goes out, not another worker's (realtime/outgoing_mail.py).
LOCAL_CACHE = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@contextmanager
def failing_relay() -> Iterator[tuple[PlainRelay, int]]:
    """A plain relay that this process's mail reaches with STARTTLS asked (EMAIL_USE_TLS on,
    the default): every send fails as against a local Postfix, until the test turns
    EMAIL_USE_TLS off. The outgoing mail record starts and ends empty."""
    from realtime import outgoing_mail

    with (
        plain_relay() as (relay, port),
        override_settings(
            CACHES=LOCAL_CACHE,
            EMAIL_BACKEND="realtime.outgoing_mail.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=port,
            EMAIL_USE_TLS=True,
        ),
    ):
        outgoing_mail.forget()
        try:
            yield relay, port
        finally:
            outgoing_mail.forget()
