"""What a moderator did is shown on the user's next page: each pending notice becomes a
message at the top of the page, once (the open pages were told live already)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from moderation.models import Notice
from realtime.errors import is_outage

# Requests that draw no page: the notice waits for one that does.
NOT_PAGES = ("/api/", "/static/", "/ws/", "/healthz", "/readyz", "/favicon.ico")


class PendingNoticesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            self._show_pending(request)
        except Exception as error:
            # The database is away: the view meets the outage too and answers 503; the
            # notices wait for the next page.
            if not is_outage(error):
                raise
        return self.get_response(request)

    def _show_pending(self, request: HttpRequest) -> None:
        user = getattr(request, "user", None)
        if (
            request.method == "GET"
            and user is not None
            and user.is_authenticated
            and not request.path.startswith(NOT_PAGES)
        ):
            # One indexed query a page for a signed-in user (the pending rows only).
            pending = list(
                Notice.objects.filter(user=user, shown_at__isnull=True).order_by("pk")[:10]
            )
            if pending:
                for notice in pending:
                    messages.warning(request, notice.text)
                Notice.objects.filter(pk__in=[n.pk for n in pending]).update(
                    shown_at=timezone.now()
                )
