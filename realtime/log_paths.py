"""The secret parts of the site's addresses, read from the URLconf (docs/LOGGING.md).

A mailed or shared link carries its proof in its path: a password reset
(`/password-reset/<uidb64>/<token>/`), an address confirmation
(`/settings/email/confirm/<token>/`), a challenge (`/challenge/<token>/`). The path is in the
access line of every request to it, in Django's "Bad Request: /…" and "Not Found: /…" lines
and in an error's traceback; written as it is, anyone reading the log could use the link.

Which parts are secret is not listed here but read from the URLconf: every URL parameter whose
name says it is one (`logs.SECRET_NAME`: token, secret, signature, password, session key, API
key). A link added later with `<str:token>` in its route is masked without a change here.
`mask` replaces those parts with `[redacted]` wherever such a path appears in a line; a
tournament's invitation, the one secret carried in a query string under a name that does not
say so (`?invite=`), is masked by a pattern of realtime/log_format.py.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from realtime import logs

REDACTED = "[redacted]"
# What a parameter may match inside a log line: a path segment ends at a slash and, in a line,
# at a space, a quote, a query string or an angle bracket (Django's own classes would let a
# last segment run on into the rest of the line).
_SEGMENT = r"""[^/\s"'?#<>]+"""
_ANY_PATH = r"""[^\s"'?#<>]+"""
_CONVERTERS = {"[^/]+": _SEGMENT, ".+": _ANY_PATH}
_GROUP = re.compile(r"\(\?P<(\w+)>")
_SPECIAL = set(".^$*+?{}[]|()")


@dataclass(frozen=True, slots=True)
class SecretRoute:
    """A route with secret parameters, as it may appear in a line."""

    hint: str  # its literal beginning ("/password-reset/"), looked for before the pattern
    pattern: re.Pattern[str]
    secret_groups: tuple[str, ...]  # the pattern's groups to mask
    route: str  # as the URLconf spells it, for the tests and the docs

    def masked(self, found: re.Match[str]) -> str:
        """The path `found` with its secret parameters replaced."""
        start, text = found.start(), found.group(0)
        spans = sorted(found.span(name) for name in self.secret_groups if found.start(name) >= 0)
        for begin, end in reversed(spans):
            text = text[: begin - start] + REDACTED + text[end - start :]
        return text


def _body(regex: str) -> str:
    """A Django pattern's regex without its anchors."""
    regex = regex.removeprefix("^")
    for end in (r"\Z", "$"):
        if regex.endswith(end) and not regex.endswith("\\" + end):
            return regex[: -len(end)]
    return regex


def _literal_start(regex: str) -> str:
    """The literal text a regex begins with ("password-reset/" of "password\\-reset/(?P…")."""
    found: list[str] = []
    index = 0
    while index < len(regex):
        char = regex[index]
        if char == "\\" and index + 1 < len(regex) and not regex[index + 1].isalnum():
            found.append(regex[index + 1])
            index += 2
            continue
        if char == "\\" or char in _SPECIAL:
            if char in "*?{" and found:
                found.pop()  # the character before is optional
            break
        found.append(char)
        index += 1
    return "".join(found)


def _group_end(regex: str, start: int) -> int:
    """The index after the group that opens at `start`."""
    depth, index, in_class = 0, start, False
    while index < len(regex):
        char = regex[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if regex[index + 1 : index + 2] == "]":
                index += 1  # a "]" first in a class is a character of it
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(regex)


def _compile(regexes: list[str], route: str) -> SecretRoute | None:
    """The route of `regexes` (an include's prefixes, then the pattern) as it appears in a
    line, if one of its parameters is a secret."""
    source = "".join(_body(regex) for regex in regexes)
    for django_class, ours in _CONVERTERS.items():
        source = source.replace(f">{django_class})", f">{ours})")
    secret: list[str] = []
    number = iter(range(1000))

    def rename(found: re.Match[str]) -> str:
        # Each group gets a name of its own: an include's prefix and its route may both name
        # a parameter, which one pattern cannot.
        name = f"p{next(number)}"
        if logs.SECRET_NAME.search(found.group(1)):
            secret.append(name)
        return f"(?P<{name}>"

    source = _GROUP.sub(rename, source)
    if not secret:
        return None
    # What follows the last secret is not needed to recognise it: a link cut short after its
    # token (`/challenge/<token>` without its slash, which Django redirects) is masked too.
    source = source[: _group_end(source, source.index(f"(?P<{secret[-1]}>"))]
    return SecretRoute(
        hint="/" + _literal_start(source),
        pattern=re.compile("/" + source),
        secret_groups=tuple(secret),
        route=route,
    )


def _walk(patterns: Iterable[Any], prefix: list[Any]) -> Iterable[SecretRoute]:
    from django.urls import URLResolver

    for entry in patterns:
        parts = [*prefix, entry.pattern]
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, parts)
            continue
        route = _compile([part.regex.pattern for part in parts], "".join(map(str, parts)))
        if route is not None:
            yield route


def read_routes(urlconf: str | None = None) -> tuple[SecretRoute, ...]:
    """Every route of the URLconf with a secret parameter."""
    from django.urls import get_resolver

    return tuple(_walk(get_resolver(urlconf).url_patterns, []))


_cache: dict[str, Any] = {"resolver": None, "routes": ()}
_reading = threading.local()


def secret_routes() -> tuple[SecretRoute, ...]:
    """The routes of the URLconf in use, read once (again when a test overrides it).

    Not before the apps are loaded, and not while they are being read (a line logged while
    the URLconf is imported): no request has been served then."""
    from django.apps import apps
    from django.urls import get_resolver

    if not apps.ready or getattr(_reading, "busy", False):
        return ()
    resolver = get_resolver()
    if _cache["resolver"] is not resolver:
        _reading.busy = True
        try:
            routes = tuple(_walk(resolver.url_patterns, []))
        finally:
            _reading.busy = False
        _cache.update(resolver=resolver, routes=routes)
    routes_read: tuple[SecretRoute, ...] = _cache["routes"]
    return routes_read


def mask(text: str, routes: Iterable[SecretRoute] | None = None) -> str:
    """`text` with the secret parameters of every path of `routes` (the URLconf's) in it
    replaced by [redacted]."""
    for route in secret_routes() if routes is None else routes:
        if route.hint in text:
            text = route.pattern.sub(route.masked, text)
    return text
