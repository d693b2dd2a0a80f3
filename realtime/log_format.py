"""The log's two formats and the filters every line passes (docs/LOGGING.md).

- `LogContextFilter` puts the bound context's fields (realtime/logs.py) on each record: the
  request or socket id, the user, the game, the mail;
- `RedactSecrets` removes secrets from the message and the traceback of each record, before
  any formatter sees them: the secret key and the configured passwords, the bound context's
  session key, CSRF token and form passwords, and whatever a pattern recognises (`password=…`,
  Cookie and Authorization headers, reply-address signatures, password hashes, a URL's
  password);
- `JsonFormatter` writes a record as one JSON object on one line, its traceback included
  (LOG_FORMAT=json, production); the plain format (`make run`, the tests) writes the same
  fields in brackets: `… INFO games.consumers [sock=… user=alice game=12]: …`.

`configure` (settings.LOGGING_CONFIG) also sends Python's warnings and uncaught exceptions
through the log when it is JSON, so that nothing else reaches stderr there.
"""

from __future__ import annotations

import functools
import json
import logging
import logging.config
import re
import sys
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

from django.conf import settings

from realtime import log_paths, logs

REDACTED = "[redacted]"
_NAMES = ("pass", "secret", "token", "session", "key", "signature")
_QUERY_NAMES = "|".join(map(re.escape, logs.SECRET_QUERY_NAMES))
_KEY = r"(?:pass(?:word|wd|phrase)|secret|token|session_?(?:id|key)|api_?key|signature)[\w-]*"
# (words one of which the line must hold, lower-cased: a cheap test first; the pattern; what
# replaces it)
PATTERNS: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    # A header's whole value, however it is written: Cookie: a=b; c=d, 'HTTP_COOKIE': '…'.
    (
        ("cookie", "authorization"),
        re.compile(
            r"""(\b(?:HTTP_)?(?:PROXY_)?AUTHORIZATION|\b(?:HTTP_|SET-)?COOKIE)(["']?\s*[:=]\s*)"""
            r"""(["']?)([^"'\r\n]*)""",
            re.I,
        ),
        rf"\1\2\3{REDACTED}",
    ),
    # password='…', "csrftoken": "…", 'password1': ['…']
    (
        _NAMES,
        re.compile(rf"""({_KEY}["']?\s*[=:]\s*\[?\s*[bu]?(["']))(.*?)(\2)""", re.I),
        rf"\1{REDACTED}\4",
    ),
    # password=…&, sessionid=…;, token: …
    (
        _NAMES,
        re.compile(rf"""({_KEY}["']?\s*[=:]\s*)(?![\s"'\[])([^\s&,;)}}\]>"']+)""", re.I),
        rf"\1{REDACTED}",
    ),
    # The signature of a reply address (games/reply_address.py): pbm+r-1-2-3-<20 hex>@host
    (("+r-",), re.compile(r"(\+r-\d{1,12}-\d{1,12}-\d{1,9}-)[0-9a-f]{20}", re.I), rf"\1{REDACTED}"),
    # A stored password hash: algorithm$…
    (
        ("$",),
        re.compile(r"\b(pbkdf2_sha\d+|argon2|bcrypt(?:_sha256)?|scrypt|md5|sha1)\$[^\s'\"]+"),
        rf"\1${REDACTED}",
    ),
    # An API token wherever it is written (a chat line, a body echoed in an error, a path):
    # dif_ and its 40 characters (accounts/tokens.py), or a part of them.
    (("dif_",), re.compile(r"\bdif_[A-Za-z0-9_-]{8,}"), f"dif_{REDACTED}"),
    # A URL's password: postgres://user:secret@host
    (("://",), re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)[^\s@/]+@", re.I), rf"\1{REDACTED}@"),
    # A query string's secret under a name that does not say so: /tournaments/3/?invite=…
    (
        tuple(f"{name}=" for name in logs.SECRET_QUERY_NAMES),
        re.compile(rf"""([?&](?:{_QUERY_NAMES})=)[^&\s"'#<>]+""", re.I),
        rf"\1{REDACTED}",
    ),
]


_configured: tuple[object, frozenset[str]] | None = None


def configured_secrets() -> frozenset[str]:
    """The secrets in the settings: the secret key, the databases', Redis's and the outgoing
    mail server's passwords. Read again only when the settings change (a test overriding
    them)."""
    global _configured
    holder = getattr(settings, "_wrapped")  # noqa: B009 (the settings object itself)
    if _configured is None or _configured[0] is not holder:
        _configured = (holder, _read_configured_secrets())
    return _configured[1]


