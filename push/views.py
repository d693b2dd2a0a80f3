"""Push notices over HTTP (docs/PROTOCOL.md, "Push notices"): the site's public key, a
browser's subscription, the kinds a player wants (JSON, and the profile page's form); and the
installable site: the service worker at the root (/sw.js) and the web app manifest."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from push import subscriptions
from push.models import KINDS
from push.protocol import KindsBody, SubscribeBody, UnsubscribeBody
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder

SUBSCRIBE_BODY = decoder(SubscribeBody)
UNSUBSCRIBE_BODY = decoder(UnsubscribeBody)
KINDS_BODY = decoder(KindsBody)
THEME_COLOUR = "#1d2430"
BACKGROUND_COLOUR = "#f6f4ef"


@require_GET
def public_key(request: HttpRequest) -> JsonResponse:
    """The key browsers subscribe with (PushManager.subscribe's applicationServerKey)."""
    return JsonResponse({"key": settings.VAPID_PUBLIC_KEY})


@require_http_methods(["POST", "DELETE"])
def subscription(request: HttpRequest) -> JsonResponse:
    """POST: this browser's subscription (PushSubscription.toJSON()); DELETE {"endpoint"}:
    forget it."""
    try:
        if request.method == "DELETE":
            gone = decode(request.body or b"{}", UNSUBSCRIBE_BODY)
            removed = subscriptions.unsubscribe(user=request.user, endpoint=gone.endpoint)
            return JsonResponse({"removed": removed})
        body = decode(request.body or b"{}", SUBSCRIBE_BODY)
        kinds = subscriptions.subscribe(
            user=request.user,
            endpoint=body.endpoint,
            p256dh=body.keys.p256dh,
            auth=body.keys.auth,
            language=translation.get_language() or "",
            session_key=request.session.session_key or "",
        )
    except ServiceError as error:
        return refuse(error)
    return JsonResponse(
        {"kinds": kinds, "browsers": subscriptions.browsers(request.user)}, status=201
    )


@require_http_methods(["GET", "POST"])
def kinds(request: HttpRequest) -> JsonResponse:
    """GET: the kinds the player wants; POST {"kind": bool, ...}: change some."""
    try:
        if not request.user.is_authenticated:
            raise ServiceError("not_logged_in", _("Log in (or play as a guest) first."))
        if request.method == "POST":
            body = decode(request.body or b"{}", KINDS_BODY)
            changes = {
                kind: getattr(body, kind) for kind in KINDS if getattr(body, kind) is not None
            }
            subscriptions.set_kinds(user=request.user, changes=changes)
    except ServiceError as error:
        return refuse(error)
    return JsonResponse(
        {
            "kinds": subscriptions.kinds_of(request.user),
            "browsers": subscriptions.browsers(request.user),
        }
    )


@require_POST
@login_required
def settings_form(request: HttpRequest) -> HttpResponse:
    """The profile page's form: every kind, ticked or not."""
    wanted = set(request.POST.getlist("kinds"))
    subscriptions.set_kinds(user=request.user, changes={kind: kind in wanted for kind in KINDS})
    messages.success(request, _("Your notice settings are saved."))
    return redirect(reverse("profile", args=[request.user.username]) + "#push-form")


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker, from the site's root so that its scope is the whole site."""
    response = render(request, "push/sw.js", content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    # Browsers look for a new worker at least daily; a deploy's should be found at once.
    patch_cache_control(response, no_cache=True, max_age=0)
    return response


@require_GET
def manifest(request: HttpRequest) -> JsonResponse:
    """The web app manifest: the site installed on a phone's home screen opens the lobby in a
    window of its own."""
    data: dict[str, Any] = {
        "id": "/",
        "name": "Diffusion online",
        "short_name": "Diffusion",
        "description": _(
            "Play Diffusion, Four-rank Diffusion, Diffusion Chess and ZigZag with people "
            "and the computer."
        ),
        "lang": translation.get_language() or settings.LANGUAGE_CODE,
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOUR,
        "background_color": BACKGROUND_COLOUR,
        "icons": [
            {"src": static("img/icon-192.png"), "sizes": "192x192", "type": "image/png"},
            {"src": static("img/icon-512.png"), "sizes": "512x512", "type": "image/png"},
            {"src": static("img/favicon.svg"), "sizes": "any", "type": "image/svg+xml"},
        ],
    }
    response = JsonResponse(
        data, content_type="application/manifest+json", json_dumps_params={"ensure_ascii": False}
    )
    patch_vary_headers(response, ["Accept-Language", "Cookie"])
    patch_cache_control(response, max_age=3600)
    return response
