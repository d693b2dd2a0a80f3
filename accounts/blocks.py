"""Blocking users over HTTP: JSON for clients (/api/blocks) and the profile page's button."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts import services
from realtime.errors import ServiceError, http_status


def _refuse(error: ServiceError) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": error.code, "message": error.message}}, status=http_status(error.code)
    )


def _name_in_body(request: HttpRequest) -> Any:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise ServiceError("bad_json", _("The body is not JSON.")) from None
    return body.get("user") if isinstance(body, dict) else None


@require_http_methods(["GET", "POST"])
def blocks(request: HttpRequest) -> JsonResponse:
    """GET: the names you block. POST {"user": name}: block them."""
    if not request.user.is_authenticated:
        return _refuse(ServiceError("not_logged_in", _("Log in first.")))
    try:
        if request.method == "POST":
            services.do_block(user=request.user, username=_name_in_body(request))
    except ServiceError as error:
        return _refuse(error)
    return JsonResponse({"blocked": services.blocked_names(request.user)})


@require_POST
def unblock(request: HttpRequest) -> JsonResponse:
    """POST {"user": name}: stop blocking them."""
    if not request.user.is_authenticated:
        return _refuse(ServiceError("not_logged_in", _("Log in first.")))
    try:
        services.do_unblock(user=request.user, username=_name_in_body(request))
    except ServiceError as error:
        return _refuse(error)
    return JsonResponse({"blocked": services.blocked_names(request.user)})


@require_POST
@login_required
def block_form(request: HttpRequest, username: str) -> HttpResponse:
    """The profile page's Block / Unblock button."""
    unblocking = request.POST.get("action") == "unblock"
    try:
        if unblocking:
            target = services.do_unblock(user=request.user, username=username)
            messages.success(
                request, _("You no longer block %(name)s.") % {"name": target.username}
            )
        else:
            target = services.do_block(user=request.user, username=username)
            messages.success(
                request,
                _("You block %(name)s: no challenges and no chat from them.")
                % {"name": target.username},
            )
    except ServiceError as error:
        messages.error(request, error.message)
        return redirect("home")
    return redirect("profile", username=target.username)
