"""The site's URLs plus one view with a bug that drags secrets into the log (tests/test_logs.py):
it logs the request's form, cookies and headers, then fails with them and the secret key in its
exception's message, as careless code might; and a mailed link the site does not have."""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from config.urls import urlpatterns as site

logger = logging.getLogger("tests.log_urls")


@csrf_exempt
def explode(request: HttpRequest, game_id: int) -> HttpResponse:
    who = request.user.get_username()  # as every view that checks the player
    sent = json.loads(request.body) if request.content_type == "application/json" else request.POST
    logger.warning("game %s: %s sent %s with cookies %r", game_id, who, sent, request.COOKIES)
    raise RuntimeError(
        f"game {game_id} broke on {sent} {dict(request.GET)} {request.META} {settings.SECRET_KEY}"
    )


def unsubscribe(request: HttpRequest, signature: str) -> HttpResponse:
    """A mailed link the site does not have (yet): realtime/log_paths.py masks its secret
    from its route alone."""
    return HttpResponse("unsubscribed")


urlpatterns = [
    path("api/games/<int:game_id>/explode", explode),
    path("games/<int:game_id>/explode", explode),
    path("mail/<int:user_id>/<str:signature>/unsubscribe/", unsubscribe, name="unsubscribe"),
    *site,
]
