"""Daphne's access log as log records (docs/LOGGING.md).

Daphne writes its access log (a line per HTTP request and per websocket opened or closed) as
NCSA text straight to stdout, beside the log: in the JSON format those were the only lines that
were not JSON, and a query string's `password=` went out as sent. Here each entry is a record
of the `daphne.access` logger, formatted and redacted as every other line is.

A websocket's lines carry its socket id, user and game like every line of the socket: its
log context (realtime/logs.py) is made with the connection, before the application starts,
and bound while Daphne logs the socket's handshake (WSCONNECTING), acceptance (WSCONNECT),
refusal (WSREJECT) and close (WSDISCONNECT). The handshake's line waits until the application
has read who the socket is (its session, its route: a few milliseconds), or is written before
the next line of the socket if it ends first.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from realtime import logs

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


def _log_action(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def log_action(self: Any, protocol: str, action: str, details: dict[str, Any]) -> None:
        context = logs.current()
        if protocol != "websocket" or context is None:
            original(self, protocol, action, details)
            return
        if action == "connecting" and not context.identified:

            def write() -> None:
                token = logs.bind(context)
                try:
                    original(self, protocol, action, details)
                finally:
                    logs.unbind(token)

            context.on_identified = write
            return
        context.identify()  # the handshake's line first, if it still waits
        original(self, protocol, action, details)

    return log_action


def _in_socket_context(method: Callable[..., Any]) -> Callable[..., Any]:
    """A method of Daphne's websocket protocol, run with its socket's log context bound."""

    @functools.wraps(method)
    def bound(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = logs.bind(getattr(self, "log_context", None) or logs.current())
        try:
            return method(self, *args, **kwargs)
        finally:
            logs.unbind(token)

    return bound


def _create_application(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_application(self: Any, protocol: Any, scope: dict[str, Any]) -> Any:
        if scope.get("type") == "websocket":
            # The socket's context, made now for Daphne's lines and handed to the application
            # through its scope (realtime.logs.for_socket fills it in).
            protocol.log_context = scope[logs.SCOPE_KEY] = logs.LogContext(
                {"socket_id": logs.new_id()}
            )
        return original(self, protocol, scope)

    return create_application


def install() -> None:
    """Send Daphne's access log entries through logging, a socket's with its context."""
    from daphne.access import AccessLogGenerator
    from daphne.server import Server
    from daphne.ws_protocol import WebSocketProtocol

    AccessLogGenerator.write_entry = _write_entry
    if getattr(Server.log_action, "socket_context", False):
        return
    Server.log_action = _log_action(Server.log_action)
    Server.log_action.socket_context = True
    Server.create_application = _create_application(Server.create_application)
    # The methods in which Daphne logs a socket's handshake, acceptance, refusal and close.
    for name in ("applicationCreateWorked", "onOpen", "serverReject", "onClose"):
        setattr(WebSocketProtocol, name, _in_socket_context(getattr(WebSocketProtocol, name)))
