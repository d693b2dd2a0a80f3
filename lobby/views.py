from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from lobby import services
from lobby.forms import SignUpForm

BACKEND = "django.contrib.auth.backends.ModelBackend"


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "lobby/home.html")


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
            user = services.do_sign_up(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
            )
            login(request, user, backend=BACKEND)
            messages.success(request, f"Welcome, {user.username}!")
            return redirect(_next_url(request))
    else:
        form = SignUpForm()
    return render(request, "registration/signup.html", {"form": form})


@require_POST
def play_as_guest(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    user = services.do_create_guest()
    login(request, user, backend=BACKEND)
    messages.info(request, f"You are playing as {user.username}.")
    return redirect(_next_url(request))
