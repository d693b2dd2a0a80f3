"""Daphne's access log as log records (docs/LOGGING.md).

Daphne writes its access log (a line per HTTP request and per websocket opened or closed) as
NCSA text straight to stdout, beside the log: in the JSON format those were the only lines that
were not JSON, and a query string's `password=` went out as sent. Here each entry is a record
of the `daphne.access` logger, formatted and redacted as every other line is.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("daphne.access")


def _write_entry(
    self: Any,
    host: str,
    date: Any,
    request: str,
    status: int | None = None,
    length: int | None = None,
    ident: str | None = None,
    user: str | None = None,
) -> None:
    extra = {"status_code": status} if status is not None else {}
    logger.info('%s "%s" %s %s', host, request, status or "-", length or "-", extra=extra)


def install() -> None:
    """Send Daphne's access log entries through logging."""
    from daphne.access import AccessLogGenerator

    AccessLogGenerator.write_entry = _write_entry
