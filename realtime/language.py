"""Which shipped language a reader is served in, from what any door knows of them.

The order is a page's: the account's choice (`User.language`), the switcher's cookie, the
browser's Accept-Language, English. Pages go through accounts.language.LanguageMiddleware;
sockets read their scope here (realtime/ws.py translates what a socket says under it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils.translation import trans_real


def shipped() -> frozenset[str]:
    return frozenset(code for code, _name in settings.LANGUAGES)


def supported(code: str | None) -> str | None:
    """The shipped language a code names ("fr-CA" -> "fr"), or None."""
    if not code:
        return None
    code = code.lower().replace("_", "-")
    languages = shipped()
    if code in languages:
        return code
    base = code.split("-")[0]
    return base if base in languages else None


def accepted(header: str) -> str | None:
    """The first shipped language of an Accept-Language header, in the browser's order."""
    for code, _quality in trans_real.parse_accept_lang_header(header):
        if code == "*":
            break
        found = supported(code)
        if found:
            return found
    return None


def of_user(user: Any) -> str | None:
    """The language an account chose, or None (then the browser's applies)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return supported(getattr(user, "language", ""))


def for_scope(scope: Mapping[str, Any]) -> str:
    """The language of a socket's connection, chosen as a page's would be."""
    chosen = of_user(scope.get("user"))
    if chosen:
        return chosen
    cookies = scope.get("cookies") or {}
    chosen = supported(cookies.get(settings.LANGUAGE_COOKIE_NAME))
    if chosen:
        return chosen
    for name, value in scope.get("headers") or ():
        if name == b"accept-language":
            found = accepted(value.decode("latin-1"))
            if found:
                return found
    return str(settings.LANGUAGE_CODE)
