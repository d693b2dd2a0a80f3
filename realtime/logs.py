"""What each log line is about: the request or socket, the user, the game, the mail.

A context is bound for the work of one HTTP request (`RequestLogContext`, the outermost
middleware), one socket frame (`realtime/ws.py` binds its socket's context around each message
it handles), one game the sweeper or the computer's worker works on, one mail the mail door
answers. Every line logged meanwhile carries its fields (`realtime/log_format.py` puts them on
the record), in the handling coroutine and in the threads it hands database work to: asgiref's
sync_to_async, and with it `realtime.db.db_call`, runs the thread in a copy of the caller's
context, and an asyncio task or timer starts with a copy of the context that made it.

A context also knows its secrets: the request's session key, CSRF token and form passwords
(read when a line is logged, never before), a socket's session key, a mail password once it
is read. The redaction filter removes them from every line logged in that context.

docs/LOGGING.md describes the fields and the format.
"""

from __future__ import annotations

import contextvars
import json
import re
import secrets as random
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse
from django.utils.functional import LazyObject

# The context fields, in the order a JSON line gives them.
FIELDS = ("request_id", "socket_id", "user_id", "user", "game_id", "mail")
# The response header that carries the request id; an incoming one is kept if it is safe.
REQUEST_ID_HEADER = "X-Request-ID"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# Form and JSON fields whose values are secrets (a password, a token, a key).
SECRET_NAME = re.compile(
    r"pass(?:word|wd|phrase)|secret|token|session_?(?:id|key)|api_?key|signature", re.I
)
# Query parameters that carry a secret though their names do not say so: a tournament's
# invitation (/tournaments/3/?invite=…).
SECRET_QUERY_NAMES = ("invite",)
# Shorter values are not looked for in log lines: each would blank out common words.
MIN_SECRET_LENGTH = 4
MAX_JSON_BODY = 64 * 1024


@dataclass(eq=False, slots=True)
class LogContext:
    """The fields of one unit of work, and the secret values it has seen. Mutable and shared:
    the threads a request or a socket hands work to see what is added later."""

    fields: dict[str, Any] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    # The HTTP request: its user once something asked who it is, its cookies and its form.
    request: HttpRequest | None = None
    # A socket's: whether its user and game are known yet, and what waits for them (the
    # server's line for its handshake, config/access_log.py).
    identified: bool = False
    on_identified: Callable[[], None] | None = None

    def identify(self) -> None:
        """The socket's fields are known (or will not be): run what waited for them, once."""
        self.identified = True
        waiting, self.on_identified = self.on_identified, None
        if waiting is not None:
            waiting()

    def current_fields(self) -> dict[str, Any]:
        fields = dict(self.fields)
        if self.request is not None and "user_id" not in fields:
            user = _known_user(self.request)
            if user is not None:
                fields["user_id"], fields["user"] = user.pk, user.get_username()
        return fields

    def all_secrets(self) -> set[str]:
        if self.request is None:
            return self.secrets
        return self.secrets | _request_secrets(self.request)


_current: contextvars.ContextVar[LogContext | None] = contextvars.ContextVar(
    "log_context", default=None
)


def current() -> LogContext | None:
    return _current.get()


def current_fields() -> dict[str, Any]:
    context = _current.get()
    return {} if context is None else context.current_fields()


def new_id() -> str:
    """A request or socket id: 16 hex digits."""
    return random.token_hex(8)