def _read_configured_secrets() -> frozenset[str]:
    found: list[Any] = [
        settings.SECRET_KEY,
        *getattr(settings, "SECRET_KEY_FALLBACKS", []),
        getattr(settings, "EMAIL_HOST_PASSWORD", ""),
    ]
    found += [database.get("PASSWORD") for database in settings.DATABASES.values()]
    for name in ("REDIS_URL", "CHANNEL_LAYER_REDIS", "CACHE_REDIS_URL"):
        for url in str(getattr(settings, name, "")).split():
            password = urlsplit(url).password or ""
            found += [password, unquote(password)]  # as written, and as sent
    return frozenset(v for v in found if isinstance(v, str) and len(v) >= logs.MIN_SECRET_LENGTH)


@functools.lru_cache(maxsize=256)
def _spellings(values: frozenset[str]) -> tuple[str, ...]:
    """Secrets as they may appear in a line: themselves, URL-encoded, inside a repr(); the
    longest first."""
    spelled = {
        spelling
        for value in values
        for spelling in (
            value,
            quote(value, safe=""),
            quote_plus(value, safe=""),
            repr(value)[1:-1],
        )
        if len(spelling) >= logs.MIN_SECRET_LENGTH
    }
    return tuple(sorted(spelled, key=len, reverse=True))


def redact(text: str, known: Iterable[str] = ()) -> str:
    """`text` without the secret parts of the site's paths (realtime/log_paths.py), the
    `known` secret values and what the patterns recognise."""
    text = log_paths.mask(text)
    for value in _spellings(frozenset(known)):
        if value in text:
            text = text.replace(value, REDACTED)
    lower = text.lower()
    for hint, pattern, replacement in _PATTERNS:
        if hint.search(lower):
            text = pattern.sub(replacement, text)
    return text


_PATTERNS = [
    (re.compile("|".join(map(re.escape, words))), pattern, replacement)
    for words, pattern, replacement in PATTERNS
]


_traceback_formatter = logging.Formatter()


class RedactSecrets(logging.Filter):
    """No secret leaves in a record: its message is rendered and redacted (arguments too, so
    a request or a dict logged as an argument is redacted as text), its traceback rendered
    and redacted into `exc_text`, which every formatter prints instead of rendering it
    again."""

    def filter(self, record: logging.LogRecord) -> bool:
        bound = logs.current()
        known = configured_secrets()
        if bound is not None:
            try:
                known |= bound.all_secrets()
            except Exception:  # a line is never lost to what its request holds
                known |= bound.secrets
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the message: keep both, as text
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = redact(message, known), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _traceback_formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, known)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, known)
        return True


def plain_context(fields: dict[str, Any]) -> str:
    """` [req=… user=alice game=12]`, or "" without a context."""
    user = fields.get("user", fields.get("user_id"))
    parts = [
        f"{short}={value}"
        for short, value in (
            ("req", fields.get("request_id")),
            ("sock", fields.get("socket_id")),
            ("user", user),
            ("game", fields.get("game_id")),
            ("mail", fields.get("mail")),
        )
        if value is not None
    ]
    return f" [{' '.join(parts)}]" if parts else ""


class LogContextFilter(logging.Filter):
    """Puts the bound context's fields on the record: `request_id`, `socket_id`, `user_id`,
    `user`, `game_id`, `mail` (None when absent; a field given in `extra` is kept),
    `log_context` (the dict) and `context` (the plain format's brackets)."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = logs.current_fields()
        for name in logs.FIELDS:
            if getattr(record, name, None) is not None:
                fields[name] = getattr(record, name)
            else:
                setattr(record, name, fields.get(name))
        record.log_context = fields
        record.context = plain_context(fields)
        return True


class PlainFormatter(logging.Formatter):
    """The readable line, with the context in brackets when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "context"):
            record.context = plain_context(logs.current_fields())
        return super().format(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, the context's fields, the HTTP
    status of Django's request lines, and the traceback (one string) of an error."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "log_context", None)
        if fields is None:
            fields = logs.current_fields()
        entry.update((name, fields[name]) for name in logs.FIELDS if name in fields)
        status = getattr(record, "status_code", None)
        if isinstance(status, int):
            entry["status"] = status
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        trace = [text for text in (record.exc_text, record.stack_info) if text]
        if trace:
            entry["traceback"] = "\n".join(trace)
        return json.dumps(entry, default=str)


def _log_uncaught(kind: type[BaseException], error: BaseException, trace: Any) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, error, trace)
        return
    logging.getLogger("uncaught").critical("uncaught exception", exc_info=(kind, error, trace))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    logging.getLogger("uncaught").critical(
        "uncaught exception in thread %s",
        getattr(args.thread, "name", "?"),
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def configure(config: dict[str, Any]) -> None:
    """settings.LOGGING_CONFIG: the LOGGING dict, and in the JSON format Python's warnings and
    uncaught exceptions as records too (a traceback printed to stderr is many lines)."""
    logging.config.dictConfig(config)
    if getattr(settings, "LOG_FORMAT", "plain") == "json":
        logging.captureWarnings(True)
        sys.excepthook = _log_uncaught
        threading.excepthook = _log_uncaught_in_thread
