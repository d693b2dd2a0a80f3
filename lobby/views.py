from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from games import clocks
from games.rules import available_games
from lobby import selectors, services
from lobby.forms import NotificationsForm, SignUpForm

BACKEND = "django.contrib.auth.backends.ModelBackend"


def home(request: HttpRequest) -> HttpResponse:
    # The lobby's forms are built from the engines' option metadata (lobby.js reads it).
    return render(
        request, "lobby/home.html", {"games": available_games(), "time": clocks.offered()}
    )


@require_GET
def live(request: HttpRequest) -> HttpResponse:
    """Every game in progress, with how many people watch it."""
    return render(request, "lobby/live.html", {"games": selectors.live_games_for_page()})


@require_GET
def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's running and finished games."""
    player = selectors.user_by_name(username)
    if player is None:
        raise Http404(f"There is no user called {username[:40]!r}.")
    if player.username != username:
        return redirect("profile", username=player.username)  # one address per player
    context = {"player": player, "games": selectors.user_games(player)}
    if request.user == player:
        context["notifications"] = NotificationsForm(
            initial={"email": player.email, "email_on_move": player.email_on_move}
        )
    return render(request, "lobby/profile.html", context)


@require_POST
@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    """Change one's own correspondence e-mail setting (the profile page's form)."""
    form = NotificationsForm(request.POST)
    if form.is_valid():
        services.do_set_notifications(
            user=request.user,
            email=form.cleaned_data["email"],
            email_on_move=form.cleaned_data["email_on_move"],
        )
        messages.success(request, "Your e-mail settings are saved.")
    else:
        messages.error(request, "That is not an e-mail address.")
    return redirect("profile", username=request.user.username)


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
