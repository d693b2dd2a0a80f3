"""The account's settings pages (/settings/...): password, e-mail address, two-factor
sign-in. Each decodes the form, calls one service and answers; the pages are for one's own
account only, so no page takes a user from its address."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts import emails, services, tokens, twofactor, views
from accounts.forms import CodeForm, CurrentPasswordForm, EmailChangeForm
from accounts.models import User
from realtime import limits
from realtime.errors import ServiceError

View = Callable[..., HttpResponse]
TOO_MANY_CODES = gettext_lazy("Too many wrong codes: wait 15 minutes and try again.")


def registered_only(view: View) -> View:
    """Signed in, and not as a guest: a guest has no password or address to manage."""

    @login_required
    @never_cache
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_guest or request.user.is_bot:
            return render(request, "accounts/guest.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


def settings_page(request: HttpRequest, template: str, status: int = 200, **context: Any) -> Any:
    return render(request, f"accounts/{template}", {"section": template, **context}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    """The e-mail notices' settings live on one's own profile page (its form posts here): a
    visit, from a bookmark or a guess at the address, goes to that form rather than to an
    error."""
    if request.method == "POST":
        return views.notifications(request)
    return redirect(reverse("profile", args=[request.user.username]) + "#notifications-form")


@require_http_methods(["GET"])
@registered_only
def account(request: HttpRequest) -> HttpResponse:
    user: User = request.user
    return settings_page(
        request,
        "account.html",
        two_factor=twofactor.enabled(user),
        codes_left=twofactor.recovery_codes_left(user),
    )


@require_http_methods(["GET", "POST"])
@registered_only
def password(request: HttpRequest) -> HttpResponse:
    """Django's change form (the old password, the new one twice, the validators); this
    session stays signed in, every other one ends with its sockets."""
    form = PasswordChangeForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        services.do_change_password(
            user=request.user,
            password=form.cleaned_data["new_password1"],
            keep_session=request.session.session_key,
        )
        update_session_auth_hash(request, request.user)
        messages.success(
            request, _("Your password is changed; your other sessions are signed out.")
        )
        return redirect("settings-account")
    return settings_page(request, "password.html", form=form)


@require_http_methods(["GET", "POST"])
@registered_only
def email(request: HttpRequest) -> HttpResponse:
    """Ask for a new address (or a link for the unconfirmed current one): the link goes to
    that address, which replaces the old one when it is opened."""
    user: User = request.user
    form = EmailChangeForm(user, request.POST or None)
    if request.method == "POST" and request.POST.get("action") == "cancel":
        emails.do_cancel_change(user=user)
        messages.info(request, _("The address waiting for confirmation is forgotten."))
        return redirect("settings-email")
    if request.method == "POST" and form.is_valid():
        if limits.email_change_refused(request, user.pk):
            return render(
                request,
                "429.html",
                {"message": _("Too many links sent lately: try in an hour.")},
                status=429,
            )
        address = form.cleaned_data["email"]
        if emails.do_request_change(user=user, address=address):
            messages.success(
                request,
                _("We sent a link to %(address)s: it becomes your address when you open it.")
                % {"address": address},
            )
        else:
            messages.info(
                request, _("%(address)s is already your confirmed address.") % {"address": address}
            )
        return redirect("settings-email")
    return settings_page(request, "email.html", form=form)


@require_http_methods(["GET", "POST"])
def email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The mailed link: a page with a Confirm button (a mail program's link preview must not
    change the account), whoever is signed in: the link itself is the proof."""
    try:
        if request.method == "POST":
            user = emails.do_confirm(token)
            return render(request, "accounts/email_confirmed.html", {"confirmed": user.email})
        user, address = emails.check_confirmation(token)
    except ServiceError as error:
        return render(request, "accounts/email_confirm.html", {"error": error.message}, status=400)
    return render(request, "accounts/email_confirm.html", {"address": address})


