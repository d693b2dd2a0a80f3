"""Forgotten passwords: Django's reset views, throttled, in the site's words.

The link is Django's token (PASSWORD_RESET_TIMEOUT): it dies when the password changes or the
account signs in, so it works once. Asking gives the same page whether or not an account has
the address; the mail goes only to active accounts with a password (not to guests, closed
accounts or the mail door's accounts, which have none)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy

from realtime import limits

TOO_MANY = gettext_lazy("Too many reset mails asked for lately: try again in an hour.")


class ResetView(auth_views.PasswordResetView):
    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = reverse_lazy("password-reset-sent")
    extra_email_context = {"site_url": settings.SITE_URL.rstrip("/")}

    def form_valid(self, form: Any) -> HttpResponse:
        # Counted per address asked for and per client whether or not an account has it.
        if limits.password_reset_refused(self.request, str(form.cleaned_data["email"])):
            return render(self.request, "429.html", {"message": TOO_MANY}, status=429)
        return super().form_valid(form)


class ResetSentView(auth_views.PasswordResetDoneView):
    template_name = "registration/password_reset_sent.html"


class ResetConfirmView(auth_views.PasswordResetConfirmView):
    """The link: a form for the new password (Django moves the token out of the address into
    the session first, so it does not leak through the Referer). Setting it ends every
    session and socket of the account (accounts/signals.py); it does not sign in, so the
    second factor is still asked for at the next sign-in."""

    template_name = "registration/password_reset_confirm.html"
    success_url = reverse_lazy("password-reset-done")
    post_reset_login = False


class ResetDoneView(auth_views.PasswordResetCompleteView):
    template_name = "registration/password_reset_done.html"
