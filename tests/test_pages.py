"""The server-rendered pages around the lobby: home (what lobby.js needs), live games, profiles."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from games import services
from games.models import Game, GameConnection
from games.rules import available_games
from lobby.selectors import LIVE_IDLE, live_games
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def play(first: User, second: User, slug: str = "diffusion", **options: int) -> Game:
    return services.create_game(slug=slug, options=options, player1=first, player2=second)


def signed_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


# --- the lobby page -------------------------------------------------------------------------


def test_the_lobby_page_carries_the_games_metadata_for_its_forms() -> None:
    alice = make_user("alice")
    page = signed_in(alice).get("/").content.decode()
    found = re.search(r'<script id="games-data" type="application/json">(.*?)</script>', page)
    assert found, "the games metadata is missing"
    games = json.loads(found.group(1))
    # The engine's metadata, with each option's label as forms show it (in English here).
    assert games == [
        {**game, "options": [{**option, "label": option["name"]} for option in game["options"]]}
        for game in available_games()
    ]
    assert {"slug", "name", "options"} <= set(games[0])


def test_the_lobby_page_has_every_element_lobby_js_draws_into() -> None:
    page = signed_in(make_user("alice")).get("/").content.decode()
    for element in (
        "lobby",
        "connection",
        "online-count",
        "lobby-error",
        "lobby-notice",
        "seek-form",
        "seek-game",
        "seek-options",
        "seeks",
        "challenge-form",
        "challenge-user",
        "challenge-game",
        "challenge-options",
        "challenge-side",
        "challenges-in",
        "challenges-out",
        "my-games",
        "live-games",
    ):
        assert f'id="{element}"' in page, element
    assert 'data-username="alice"' in page
    assert 'value="first"' in page and 'value="second"' in page and 'value="random"' in page
    assert "/static/js/lobby.js" in page and 'type="module"' in page
    assert "/static/css/lobby.css" in page


def test_a_visitor_sees_the_lists_but_no_forms(client: Client) -> None:
    page = client.get("/").content.decode()
    for element in ("seeks", "live-games", "online-count", "lobby-error", "connection"):
        assert f'id="{element}"' in page, element
    assert 'id="seek-form"' not in page
    assert 'id="challenge-form"' not in page
    assert 'id="sign-in-first"' in page
    assert "Play as guest" in page
    assert 'data-signed-in="false"' in page


def test_the_header_links_to_the_live_games_and_your_games() -> None:
    alice = make_user("alice")
    assert 'href="/live/"' in Client().get("/").content.decode()
    page = signed_in(alice).get("/live/").content.decode()
    assert 'href="/@alice/"' in page


def test_the_lobby_js_and_css_are_served() -> None:
    browser = Client()
    for path in ("/static/js/lobby.js", "/static/css/lobby.css"):
        response = browser.get(path)
        assert response.status_code == 200, path
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert body


# --- the live games page -------------------------------------------------------------------


def test_the_live_page_lists_games_in_progress_with_links_and_watchers() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    running = play(alice, bob, "zigzag", pits=8, seeds=7)
    finished = play(bob, carol)
    finished.status = Game.Status.FINISHED
    finished.save()
    GameConnection.objects.create(game=running, channel_name="watcher-1")
    GameConnection.objects.create(game=running, channel_name="watcher-2")
    GameConnection.objects.create(game=running, channel_name="player", user=alice, player=1)

    response = Client().get("/live/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f'href="/games/{running.pk}/"' in page
    assert f'href="/games/{finished.pk}/"' not in page
    assert "ZigZag" in page and "pits 8" in page
    assert 'href="/@alice/"' in page and 'href="/@bob/"' in page
    row = re.search(rf'<tr data-game-id="{running.pk}">.*?</tr>', page, re.S)
    assert row and 'data-count="2"' in row.group(0)


def test_a_game_nobody_has_played_in_for_an_hour_leaves_the_live_lists() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    idle = play(alice, bob)  # untimed: no clock will ever end it
    fresh = play(bob, carol)
    an_hour_ago = timezone.now() - LIVE_IDLE - timedelta(seconds=1)
    Game.objects.filter(pk=idle.pk).update(updated_at=an_hour_ago)

    page = Client().get("/live/").content.decode()
    lobby_list = [game.id for game in live_games()]

    assert f'href="/games/{fresh.pk}/"' in page and fresh.pk in lobby_list
    assert f'href="/games/{idle.pk}/"' not in page and idle.pk not in lobby_list
    # Still the players' game: on their profiles, and back on the list once played in.
    assert f'href="/games/{idle.pk}/"' in Client().get("/@alice/").content.decode()
    services.play_move(game_id=idle.pk, user=alice, move="I", ply=0)
    assert idle.pk in [game.id for game in live_games()]


def test_the_live_page_says_so_when_nothing_is_played(client: Client) -> None:
    response = client.get("/live/")
    assert response.status_code == 200
    assert 'id="no-live-games"' in response.content.decode()


# --- profiles -------------------------------------------------------------------------------


def test_a_profile_lists_running_and_finished_games_with_results() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    running = play(alice, bob)
    won = play(carol, alice)
    won.status, won.winner, won.termination, won.reason = "finished", 2, "rules", "block A is empty"
    won.save()
    lost = play(alice, carol)
    lost.status, lost.winner, lost.termination, lost.reason = (
        "finished",
        2,
        "resignation",
        "alice resigned",
    )
    lost.save()
    aborted = play(bob, alice)
    aborted.status, aborted.termination, aborted.reason = "aborted", "abort", "aborted by bob"
    aborted.save()
    elsewhere = play(bob, carol)

    response = Client().get("/@alice/")
    assert response.status_code == 200
    page = response.content.decode()
    running_table = re.search(r'<table class="listing" id="running-games">.*?</table>', page, re.S)
    finished_table = re.search(
        r'<table class="listing" id="finished-games">.*?</table>', page, re.S
    )
    assert running_table and finished_table
    assert f'href="/games/{running.pk}/"' in running_table.group(0)
    assert 'href="/@bob/"' in running_table.group(0)
    finished_rows = finished_table.group(0)
    assert f'<tr data-game-id="{won.pk}" data-outcome="won">' in finished_rows
    assert f'<tr data-game-id="{lost.pk}" data-outcome="lost">' in finished_rows
    assert f'<tr data-game-id="{aborted.pk}" data-outcome="aborted">' in finished_rows
    assert "block A is empty" in finished_rows and "alice resigned" in finished_rows
    assert "Diffusion" in finished_rows and 'href="/@carol/"' in finished_rows
    assert f"/games/{elsewhere.pk}/" not in page


def test_a_draw_reads_as_a_draw() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    game = play(alice, bob)
    game.status, game.termination, game.reason = "finished", "rules", "no move left"
    game.save()
    page = Client().get("/@bob/").content.decode()
    assert f'<tr data-game-id="{game.pk}" data-outcome="draw">' in page


def test_a_profile_without_games_says_so() -> None:
    make_user("dora")
    page = Client().get("/@dora/").content.decode()
    assert 'id="no-running-games"' in page and 'id="no-finished-games"' in page


def test_an_unknown_user_has_no_profile(client: Client) -> None:
    assert client.get("/@nobody/").status_code == 404
    assert client.get("/users/nobody/").status_code in (301, 302)
    assert client.get("/users/nobody/", follow=True).status_code == 404


def test_a_profile_has_one_address_whatever_the_case_or_form() -> None:
    make_user("Alice")
    browser = Client()
    assert browser.get("/@alice/")["Location"] == "/@Alice/"
    assert browser.get("/users/Alice/")["Location"] == "/@Alice/"
    assert browser.get("/@Alice/").status_code == 200


def test_a_guest_profile_says_guest() -> None:
    browser = Client()
    browser.post("/guest/")
    guest = User.objects.get(is_guest=True)
    page = browser.get(f"/@{guest.username}/").content.decode()
    assert "(guest)" in page and guest.username in page


# --- correspondence e-mail settings -----------------------------------------------------------


def test_only_the_player_sees_their_e_mail_settings_and_can_turn_the_mails_off() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    own = signed_in(alice).get("/@alice/").content.decode()
    assert 'id="notifications-form"' in own and 'href="/settings/email/"' in own
    assert 'id="notifications-form"' not in signed_in(bob).get("/@alice/").content.decode()
    # The address is no longer this form's: it changes through a link mailed to the new one
    # (tests/test_self_service.py); an address posted here changes nothing.
    answer = signed_in(alice).post(
        "/settings/notifications/",
        {"email": "alice@example.org"},  # the box left unticked
    )
    assert answer.status_code == 302 and answer["Location"] == "/@alice/"
    alice.refresh_from_db()
    assert (alice.email, alice.email_on_move) == ("", False)
    signed_in(alice).post("/settings/notifications/", {"email_on_move": "on"})
    alice.refresh_from_db()
    assert alice.email_on_move is True


def test_the_notifications_settings_address_leads_to_the_form_not_to_an_error(
    client: Client,
) -> None:
    # GET /settings/notifications/ answered 405: the settings live on the profile's form.
    make_user("alice")
    answer = signed_in(User.objects.get(username="alice")).get("/settings/notifications/")
    assert answer.status_code == 302
    assert answer["Location"] == "/@alice/#notifications-form"
    visitor = client.get("/settings/notifications/")
    assert visitor.status_code == 302 and "/login/" in visitor["Location"]


def test_a_bad_address_is_refused_and_nothing_changes() -> None:
    alice = make_user("alice")
    page = signed_in(alice).post(
        "/settings/email/", {"email": "not an address", "password": "x-long-password-1"}
    )
    assert "Enter a valid email address." in page.content.decode()
    alice.refresh_from_db()
    assert (alice.email, alice.pending_email, alice.email_on_move) == ("", "", True)


def test_visitors_cannot_change_settings(client: Client) -> None:
    answer = client.post("/settings/notifications/", {"email": "x@example.org"})
    assert answer.status_code == 302 and "/login/" in answer["Location"]


def test_favicon_ico_leads_to_the_sites_icon(client: Client) -> None:
    # Browsers ask for /favicon.ico whatever the page says: it answered 404 on every page.
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith(".svg") and "favicon" in response["Location"]
    page = client.get("/").content.decode()
    assert 'rel="icon"' in page and "favicon-turn" in page
