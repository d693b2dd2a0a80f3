"""Requests with a NUL character in their path, query or form fields are refused up front.

PostgreSQL can neither store nor compare text containing NUL, so a lookup such as
`/@ab%00cd/` or `/challenge/ab%00cd/` ended in a database error and a 500. No name, token
or field of this site can contain one; JSON bodies and socket messages are checked where
they are decoded (realtime/protocol.py).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from realtime.api_errors import API_PREFIX, error

MESSAGE = "A request may not contain the NUL character."


def has_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path or "\x00" in unquote(request.META.get("QUERY_STRING", "")):
        return True
    if request.method == "POST" and request.content_type in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        return any("\x00" in value for _, values in request.POST.lists() for value in values)
    return False


class RefuseNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if has_nul(request):
            if request.path.startswith(API_PREFIX):
                return error(400, "bad_request", MESSAGE)
            return HttpResponseBadRequest(MESSAGE, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