@require_http_methods(["GET", "POST"])
@registered_only
def two_factor(request: HttpRequest) -> HttpResponse:
    """Two-factor sign-in: start a setup, finish it with a code (the recovery codes are then
    shown once), make new recovery codes, or turn it off (with a code or the password)."""
    user: User = request.user
    action = request.POST.get("action", "") if request.method == "POST" else ""
    context: dict[str, Any] = {}
    try:
        if action in {"enable", "codes", "disable"} and limits.second_factor_locked(
            request, user.pk
        ):
            return render(request, "429.html", {"message": TOO_MANY_CODES}, status=429)
        if action == "start":
            twofactor.do_start_setup(user=user)
            return redirect("settings-two-factor")
        if action == "enable":
            context["recovery_codes"] = _with_code(
                request, lambda code: twofactor.do_enable(user=user, code=code)
            )
            messages.success(request, _("Two-factor sign-in is on."))
        elif action == "codes":
            context["recovery_codes"] = _with_code(
                request, lambda code: twofactor.do_new_recovery_codes(user=user, code=code)
            )
            messages.success(request, _("Your new recovery codes replace the old ones."))
        elif action == "disable":
            _check_code_or_password(request, user)
            twofactor.do_disable(user=user)
            messages.success(request, _("Two-factor sign-in is off."))
            return redirect("settings-two-factor")
        elif action:
            raise ServiceError("bad_action", _("That is not something this page does."))
    except ServiceError as error:
        context["error"] = error.message
    setup = twofactor.pending_setup(user)
    if setup is not None:
        uri = twofactor.provisioning_uri(user, setup.secret)
        context.update(setup=setup, qr=twofactor.qr_svg(uri), uri=uri)
    status = 400 if "error" in context else 200
    return settings_page(
        request,
        "two_factor.html",
        status=status,
        enabled=twofactor.enabled(user),
        codes_left=twofactor.recovery_codes_left(user),
        code_form=CodeForm(),
        **context,
    )


def _with_code(request: HttpRequest, action: Callable[[str], list[str]]) -> list[str]:
    try:
        return action(str(request.POST.get("code", "")))
    except ServiceError as error:
        if error.code == "wrong_code":
            limits.second_factor_failed(request, request.user.pk)
        raise


def _check_code_or_password(request: HttpRequest, user: User) -> None:
    """Turning the second factor off takes a right code or the password."""
    if request.POST.get("code"):
        _with_code(request, lambda code: [twofactor.do_verify(user=user, code=code)])
        return
    form = CurrentPasswordForm(user, request.POST)
    if not form.is_valid():
        limits.second_factor_failed(request, user.pk)
        raise ServiceError("wrong_password", _("Give a code from your app, or your password."))


@require_http_methods(["GET", "POST"])
@registered_only
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Personal access tokens (accounts/tokens.py): create one (its secret shown on this
    answer only), see them, revoke one."""
    user: User = request.user
    error, created, status = "", None, 200
    if request.method == "POST":
        try:
            action = request.POST.get("action")
            if action == "create":
                token, secret = tokens.create_token(
                    user=user,
                    name=request.POST.get("name", ""),
                    scopes=request.POST.getlist("scopes"),
                )
                created = {"name": token.name, "secret": secret, "scopes": token.scopes}
            elif action == "revoke":
                token_id = request.POST.get("token", "")
                if not token_id.isdigit():
                    raise ServiceError("no_such_token", _("You have no such token."))
                tokens.revoke(user=user, token_id=int(token_id))
                messages.success(request, _("The token is revoked: it no longer works."))
                return redirect("settings-tokens")
            else:
                raise ServiceError("bad_action", _("That is not something this page does."))
        except ServiceError as refusal:
            error, status = refusal.message, 400
    return settings_page(
        request,
        "tokens.html",
        status=status,
        error=error,
        created=created,
        scopes=list(tokens.SCOPES.items()),
        chosen=request.POST.getlist("scopes") if error else [],
        name=request.POST.get("name", "") if error else "",
        tokens=tokens.live(user).order_by("-created_at"),
        is_bot_account=user.is_bot_account,
    )
