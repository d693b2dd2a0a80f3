"""The settings pages that reach beyond the account: closing it, downloading one's data.
Both are for the signed-in player's own account only: neither takes a user from its address."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts import twofactor
from accounts.forms import CloseAccountForm
from accounts.settings_views import TOO_MANY_CODES, registered_only
from privacy import closure
from privacy import export as exporting
from realtime import limits
from realtime.errors import ServiceError


@require_http_methods(["GET", "POST"])
@registered_only
def close(request: HttpRequest) -> HttpResponse:
    """Close one's own account: the password, and the second factor's code when it is on."""
    user = request.user
    needs_code = twofactor.enabled(user)
    form = CloseAccountForm(user, request.POST or None)
    status = 200
    if request.method == "POST":
        if needs_code and limits.second_factor_locked(request, user.pk):
            return render(request, "429.html", {"message": TOO_MANY_CODES}, status=429)
        if form.is_valid():
            try:
                if needs_code:
                    twofactor.do_verify(user=user, code=form.cleaned_data["code"])
            except ServiceError as error:
                limits.second_factor_failed(request, user.pk)
                form.add_error("code", error.message)
            else:
                closure.close_account(user=user, reason="closed by its player")
                logout(request)
                messages.info(request, _("Your account is closed. Thank you for playing."))
                return redirect("home")
        status = 400
    return render(
        request,
        "accounts/close.html",
        {"section": "close.html", "form": form, "needs_code": needs_code},
        status=status,
    )


@never_cache
@require_GET
@login_required
def export(request: HttpRequest) -> HttpResponse:
    """The signed-in player's data as a JSON file to save."""
    data = exporting.export(request.user)
    response = HttpResponse(
        json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1),
        content_type="application/json; charset=utf-8",
    )
    stamp = timezone.now().strftime("%Y-%m-%d")
    name = f"diffusion-{request.user.username}-{stamp}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
