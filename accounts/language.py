"""Which language a person reads: the account's, else the switcher's cookie, else the browser's.

Pages: LanguageMiddleware (Django's LocaleMiddleware, with the account's choice first).
Sockets: realtime/language.py reads the same from a connection's scope. Mail and notices sent
to someone who is not the one asking: `for_user` (the account's choice, else English).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django.views.i18n import JavaScriptCatalog

from accounts.services import do_set_language
from realtime.language import of_user, supported


def for_user(user: Any) -> str:
    """The language of what is sent to this person when they are not the one asking."""
    return supported(getattr(user, "language", "")) or str(settings.LANGUAGE_CODE)


class LanguageMiddleware(LocaleMiddleware):
    """The account's language first, then Django's order: cookie, Accept-Language."""

    def process_request(self, request: HttpRequest) -> None:
        chosen = of_user(getattr(request, "user", None))
        if chosen is None:
            super().process_request(request)
            return
        translation.activate(chosen)
        request.LANGUAGE_CODE = chosen


@require_POST
def choose(request: HttpRequest) -> HttpResponse:
    """The switcher: remembers the language in a cookie and, when logged in, on the account.

    An unknown code changes nothing (the page comes back as it was); "" goes back to the
    browser's language.
    """
    wanted = request.POST.get("language", "")
    code = supported(wanted)
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    response = HttpResponseRedirect(target)
    if wanted and code is None:
        return response
    if request.user.is_authenticated:
        do_set_language(user=request.user, language=code or "")
    if code is None:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    else:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            code,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
            secure=request.is_secure(),
        )
    return response


def catalog_version(language: str) -> str:
    """Changes whenever that language's compiled client strings change (a deploy with new
    translations): the catalog's address carries it, so browsers may keep one for a year."""
    path = _compiled_client_strings(language)
    try:
        found = path.stat()
    except FileNotFoundError:
        return _catalog_version(path, None)
    return _catalog_version(path, (found.st_mtime_ns, found.st_size))


def _compiled_client_strings(language: str) -> Path:
    return Path(settings.LOCALE_PATHS[0]) / language / "LC_MESSAGES" / "djangojs.mo"


@lru_cache(maxsize=16)
def _catalog_version(path: Path, stamp: tuple[int, int] | None) -> str:
    # Read once per file as it is (the stamp changes when the file does).
    content = path.read_bytes() if stamp is not None else b""
    return hashlib.sha256(content).hexdigest()[:12]


@lru_cache(maxsize=16)
def _catalog_body(language: str, version: str) -> bytes:
    # Django's catalog is built from the whole translation on every request: built once per
    # language and version here (every new visitor's first page asks for it).
    request = HttpRequest()
    request.method = "GET"
    with translation.override(language):
        return bytes(JavaScriptCatalog.as_view()(request).content)


@require_GET
def catalog(request: HttpRequest, language: str, version: str) -> HttpResponse:
    """The client's strings of a language (Django's JavaScript catalog), for a year when the
    address names the current version, else briefly (a page from before a deploy)."""
    code = supported(language)
    if code is None or code != language:
        raise Http404("No such language.")
    current = catalog_version(code)
    response = HttpResponse(
        _catalog_body(code, current), content_type="text/javascript; charset=utf-8"
    )
    if version == current:
        response["Cache-Control"] = "public, max-age=31536000, immutable"
    else:
        response["Cache-Control"] = "public, max-age=300"
    return response


def in_language(document: Path) -> Path:
    """A Markdown document's translation in the active language (docs/X.<language>.md beside
    docs/X.md), or the document itself when there is none."""
    translated = document.with_suffix(f".{translation.get_language()}{document.suffix}")
    return translated if translated.is_file() else document
