"""Signing up, playing as a guest, signing in (with the second factor when it is on), and
the account's e-mail settings."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import services, twofactor
from accounts.forms import CodeForm, ControlsForm, NotificationsForm, SignUpForm
from accounts.models import User
from realtime import limits
from realtime.errors import ServiceError

BACKEND = "django.contrib.auth.backends.ModelBackend"
TOO_MANY_ACCOUNTS = gettext_lazy(
    "Too many new accounts from your address lately: try again in an hour."
)


def too_many(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "429.html", {"message": message}, status=429)


class ThrottledLoginView(LoginView):
    """Django's log-in, refused for a while after too many failures for the account or from
    the address: the right password is refused too, so guessing gets nowhere."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if limits.login_locked(request, self._username()):
            form = self.get_form()
            form.add_error(None, _("Too many failed log-ins: wait 15 minutes and try again."))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: object) -> HttpResponse:
        limits.login_failed(self.request, self._username())
        return super().form_invalid(form)

    def form_valid(self, form: Any) -> HttpResponse:
        """The password is right: sign in, or, with the second factor on, remember who is
        half-way in (the session is not signed in) and ask for the code."""
        user = form.get_user()
        if not twofactor.enabled(user):
            return super().form_valid(form)
        self.request.session[PENDING] = {
            "user": user.pk,
            "backend": user.backend,
            "at": time.time(),
            "next": self.get_success_url(),
        }
        return redirect("login-two-factor")

    def _username(self) -> str:
        return str(self.request.POST.get("username", ""))[:150]


# The session key of a sign-in waiting for its second factor.
PENDING = "two_factor_sign_in"
TOO_MANY_CODES = gettext_lazy("Too many wrong codes: wait 15 minutes and try again.")


def _pending_user(request: HttpRequest) -> tuple[User, dict[str, Any]] | None:
    pending = request.session.get(PENDING)
    if not isinstance(pending, dict):
        return None
    if time.time() - float(pending.get("at", 0)) > settings.TWO_FACTOR_SIGN_IN_SECONDS:
        request.session.pop(PENDING, None)
        return None
    user = User.objects.filter(pk=pending.get("user"), is_active=True).first()
    return (user, pending) if user is not None else None


@never_cache
@require_http_methods(["GET", "POST"])
def login_two_factor(request: HttpRequest) -> HttpResponse:
    """The second step of signing in: a code from the app or a recovery code. Wrong codes are
    counted per account and per address; the step lapses after TWO_FACTOR_SIGN_IN_SECONDS."""
    found = _pending_user(request)
    if found is None:
        messages.info(request, _("Sign in again: the code was not given in time."))
        return redirect("login")
    user, pending = found
    page = "registration/login_two_factor.html"
    if request.method == "POST":
        if limits.second_factor_locked(request, user.pk):
            return render(request, page, {"form": CodeForm(), "error": TOO_MANY_CODES}, status=429)
        try:
            kind = twofactor.do_verify(user=user, code=str(request.POST.get("code", "")))
        except ServiceError as error:
            limits.second_factor_failed(request, user.pk)
            return render(request, page, {"form": CodeForm(), "error": error.message}, status=400)
        request.session.pop(PENDING, None)
        login(request, user, backend=str(pending["backend"]))
        if kind == "recovery":
            left = twofactor.recovery_codes_left(user)
            messages.warning(
                request,
                _("You used a recovery code: %(left)s left. Make new ones in your settings.")
                % {"left": left},
            )
        return redirect(_safe(request, str(pending.get("next") or "/")))
    return render(request, page, {"form": CodeForm()})


def _safe(request: HttpRequest, target: str) -> str:
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return "/"


@require_POST
@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    """Change one's own correspondence e-mail setting (the profile page's form)."""
    form = NotificationsForm(request.POST)
    if form.is_valid():
        services.do_set_notifications(
            user=request.user,
            email_on_move=form.cleaned_data["email_on_move"],
            email_on_follow=form.cleaned_data["email_on_follow"],
            mail_pictures=form.cleaned_data["mail_pictures"],
        )
        messages.success(request, _("Your e-mail settings are saved."))
    else:
        messages.error(request, _("Those settings are not ones this form has."))
    return redirect("profile", username=request.user.username)


@require_http_methods(["GET", "POST"])
@login_required
def privacy(request: HttpRequest) -> HttpResponse:
    """Who may challenge me, chat with me, follow me (/settings/privacy/)."""
    user = request.user
    if request.method == "POST":
        form = ControlsForm(request.POST)
        if form.is_valid():
            services.do_set_controls(user=user, **form.cleaned_data)
            messages.success(request, _("Your privacy settings are saved."))
            return redirect("privacy")
    else:
        form = ControlsForm(
            initial={
                "may_challenge": user.may_challenge,
                "may_chat": user.may_chat,
                "may_follow": user.may_follow,
            }
        )
    return render(request, "registration/privacy.html", {"form": form})


def _next_url(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return "/"


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SignUpForm(request.POST)
        if form.is_valid():
            if limits.new_account_refused(request):
                return too_many(request, TOO_MANY_ACCOUNTS)
            user = services.do_sign_up(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
            )
            login(request, user, backend=BACKEND)
            messages.success(request, _("Welcome, %(name)s!") % {"name": user.username})
            return redirect(_next_url(request))
    else:
        form = SignUpForm()
    return render(request, "registration/signup.html", {"form": form})


@require_POST
def play_as_guest(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    if limits.new_account_refused(request):
        return too_many(request, TOO_MANY_ACCOUNTS)
    user = services.do_create_guest()
    login(request, user, backend=BACKEND)
    messages.info(request, _("You are playing as %(name)s.") % {"name": user.username})
    return redirect(_next_url(request))
