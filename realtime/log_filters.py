"""Log filters: an outage, or a request refused as suspicious or as expected, is one line per
event; a bug keeps its traceback.

While Redis or PostgreSQL is unreachable, channels_redis's receive loop and our broadcasts log
an error every time they try; with tracebacks, a short outage buried the log in pages of
library frames. A connection failure is an operational event whose type and message say
everything, so it is logged as one line; every other exception keeps its traceback. So is a
task cancelled while the server stops (channels_redis cleaning up its subscriptions): a
stopping server is not a bug. Nor is a request whose client left before its response: one
INFO line.
"""

from __future__ import annotations

import asyncio
import logging

import redis.exceptions
from django.core.exceptions import BadRequest, PermissionDenied, RequestAborted
from django.http.multipartparser import MultiPartParserError

from realtime.errors import is_outage

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    asyncio.CancelledError,
)


def _connection_failure(error: BaseException | None) -> BaseException | None:
    """The connection error behind `error` (itself or a cause), if that is what it is."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, CONNECTION_ERRORS) or is_outage(error):
            return error
        error = error.__cause__ or error.__context__
        seen += 1
    return None


class ConnectionErrorsInOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], RequestAborted):
            # A client that left before its response (Django's listener of the disconnect,
            # left behind when the server cancels a request it was too busy to finish, is
            # reported by asyncio as "Task exception was never retrieved"): an INFO line.
            first = record.getMessage().splitlines()[0]  # not asyncio's repr of the task
            record.msg = f"{first} (the client left before its response)"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
            return logging.getLogger().isEnabledFor(logging.INFO)
        if record.exc_info and record.exc_info[1] is not None:
            failure = _connection_failure(record.exc_info[1])
            if failure is not None:
                record.msg = f"{record.getMessage()} ({type(failure).__name__}: {failure})"
                record.args = None
                record.exc_info = None
                record.exc_text = None
        return True


# What is raised to refuse a request the site expects to refuse: the page of someone else's
# role, a request it cannot read (a broken multipart body). Django answers 403 or 400, and
# logs "Forbidden (Permission denied): /moderation/" and the like with the exception's
# traceback, as if the site had failed. (A raised Http404 is logged without one.)
EXPECTED_REFUSALS: tuple[type[BaseException], ...] = (
    PermissionDenied,
    BadRequest,
    MultiPartParserError,
)


class RefusedRequestsInOneLine(logging.Filter):
    """Django logs a request it refuses as suspicious (a body over the limit, a bad Host) at
    ERROR with its traceback, under `django.security.*`. The client's mistake is answered
    with a 400; it is logged as one warning line, as an outage is.

    An expected refusal (EXPECTED_REFUSALS) is one line too, with the reason the view gave. A
    request refused as forbidden (403: a moderation page asked for by a player, a guest's
    settings) is the site working as designed: it is an INFO line beside the access line,
    not a warning. A CSRF refusal stays a warning (`django.security.csrf`): it may be a
    forged request."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security.") and record.exc_info:
            record.msg = f"refused request: {record.getMessage()}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        elif record.name == "django.request":
            refusal = record.exc_info[1] if record.exc_info else None
            if isinstance(refusal, EXPECTED_REFUSALS):
                reason = str(refusal.args[0]) if refusal.args else ""
                message = record.getMessage()
                record.msg = (
                    f"{message} ({reason})" if reason and reason not in message else message
                )
                record.args = None
                record.exc_info = None
                record.exc_text = None
            if getattr(record, "status_code", None) == 403:
                record.levelno, record.levelname = logging.INFO, "INFO"
                # Logged as a warning, it passed a level (LOG_LEVEL) that may keep INFO out.
                return logging.getLogger().isEnabledFor(logging.INFO)
        return True
