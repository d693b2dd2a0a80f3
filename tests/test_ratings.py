"""Glicko-2 ratings: rated games move them, casual ones do not, guests play casual only,
rated seeks pair with rated seeks within their ranges, and the cache is rebuilt exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import Block, User
from accounts.services import do_create_guest
from games import lifecycle, services
from games.models import Game
from lobby import matching
from lobby.models import Seek
from lobby.services import challenges, seeks
from ratings import selectors
from ratings.glicko import Glicko, after_game
from ratings.models import Rating, RatingChange
from ratings.services import game_ended as rate_after_end
from ratings.services import rate_game, rate_missed
from realtime.errors import ServiceError
from tests.games_helpers import make_user, session_for
from tests.wsutil import communicator, receive

# Ratings move after the game's transaction commits (games.lifecycle), as in production.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people() -> dict[str, User]:
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def rated_game(p1: User, p2: User, slug: str = "zigzag", control: str = "5+3") -> Game:
    return services.create_game(
        slug=slug, options={}, player1=p1, player2=p2, time_control=control, rated=True
    )


def resign(game: Game, loser: User) -> None:
    services.resign(game_id=game.pk, user=loser)


def rating(user: User, slug: str = "zigzag", speed: str = "realtime") -> Rating:
    return Rating.objects.get(user=user, slug=slug, speed=speed)


# --- the mathematics (the library's, checked against Glickman's own numbers) --------------


@pytest.mark.parametrize(
    ("score", "rating", "deviation"),
    [(1.0, 1662.3, 290.3), (0.5, 1500.0, 290.3), (0.0, 1337.7, 290.3)],
)
def test_a_first_game_between_new_players_moves_the_rating_as_glicko_2_says(
    score: float, rating: float, deviation: float
) -> None:
    after = after_game(Glicko(), Glicko(), score)
    assert after.rating == pytest.approx(rating, abs=0.1)
    assert after.deviation == pytest.approx(deviation, abs=0.1)
    assert after.provisional


# --- games ---------------------------------------------------------------------------------


def test_a_rated_game_moves_both_ratings_and_records_the_change(people: dict[str, User]) -> None:
    alice, bob = people["alice"], people["bob"]
    game = rated_game(alice, bob)
    resign(game, bob)
    assert round(rating(alice).rating, 1) == 1662.3
    assert round(rating(bob).rating, 1) == 1337.7
    assert (rating(alice).wins, rating(bob).losses) == (1, 1)
    changes = selectors.game_changes(Game.objects.get(pk=game.pk))
    assert changes == {
        "1": {"before": 1500, "after": 1662, "diff": 162, "provisional": True},
        "2": {"before": 1500, "after": 1338, "diff": -162, "provisional": True},
    }
    # Rating twice changes nothing.
    assert rate_game(game.pk) is False
    assert RatingChange.objects.count() == 2


def test_casual_and_aborted_games_change_no_rating(people: dict[str, User]) -> None:
    alice, bob = people["alice"], people["bob"]
    casual = services.create_game(slug="zigzag", options={}, player1=alice, player2=bob)
    resign(casual, bob)
    aborted = rated_game(alice, bob)
    services.abort(game_id=aborted.pk, user=alice)
    assert Rating.objects.count() == 0 and RatingChange.objects.count() == 0


def test_a_draw_by_agreement_counts_half(people: dict[str, User]) -> None:
    alice, bob = people["alice"], people["bob"]
    game = rated_game(alice, bob)
    services.offer_draw(game_id=game.pk, user=alice)
    services.answer_draw(game_id=game.pk, user=bob, accept=True)
    assert rating(alice).rating == pytest.approx(1500.0)
    assert (rating(alice).draws, rating(bob).draws) == (1, 1)


def test_speeds_and_games_are_rated_apart(people: dict[str, User]) -> None:
    alice, bob = people["alice"], people["bob"]
    resign(rated_game(alice, bob, control="3d"), bob)
    resign(rated_game(alice, bob, slug="diffusion", control=""), alice)
    assert rating(alice, "zigzag", "correspondence").wins == 1
    assert rating(alice, "diffusion", "correspondence").losses == 1
    assert not Rating.objects.filter(speed="realtime").exists()


def test_guests_play_casual_only(people: dict[str, User]) -> None:
    guest = do_create_guest()
    for call in (
        lambda: rated_game(people["alice"], guest),
        lambda: seeks.create_seek(user=guest, games={"slug": "zigzag", "options": {}}, rated=True),
        lambda: challenges.create_challenge(
            challenger=people["alice"], challenged=guest.username, slug="zigzag", rated=True
        ),
    ):
        with pytest.raises(ServiceError) as caught:
            call()
        assert caught.value.code == "guests_play_casual"
    assert Game.objects.count() == 0 and Seek.objects.count() == 0


def test_a_challenge_to_someone_who_blocks_you_is_refused(people: dict[str, User]) -> None:
    Block.objects.create(blocker=people["bob"], blocked=people["alice"])
    with pytest.raises(ServiceError) as caught:
        challenges.create_challenge(challenger=people["alice"], challenged="bob", slug="zigzag")
    assert caught.value.code == "blocked"
    challenges.create_challenge(challenger=people["bob"], challenged="alice", slug="zigzag")


def test_a_rated_challenge_makes_a_rated_game(people: dict[str, User]) -> None:
    challenge = challenges.create_challenge(
        challenger=people["alice"], challenged="bob", slug="zigzag", rated=True
    )
    game = challenges.accept_challenge(user=people["bob"], challenge_id=challenge.pk)
    assert game.rated is True


# --- seeks ---------------------------------------------------------------------------------


def view(seek_id: int, user_id: int, **fields: Any) -> matching.SeekView:
    return matching.SeekView(
        seek_id=seek_id,
        user_id=user_id,
        games=(matching.GameChoice.of("zigzag", {"pits": 6, "seeds": 5}),),
        **fields,
    )


@pytest.mark.parametrize(
    ("older", "newer", "pairs"),
    [
        ({}, {}, True),
        ({"rated": True}, {}, False),  # rated with rated only
        ({"rated": True}, {"rated": True}, True),
        ({"rating_range": (1400, 1600)}, {"ratings": {"zigzag": 1700.0}}, False),
        ({"rating_range": (1400, 1800)}, {"ratings": {"zigzag": 1700.0}}, True),
        ({"ratings": {"zigzag": 1200.0}}, {"rating_range": (1300, 2000)}, False),
        ({}, {"rating_range": (1400, 1600)}, True),  # unrated counts as 1500
    ],
)
def test_seeks_pair_by_rated_and_by_range(
    older: dict[str, Any], newer: dict[str, Any], pairs: bool
) -> None:
    found = matching.shared_game(view(1, 1, **older), view(2, 2, **newer))
    assert (found is not None) is pairs


def test_a_rated_seek_pairs_into_a_rated_game(people: dict[str, User]) -> None:
    game_choice = {"slug": "zigzag", "options": {}}
    seeks.create_seek(user=people["alice"], games=game_choice, rated=True)
    _, casual = seeks.create_seek(user=people["carol"], games=game_choice)
    assert casual is None  # a casual seek does not take a rated one
    _, game = seeks.create_seek(user=people["bob"], games=game_choice, rated=True)
    assert game is not None and game.rated


@pytest.mark.parametrize("bad", [[1600, 1400], [1, 2, 3], [-5, 100], [0, 5000], "1400-1600"])
def test_a_bad_rating_range_is_refused(people: dict[str, User], bad: Any) -> None:
    with pytest.raises(ServiceError) as caught:
        seeks.create_seek(
            user=people["alice"], games={"slug": "zigzag", "options": {}}, rating_range=bad
        )
    assert caught.value.code == "bad_rating_range"
    assert Seek.objects.count() == 0


# --- the cache and the truth ---------------------------------------------------------------


def play_a_season(people: dict[str, User]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    for winner, loser in [(alice, bob), (bob, carol), (carol, alice), (alice, carol), (bob, alice)]:
        resign(rated_game(winner, loser), loser)
    resign(rated_game(alice, bob, control="2d"), alice)


def test_the_stored_ratings_are_exactly_what_the_games_give(people: dict[str, User]) -> None:
    play_a_season(people)
    call_command("ratings", "--check")  # raises on any difference
    stored = {(r.user_id, r.slug, r.speed): (r.rating, r.deviation) for r in Rating.objects.all()}
    Rating.objects.filter(user=people["alice"]).update(rating=2000)
    with pytest.raises(CommandError):
        call_command("ratings", "--check")
    call_command("ratings", "--recompute")
    rebuilt = {(r.user_id, r.slug, r.speed): (r.rating, r.deviation) for r in Rating.objects.all()}
    assert rebuilt == stored
    call_command("ratings", "--check")


def test_a_rating_lost_to_an_outage_at_the_games_end_is_made_by_the_sweepers_next_pass(
    people: dict[str, User], caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob = people["alice"], people["bob"]
    game = rated_game(alice, bob)
    # The after-commit rating never runs, as when the database went away just after the end.
    assert lifecycle.game_ended.disconnect(dispatch_uid="ratings-game-ended")
    try:
        resign(game, bob)
    finally:
        lifecycle.game_ended.connect(rate_after_end, dispatch_uid="ratings-game-ended")
    assert not RatingChange.objects.filter(game=game).exists()
    lifecycle.sweep()
    assert round(rating(alice).rating, 1) == 1662.3
    assert RatingChange.objects.filter(game=game).count() == 2
    assert "missed at their end" in caplog.text
    assert rate_missed() == 0  # once only
    call_command("ratings", "--check")


# --- pages and endpoints -------------------------------------------------------------------


def test_standings_the_game_change_the_profile_and_the_downloads(people: dict[str, User]) -> None:
    play_a_season(people)
    browser = Client()
    standings = browser.get("/api/standings?game=zigzag&speed=realtime").json()["standings"]
    assert [row["rank"] for row in standings] == [1, 2, 3]
    assert standings == sorted(standings, key=lambda row: -row["rating"])
    assert {row["username"] for row in standings} == {"alice", "bob", "carol"}
    assert browser.get("/api/standings?game=chess").status_code == 400
    page = browser.get("/standings/zigzag/")
    assert page.status_code == 200 and b"standings-realtime" in page.content
    game = Game.objects.filter(rated=True).order_by("pk").first()
    assert game is not None
    changes = browser.get(f"/api/games/{game.pk}/ratings").json()
    assert changes["rated"] is True and changes["changes"]["1"]["diff"] > 0
    profile = browser.get("/@alice/")
    assert b'id="ratings"' in profile.content and b'<svg class="rating-graph"' in profile.content
    assert b'id="records"' in profile.content
    record = browser.get(f"/games/{game.pk}.json")
    assert "attachment" in record["Content-Disposition"]
    body = json.loads(record.content)
    assert body["rated"] is True and body["result"]["termination"] == "resignation"
    assert body["players"]["1"]["username"] == "alice"


async def test_a_rated_seek_over_the_lobby_socket_and_a_guest_refused() -> None:
    db = database_sync_to_async
    alice = await db(make_user)("alice")
    guest = await db(do_create_guest)()
    for user, expected in ((alice, "ok"), (guest, "error")):
        client = communicator("/ws/lobby/", session_key=await db(session_for)(user))
        assert (await client.connect())[0]
        await receive(client)
        await client.send_json_to(
            {
                "type": "seek",
                "games": [{"slug": "zigzag", "options": {}}],
                "rated": True,
                "rating_range": [1200, 1800],
                "id": 1,
            }
        )
        for _ in range(10):
            answer = await receive(client)
            if answer["type"] in ("ok", "error"):
                break
        assert answer["type"] == expected, answer
        if expected == "error":
            assert answer["code"] == "guests_play_casual"
        await client.disconnect()
    seek = await db(Seek.objects.get)()
    assert (seek.rated, seek.rating_range) == (True, [1200, 1800])