def _clean(fields: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def derived(**fields: Any) -> LogContext:
    """A context with the current one's fields and secrets, plus `fields`."""
    parent = _current.get()
    if parent is None:
        return LogContext(_clean(fields))
    return LogContext(
        {**parent.fields, **_clean(fields)}, set(parent.secrets), request=parent.request
    )


def bind(context: LogContext | None) -> contextvars.Token[LogContext | None]:
    return _current.set(context)


def unbind(token: contextvars.Token[LogContext | None]) -> None:
    _current.reset(token)


@contextmanager
def context(**fields: Any) -> Iterator[LogContext]:
    """`with logs.context(game_id=7):` the lines logged inside say which game."""
    token = _current.set(derived(**fields))
    try:
        yield _current.get()  # type: ignore[misc]
    finally:
        _current.reset(token)


def add(**fields: Any) -> None:
    """Add fields to the bound context (a user once the mail door knows who sent it)."""
    bound = _current.get()
    if bound is not None:
        bound.fields.update(_clean(fields))


def secret(*values: str | None) -> None:
    """Values that must never appear in a line logged in the bound context (a mail password
    read from a command). Without a bound context this does nothing: bind one first."""
    bound = _current.get()
    if bound is not None:
        bound.secrets.update(v for v in values if v and len(v) >= MIN_SECRET_LENGTH)


def detached() -> contextvars.Context:
    """A copy of the current context without the log context: for a task that serves the
    whole process (a heartbeat, a batcher), started while some socket's frame is handled."""
    copy = contextvars.copy_context()
    copy.run(_current.set, None)
    return copy


# --- sockets --------------------------------------------------------------------------------


# Where the server puts a socket's context in its scope, made with the connection so that the
# server's own lines of the socket (config/access_log.py) carry it too.
SCOPE_KEY = "log_context"


def for_socket(scope: dict[str, Any]) -> LogContext:
    """A socket's context: its socket id, its user, the game its URL names; its session key
    and CSRF cookie as secrets. The one the server made with the connection if there is one
    (filled in, and what waited for it run), else a new one."""
    made = scope.get(SCOPE_KEY)
    context = made if isinstance(made, LogContext) else LogContext({"socket_id": new_id()})
    user = scope.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        context.fields["user_id"], context.fields["user"] = user.pk, user.get_username()
    game_id = scope.get("url_route", {}).get("kwargs", {}).get("game_id")
    if game_id is not None:
        context.fields["game_id"] = game_id
    cookies = scope.get("cookies") or {}
    found = {
        cookies.get(settings.SESSION_COOKIE_NAME),
        cookies.get(settings.CSRF_COOKIE_NAME),
    }
    context.secrets.update(v for v in found if v and len(v) >= MIN_SECRET_LENGTH)
    context.identify()
    return context


# --- HTTP requests --------------------------------------------------------------------------


def request_id_from(header: str | None) -> str:
    """The incoming X-Request-ID if it is short and plain (a proxy's id), else a new one."""
    if header and _SAFE_ID.fullmatch(header):
        return header
    return new_id()


class RequestLogContext:
    """The outermost middleware: each request gets an id (the proxy's X-Request-ID when it is
    safe), sent back in the X-Request-ID header, and a log context with it, the game its URL
    names and, once the request knows it, its user.

    The context stays bound after the response leaves the middleware, for Django's own
    "Not Found: /path" line that follows; under ASGI each request runs in its own task, and
    the end of the request unbinds it (request_finished) for a synchronous caller."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request.META.get("HTTP_X_REQUEST_ID"))
        _current.set(LogContext({"request_id": request_id}, request=request))
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]
    ) -> None:
        game_id = kwargs.get("game_id")
        if game_id is not None:
            add(game_id=game_id)
        # The proof a link carries in its path (a reset's or a confirmation's token): never
        # written, wherever the request's lines show it (realtime/log_paths.py masks the
        # path itself in any line).
        secret(*(str(v) for name, v in kwargs.items() if SECRET_NAME.search(name)))


def _request_finished(**_: Any) -> None:
    _current.set(None)


request_finished.connect(_request_finished, dispatch_uid="realtime.logs.request_finished")


def _known_user(request: HttpRequest) -> Any:
    """The request's user if something already looked it up (never a query from here)."""
    user = request.__dict__.get("user")
    if isinstance(user, LazyObject):
        user = request.__dict__.get("_cached_user")
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user


def _request_secrets(request: HttpRequest) -> set[str]:
    """The request's secrets, from what it has already read (its body is not read here)."""
    found: list[Any] = [
        request.COOKIES.get(settings.SESSION_COOKIE_NAME),
        request.COOKIES.get(settings.CSRF_COOKIE_NAME),
        request.META.get("HTTP_COOKIE"),
        request.META.get("HTTP_AUTHORIZATION"),
        request.META.get("HTTP_X_CSRFTOKEN"),
    ]
    session = request.__dict__.get("session")
    if session is not None:
        found.append(getattr(session, "session_key", None))
    for form in (request.GET, request.__dict__.get("_post")):
        for name in form or ():
            if SECRET_NAME.search(name) or name in SECRET_QUERY_NAMES:
                found += form.getlist(name)
    body = request.__dict__.get("_body")
    if (
        isinstance(body, bytes)
        and len(body) <= MAX_JSON_BODY
        and request.content_type == "application/json"
    ):
        with suppress(ValueError, RecursionError):  # a body too deep is refused elsewhere
            found += _secret_values(json.loads(body))
    return {v for v in found if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}


def _secret_values(value: Any, depth: int = 0) -> list[Any]:
    """The values under secret-named keys of a decoded JSON body."""
    if depth > 5:
        return []
    if isinstance(value, dict):
        found: list[Any] = []
        for key, item in value.items():
            if isinstance(key, str) and SECRET_NAME.search(key) and isinstance(item, str):
                found.append(item)
            else:
                found += _secret_values(item, depth + 1)
        return found
    if isinstance(value, list):
        return [v for item in value[:100] for v in _secret_values(item, depth + 1)]
    return []
