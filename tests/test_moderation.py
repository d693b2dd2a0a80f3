"""Reports, the moderator's role, each action with its audit row and what the user is told
(docs/MODERATION.md). Service and test-client level; the browser tests are in
tests/test_browser_moderation.py."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.test import Client

from accounts.models import RetiredName, User
from games import selectors, services
from games.models import ChatLine, Game
from lobby.models import Seek
from lobby.services import challenges, seeks
from moderation import actions, reports, roles
from moderation.models import Action, Notice, Report
from ratings import services as ratings
from ratings.models import Rating, RatingChange
from realtime.errors import ServiceError
from tests.games_helpers import make_user, new_game, next_of_type, open_socket, settle_crowd

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast() -> dict[str, Any]:
    """A game of alice and bob with a line in each room, carol watching, and mo, a moderator
    (made one the way the docs say: the command)."""
    game = new_game()
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    carol, mo = make_user("carol"), make_user("mo")
    call_command("moderators", "--add", "mo", stdout=StringIO())
    players = services.post_chat(game_id=game.pk, user=bob, room="players", text="you stink")
    spectators = services.post_chat(game_id=game.pk, user=carol, room="spectators", text="hm")
    return {
        "game": game,
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "mo": User.objects.get(pk=mo.pk),  # fresh: permissions are cached on the object
        "players_line": players.line.id,
        "spectators_line": spectators.line.id,
    }


def report(cast: dict[str, Any], who: str, kind: str, target: Any, reason: str = "abuse") -> Report:
    return reports.do_report(reporter=cast[who], kind=kind, target=target, reason=reason)


def act(cast: dict[str, Any], kind: str, **fields: Any) -> Action:
    fields.setdefault("reason", "house rules")
    return actions.act(actions.Request(moderator=cast["mo"], kind=kind, **fields))


def refused(code: str, call: Any) -> None:
    with pytest.raises(ServiceError) as error:
        call()
    assert error.value.code == code, error.value.message


# --- reports ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "target", "user", "has_game", "has_line"),
    [
        ("chat", "players_line", "bob", True, True),
        ("user", "bob", "bob", False, False),
        ("game", "game", None, True, False),
    ],
)
def test_a_player_reports_a_chat_line_a_user_or_a_game(
    cast: dict[str, Any], kind: str, target: str, user: str | None, has_game: bool, has_line: bool
) -> None:
    value = {"players_line": cast["players_line"], "bob": "BOB", "game": cast["game"].pk}[target]
    made = report(cast, "alice", kind, value)
    assert (made.kind, made.status, made.user == (cast[user] if user else None)) == (
        kind,
        "open",
        True,
    )
    assert (made.game is not None, made.line is not None) == (has_game, has_line)


def test_the_players_room_can_be_reported_only_by_its_players(cast: dict[str, Any]) -> None:
    # Reporting would show carol a line of a room she may not read.
    refused("no_such_line", lambda: report(cast, "carol", "chat", cast["players_line"]))
    assert report(cast, "bob", "chat", cast["spectators_line"]).line_id == cast["spectators_line"]


@pytest.mark.parametrize(
    ("who", "kind", "target", "code"),
    [
        ("bob", "chat", "players_line", "cannot_report_yourself"),
        ("alice", "user", "alice", "cannot_report_yourself"),
        ("alice", "user", "nobody-here", "unknown_user"),
        ("alice", "game", 10**6, "no_such_game"),
        ("alice", "chat", "x", "bad_message"),
        ("alice", "spam", 1, "bad_message"),
    ],
)
def test_a_report_of_nothing_reportable_is_refused(
    cast: dict[str, Any], who: str, kind: str, target: Any, code: str
) -> None:
    target = cast["players_line"] if target == "players_line" else target
    refused(code, lambda: report(cast, who, kind, target))
    assert not Report.objects.exists()


def test_one_open_report_per_reporter_and_thing(cast: dict[str, Any]) -> None:
    first = report(cast, "alice", "user", "bob")
    refused("already_reported", lambda: report(cast, "alice", "user", "bob", reason="name"))
    assert report(cast, "carol", "user", "bob").pk != first.pk  # somebody else may
    reports.do_dismiss(moderator=cast["mo"], report_id=first.pk, reason="nothing wrong")
    assert report(cast, "alice", "user", "bob").status == "open"  # and again once closed


def test_reports_beyond_the_hourly_figure_are_refused_and_guests_have_fewer(
    cast: dict[str, Any], settings: Any
) -> None:
    settings.REPORTS_PER_USER, settings.REPORTS_PER_GUEST = "2/h", "1/h"
    report(cast, "alice", "user", "bob")
    report(cast, "alice", "game", cast["game"].pk)
    refused("too_many_reports", lambda: report(cast, "alice", "user", "carol"))
    guest = User.objects.create(username="Guest-ABCDEF", is_guest=True)
    cast["guest"] = guest
    report(cast, "guest", "user", "bob")
    refused("too_many_reports", lambda: report(cast, "guest", "user", "carol"))
    assert Report.objects.count() == 3


def test_the_report_page_sends_a_report_and_says_why_it_cannot(cast: dict[str, Any]) -> None:
    player, browser = Client(), Client()
    player.force_login(cast["alice"])
    page = player.get(f"/report/?chat={cast['spectators_line']}")
    assert page.status_code == 200 and b"hm" in page.content
    browser.force_login(cast["carol"])
    hidden = browser.get(f"/report/?chat={cast['players_line']}")
    assert hidden.status_code == 404 and b"you stink" not in hidden.content
    sent = browser.post("/report/", {"user": "bob", "reason": "name", "text": "rude"})
    assert sent.status_code == 200 and b"with the moderators" in sent.content
    again = browser.post("/report/", {"user": "bob", "reason": "name"})
    assert again.status_code == 409
    assert list(Report.objects.values_list("reason", "text")) == [("name", "rude")]


# --- the role: every page and action, as a visitor, a player, and a moderator -------------

PAGES = ["/moderation/", "/moderation/log/", "/moderation/@bob/", "/moderation/reports/{report}/"]
POSTS = [
    ("/moderation/act", {"kind": "warn", "username": "bob", "reason": "x"}),
    ("/moderation/reports/{report}/dismiss", {"reason": "x"}),
]


def test_every_moderation_page_and_action_checks_the_role(cast: dict[str, Any]) -> None:
    made = report(cast, "alice", "user", "bob")
    visitor, player, moderator = Client(), Client(), Client()
    player.force_login(cast["alice"])
    moderator.force_login(cast["mo"])
    for url in (page.format(report=made.pk) for page in PAGES):
        assert visitor.get(url)["Location"].startswith("/login/"), url
        assert player.get(url).status_code == 403, url
        assert moderator.get(url).status_code == 200, url
    # The refusal is the site's own page, saying why, not the server's bare "403 Forbidden".
    refusal = player.get("/moderation/").content.decode()
    assert "Only moderators can see this page." in refusal and 'href="/"' in refusal
    for url, data in POSTS:
        url = url.format(report=made.pk)
        assert visitor.post(url, data)["Location"].startswith("/login/"), url
        assert player.post(url, data).status_code == 403, url
        assert player.get(url).status_code in (403, 405), url
    # Nothing was done by the refused ones: no warning, the report still open.
    assert not Action.objects.exists() and Report.objects.get().status == "open"
    # Services check the role too, whatever door calls them.
    refused("not_a_moderator", lambda: actions.act(actions.Request(cast["alice"], "warn", "x")))
    refused(
        "not_a_moderator",
        lambda: reports.do_dismiss(moderator=cast["alice"], report_id=made.pk, reason="x"),
    )
    # A moderator's form without its CSRF token is refused.
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(cast["mo"])
    assert strict.post("/moderation/act", POSTS[0][1]).status_code == 403
    assert not Action.objects.exists()
    # The report form and the privacy settings need a sign-in.
    assert visitor.get("/report/?user=bob")["Location"].startswith("/login/")
    assert visitor.get("/settings/privacy/")["Location"].startswith("/login/")


def test_a_moderator_is_made_and_unmade_by_the_command(cast: dict[str, Any]) -> None:
    assert roles.is_moderator(cast["mo"]) and not cast["mo"].is_superuser
    call_command("moderators", "--remove", "mo", stdout=StringIO())
    assert not roles.is_moderator(User.objects.get(username="mo"))
    guest = User.objects.create(username="Guest-QWERTY", is_guest=True)
    refused("bad_message", lambda: roles.do_set_moderator(username=guest.username, moderator=True))


# --- the actions --------------------------------------------------------------------------


def test_an_action_needs_a_written_reason_and_leaves_no_trace_when_refused(
    cast: dict[str, Any],
) -> None:
    refused("reason_required", lambda: act(cast, "warn", username="bob", reason="  "))
    refused("cannot_moderate_yourself", lambda: act(cast, "warn", username="mo"))
    refused("bad_message", lambda: act(cast, "mute", username="bob", minutes=5))
    refused("bad_message", lambda: act(cast, "ban_forever", username="bob"))
    assert not Action.objects.exists() and not Notice.objects.exists()


def test_a_warning_is_logged_and_told_on_the_next_page_once(cast: dict[str, Any]) -> None:
    made = report(cast, "alice", "user", "bob")
    act(cast, "warn", username="bob", reason="mind your words", report_id=made.pk)
    logged = Action.objects.get()
    assert (logged.kind, logged.user, logged.moderator, logged.report) == (
        "warn",
        cast["bob"],
        cast["mo"],
        made,
    )
    made.refresh_from_db()
    assert (made.status, made.closed_by) == ("handled", cast["mo"])
    refused("report_closed", lambda: act(cast, "warn", username="bob", report_id=made.pk))
    bob = Client()
    bob.force_login(cast["bob"])
    assert b"A moderator warns you: mind your words" in bob.get("/").content
    assert b"mind your words" not in bob.get("/").content  # shown once
    staff = Client()
    staff.force_login(cast["mo"])
    assert b"mind your words" in staff.get("/moderation/log/").content


def test_a_muted_player_cannot_chat_until_the_mute_ends(cast: dict[str, Any]) -> None:
    game = cast["game"]
    with time_machine.travel("2026-05-01 12:00:00+00:00", tick=False) as clock:
        act(cast, "mute", username="bob", minutes=60)
        with pytest.raises(ServiceError) as error:
            services.post_chat(game_id=game.pk, user=cast["bob"], room="players", text="hi")
        assert error.value.code == "chat_muted" and "2026-05-01 13:00 UTC" in error.value.message
        view = selectors.chat_view(Game.objects.get(pk=game.pk), cast["bob"], 2)
        assert view["muted_until"] == "2026-05-01T13:00:00+00:00"
        assert Action.objects.get().details == {"until": "2026-05-01T13:00:00+00:00"}
        clock.shift(timedelta(minutes=61))
        services.post_chat(game_id=game.pk, user=cast["bob"], room="players", text="sorry")
    act(cast, "mute", username="bob", minutes=24 * 60)
    act(cast, "unmute", username="bob")
    services.post_chat(game_id=game.pk, user=cast["bob"], room="players", text="thanks")
    assert Notice.objects.filter(user=cast["bob"]).count() == 3


def test_rated_play_forbidden_refuses_rated_games_and_closes_waiting_seeks(
    cast: dict[str, Any],
) -> None:
    alice, bob = cast["alice"], cast["bob"]
    seek, _ = seeks.create_seek(user=bob, games={"slug": "zigzag", "options": {}}, rated=True)
    casual, _ = seeks.create_seek(user=bob, games={"slug": "diffusion", "options": {}})
    waiting = challenges.create_challenge(
        challenger=alice, challenged="bob", slug="zigzag", rated=True
    )
    act(cast, "forbid_rated", username="bob")
    statuses = dict(Seek.objects.values_list("pk", "status"))
    assert (statuses[seek.pk], statuses[casual.pk]) == ("cancelled", "open")
    for attempt in (
        lambda: seeks.create_seek(user=bob, games={"slug": "zigzag", "options": {}}, rated=True),
        lambda: challenges.create_challenge(
            challenger=alice, challenged="bob", slug="zigzag", rated=True
        ),
        lambda: challenges.accept_challenge(user=bob, challenge_id=waiting.pk),
    ):
        refused("rated_forbidden", attempt)
    challenges.create_challenge(challenger=alice, challenged="bob", slug="zigzag")  # casual
    act(cast, "allow_rated", username="bob")
    assert challenges.accept_challenge(user=bob, challenge_id=waiting.pk).rated


@pytest.mark.parametrize(
    ("name", "code"),
    [("admin", "invalid_username"), ("x", "invalid_username"), ("ALICE", "username_taken")],
)
def test_a_new_name_is_checked_as_sign_up_checks_it(
    cast: dict[str, Any], name: str, code: str
) -> None:
    refused(code, lambda: act(cast, "rename", username="bob", new_name=name))
    assert User.objects.filter(username="bob").exists()


def test_a_rename_keeps_the_players_games_and_is_logged_with_both_names(
    cast: dict[str, Any],
) -> None:
    act(cast, "rename", username="bob", new_name="Robert")
    game = Game.objects.select_related("player2").get(pk=cast["game"].pk)
    assert game.player2.username == "Robert"
    assert Action.objects.get().details == {"old_name": "bob", "new_name": "Robert"}
    assert "renamed you from bob to Robert" in Notice.objects.get().text
    # The name taken away is nobody's again, whatever its case.
    assert RetiredName.objects.get(name="bob").closed_by == cast["mo"]
    refused("username_taken", lambda: act(cast, "rename", username="carol", new_name="Bob"))


def test_a_removed_line_leaves_every_later_snapshot_and_sync(cast: dict[str, Any]) -> None:
    made = report(cast, "alice", "chat", cast["players_line"])
    act(cast, "remove_line", line_id=cast["players_line"], report_id=made.pk)
    game = Game.objects.get(pk=cast["game"].pk)
    assert selectors.chat_lines(game, cast["alice"], 1) == []
    assert selectors.chat_lines(game, cast["alice"], 1, after=0) == []
    assert ChatLine.objects.get(pk=cast["players_line"]).removed_at is not None  # kept
    logged = Action.objects.get()
    assert (logged.user, logged.details) == (cast["bob"], {"text": "you stink"})
    refused("no_such_line", lambda: report(cast, "alice", "chat", cast["players_line"]))
    refused("no_such_line", lambda: act(cast, "remove_line", line_id=10**6))


def test_a_running_game_is_aborted_and_a_finished_one_annulled_with_ratings_recomputed(
    cast: dict[str, Any],
) -> None:
    alice, bob, carol = cast["alice"], cast["bob"], cast["carol"]
    running = cast["game"]
    act(cast, "abort_game", game_id=running.pk)
    running.refresh_from_db()
    assert (running.status, running.reason) == ("aborted", "aborted by a moderator")
    refused("game_over", lambda: act(cast, "abort_game", game_id=running.pk))
    refused("game_not_over", lambda: act(cast, "annul_game", game_id=running.pk))
    # Two rated games; the first is annulled: the ratings are as if only the second was played.
    rated = []
    for loser in (bob, carol):
        game = services.create_game(
            slug="zigzag", options={}, player1=alice, player2=loser, time_control="5+3", rated=True
        )
        services.resign(game_id=game.pk, user=loser)
        ratings.rate_game(game.pk)
        rated.append(game)
    act(cast, "annul_game", game_id=rated[0].pk)
    assert list(RatingChange.objects.values_list("game_id", flat=True).distinct()) == [rated[1].pk]
    assert Rating.objects.get(user=alice).games == 1
    assert not Rating.objects.filter(user=bob).exists()
    assert ratings.differences(ratings.recompute()) == []
    refused("game_annulled", lambda: act(cast, "annul_game", game_id=rated[0].pk))
    told = Notice.objects.filter(action__kind="annul_game").values_list("user__username", flat=True)
    assert sorted(told) == ["alice", "bob"]


def test_a_moderator_closes_an_account_as_its_player_would_and_the_name_stays_taken(
    cast: dict[str, Any],
) -> None:
    bob, game = cast["bob"], cast["game"]
    act(cast, "close_account", username="bob", reason="abusive, again")
    bob.refresh_from_db()
    assert not bob.is_active and bob.closed_at is not None
    assert bob.username.startswith("Closed-")
    game.refresh_from_db()
    assert game.status != Game.Status.ACTIVE  # the running game ended with the account
    logged = Action.objects.get()
    assert (logged.kind, logged.user, logged.reason) == ("close_account", bob, "abusive, again")
    retired = RetiredName.objects.get(name="bob")
    assert (retired.user, retired.closed_by) == (bob, cast["mo"])
    refused("username_taken", lambda: act(cast, "rename", username="carol", new_name="BOB"))
    refused("cannot_moderate_yourself", lambda: act(cast, "close_account", username="mo"))
    assert User.objects.get(username="mo").is_active


# --- live: what the open pages are told ---------------------------------------------------

db = database_sync_to_async


@pytest.mark.django_db(transaction=True)
async def test_a_mute_and_a_removed_line_reach_the_open_game_sockets() -> None:
    game = await db(new_game)()
    bob = await db(User.objects.get)(username="bob")
    alice = await db(User.objects.get)(username="alice")
    mo = await db(make_user)("mo")
    await db(roles.do_set_moderator)(username="mo", moderator=True)
    mo = await db(User.objects.get)(pk=mo.pk)
    p1, _ = await open_socket(game.pk, alice)
    p2, _ = await open_socket(game.pk, bob)
    try:
        for client in (p1, p2):
            await settle_crowd(client, spectators=0)
        line = await db(services.post_chat)(game_id=game.pk, user=bob, room="players", text="!!")
        for client in (p1, p2):  # sent by the service, not from bob's socket: both get it
            assert (await next_of_type(client, "chat"))["line"]["id"] == line.line.id
        request = actions.Request(mo, "mute", "insults", username="bob", minutes=60)
        await db(actions.act)(request)
        notice = await next_of_type(p2, "account_notice")
        assert notice["action"] == "mute" and notice["chat_muted_until"]
        assert "insults" in notice["text"]
        request = actions.Request(mo, "remove_line", "insults", line_id=line.line.id)
        await db(actions.act)(request)
        for client in (p1, p2):
            removed = await next_of_type(client, "chat_removed")
            assert (removed["line_id"], removed["room"]) == (line.line.id, "players")
        told = await next_of_type(p2, "account_notice")  # the author is told why
        assert told["action"] == "remove_line" and "\u201c!!\u201d" in told["text"]
        await p2.send_json_to({"type": "chat", "room": "players", "text": "still?", "id": 3})
        refusal = await next_of_type(p2, "error")
        assert (refusal["code"], refusal["id"]) == ("chat_muted", 3)
    finally:
        await p1.disconnect()
        await p2.disconnect()
