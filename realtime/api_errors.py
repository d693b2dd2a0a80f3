"""Every answer under /api/ is JSON, errors included.

Views answer the refusals they know ({"error": {"code", "message"}}); this middleware covers
the rest in one place, so a client of the API never receives an HTML page or a traceback:
a body over Django's limit is `too_large` 413 and an unreadable request (or a form where JSON
is read) `bad_request` 400 (logged in one line), an unexpected exception (logged with its
traceback) is `server_error` 500, an unknown path
`not_found` 404, a wrong method `method_not_allowed` 405 and a CSRF refusal `csrf_failed` 403.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.http.request import RawPostDataException
from django.shortcuts import render
from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from realtime import metrics
from realtime.errors import UNAVAILABLE, ServiceError, http_status, is_outage

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"

# Status -> (code, message) for error answers that did not come from our views (the message
# said in the reader's language: plain()).
PLAIN = {
    400: ("bad_request", gettext_noop("The request could not be read.")),
    403: (
        "csrf_failed",
        gettext_noop("Send the CSRF token (cookie csrftoken) in the X-CSRFToken header."),
    ),
    404: ("not_found", gettext_noop("There is no such API endpoint.")),
    405: ("method_not_allowed", gettext_noop("This endpoint does not take that HTTP method.")),
    500: ("server_error", gettext_noop("Something went wrong on the server.")),
}


def error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def plain(status: int) -> JsonResponse:
    """The answer of PLAIN for `status` (500's for a status it does not list)."""
    code, message = PLAIN.get(status, PLAIN[500])
    return error(status, code, _(message))


def refuse(refusal: ServiceError) -> JsonResponse:
    """A service's refusal as the API answers it: its code, message and HTTP status."""
    return error(http_status(refusal.code), refusal.code, refusal.message)


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        return plain(response.status_code)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            if is_outage(exception):
                metrics.DATABASE_ERRORS.labels("http").inc()
                logger.warning(
                    "%s %s: database unreachable (%s)", request.method, request.path, exception
                )
                return render(request, "503.html", {"message": _(UNAVAILABLE)}, status=503)
            return None  # Django's own pages (500.html, 404.html)
        if isinstance(exception, Http404):
            return plain(404)
        if isinstance(exception, RequestDataTooBig):
            logger.warning("API %s %s: body over the limit", request.method, request.path)
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            return error(
                413,
                "too_large",
                _("A request body has at most %(limit)s bytes.")
                % {"limit": formats.number_format(limit, force_grouping=True)},
            )
        if isinstance(exception, RawPostDataException):
            # A form-encoded body (read as a form by the CSRF check) to an endpoint of JSON.
            return error(
                400, "bad_request", _("Send the body as JSON (Content-Type: application/json).")
            )
        if isinstance(exception, SuspiciousOperation | UnreadablePostError):
            logger.warning(
                "API %s %s: unreadable request (%s)", request.method, request.path, exception
            )
            return plain(400)
        if is_outage(exception):
            metrics.DATABASE_ERRORS.labels("http").inc()
            logger.warning(
                "API %s %s: database unreachable (%s)", request.method, request.path, exception
            )
            return error(503, "unavailable", _(UNAVAILABLE))
        logger.exception("API %s %s failed", request.method, request.path)
        return plain(500)
