"""The game database (games/search.py): every finished game gets its rows in the transaction
that ends it, a search pages newest first on a keyset that inserts do not disturb, each filter
narrows as documented, a scan is bounded and says where to go on, bad searches are refused
with `bad_message`, and an export streams every game found as the game's own record."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import AsyncClient, Client

from accounts.models import User
from games import clocks, search, selectors, services
from games.engine import client_moves, pick_client_move, rules_for
from games.models import Game, PlayedGame
from games.rules import get_rules
from games.services.records import record_finished
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def finished(
    first: User,
    second: User,
    *,
    minutes: int,
    slug: str = "diffusion",
    options: dict[str, Any] | None = None,
    winner: int | None = 1,
    termination: str = "rules",
    rated: bool = False,
    control: str = "",
    ply: int = 40,
) -> Game:
    """A finished game, recorded as the end of a game records it, `minutes` after T0."""
    game = services.create_game(slug=slug, options=options or {}, player1=first, player2=second)
    game.status = Game.Status.FINISHED
    game.winner = winner
    game.termination = termination
    game.rated = rated
    game.time_control = clocks.parse(control)
    game.ply = ply
    game.ended_at = T0 + timedelta(minutes=minutes)
    game.save()
    record_finished(game)
    return game


def ids(page: search.Page) -> list[int]:
    return [found.game_id for found in page.games]


def test_a_game_resigned_gets_a_row_for_each_player_and_an_aborted_one_none() -> None:
    game = new_game()
    rules = get_rules("diffusion")
    move = pick_client_move(client_moves(rules, rules.initial_state()), random.Random(1))
    services.play_move(game_id=game.pk, user=game.player1, move=move, ply=0)
    services.resign(game_id=game.pk, user=game.player2)
    rows = {row.seat: row for row in PlayedGame.objects.filter(game=game)}
    assert {seat: (row.user_id, row.opponent_id, row.result) for seat, row in rows.items()} == {
        1: (game.player1_id, game.player2_id, "win"),
        2: (game.player2_id, game.player1_id, "loss"),
    }
    assert rows[1].termination == "resignation" and rows[1].plies == 1
    aborted = new_game()
    services.abort(game_id=aborted.pk, user=aborted.player1)
    assert not PlayedGame.objects.filter(game=aborted).exists()


def test_a_game_that_ends_by_its_last_move_is_in_the_database_as_the_rules_ended_it() -> None:
    game = new_game("zigzag", {"pits": 2, "seeds": 1})
    rules = rules_for("zigzag", {"pits": 2, "seeds": 1})
    state, rng, ply = rules.initial_state(), random.Random(3), 0
    while rules.outcome(state) is None:
        move = pick_client_move(client_moves(rules, state), rng)
        user = game.player1 if rules.to_move(state) == 1 else game.player2
        services.play_move(game_id=game.pk, user=user, move=move, ply=ply)
        state, ply = rules.play(state, move), ply + 1
    outcome = rules.outcome(state)
    assert outcome is not None
    row = PlayedGame.objects.get(game=game, seat=1)
    expected = "draw" if outcome.winner is None else ("win" if outcome.winner == 1 else "loss")
    assert (row.result, row.termination, row.plies, row.options) == (
        expected,
        "rules",
        ply,
        "pits=2,seeds=1",
    )


def test_pages_go_newest_first_and_a_game_ending_meanwhile_moves_nothing() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    games = [finished(alice, bob, minutes=n) for n in range(7)]
    first = search.search(search.Query(), limit=3)
    assert ids(first) == [g.pk for g in reversed(games[4:])]
    finished(bob, alice, minutes=100)  # newer than everything: the next page is unmoved
    second = search.search(search.Query(), first.next, limit=3)
    third = search.search(search.Query(), second.next, limit=3)
    assert ids(second) == [g.pk for g in reversed(games[1:4])]
    assert ids(third) == [games[0].pk] and third.next is None


def test_games_ending_at_the_same_instant_are_paged_by_their_number() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    same = [finished(alice, bob, minutes=5) for _ in range(5)]
    seen = []
    page = search.search(search.Query(player=alice.pk), limit=2)
    seen += ids(page)
    while page.next:
        page = search.search(search.Query(player=alice.pk), page.next, limit=2)
        seen += ids(page)
    assert seen == sorted((g.pk for g in same), reverse=True)


def test_each_filter_keeps_exactly_the_games_it_names() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    g = {
        "a_beats_b": finished(alice, bob, minutes=1, winner=1, rated=True, control="5+3"),
        "b_beats_a": finished(bob, alice, minutes=2, winner=1, termination="time", ply=12),
        "a_draws_c": finished(alice, carol, minutes=3, winner=None, termination="agreement"),
        "c_beats_a_zz": finished(
            carol, alice, minutes=4, slug="zigzag", options={"pits": 6, "seeds": 5}, ply=80
        ),
        "b_c_corr": finished(bob, carol, minutes=5, winner=2, control="3d", rated=True),
    }
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"player": alice.pk}, ["c_beats_a_zz", "a_draws_c", "b_beats_a", "a_beats_b"]),
        ({"player": alice.pk, "opponent": bob.pk}, ["b_beats_a", "a_beats_b"]),
        ({"player": alice.pk, "result": "win"}, ["a_beats_b"]),
        ({"player": alice.pk, "result": "loss"}, ["c_beats_a_zz", "b_beats_a"]),
        ({"player": carol.pk, "slug": "zigzag"}, ["c_beats_a_zz"]),
        ({"slug": "zigzag", "options": "pits=6,seeds=5"}, ["c_beats_a_zz"]),
        ({"slug": "zigzag", "options": "pits=4,seeds=3"}, []),
        ({"rated": True}, ["b_c_corr", "a_beats_b"]),
        ({"speed": "correspondence"}, ["b_c_corr"]),
        ({"speed": "realtime"}, ["a_beats_b"]),
        ({"result": "draw"}, ["a_draws_c"]),
        ({"termination": "time"}, ["b_beats_a"]),
        ({"min_plies": 50}, ["c_beats_a_zz"]),
        ({"max_plies": 12}, ["b_beats_a"]),
        (
            {"since": T0 + timedelta(minutes=3), "until": T0 + timedelta(minutes=5)},
            [
                "c_beats_a_zz",
                "a_draws_c",
            ],
        ),
        ({"player": bob.pk, "opponent": carol.pk, "slug": "diffusion"}, ["b_c_corr"]),
    ]
    names = {game.pk: name for name, game in g.items()}
    for filters, expected in cases:
        page = search.search(search.Query(**filters), limit=50)
        assert [names[i] for i in ids(page)] == expected, filters
        assert page.next is None, filters


def test_a_scan_is_bounded_and_says_where_to_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "SCAN", 4)
    alice, bob = make_user("alice"), make_user("bob")
    drawn = finished(alice, bob, minutes=0, winner=None)
    for n in range(1, 10):
        finished(alice, bob, minutes=n)
    query = search.Query(result="draw")
    page, pages = search.search(query, limit=5), 1
    assert page.games == [] and page.next is not None  # nine wins first: the scan stopped
    while not page.games:
        page, pages = search.search(query, page.next, limit=5), pages + 1
    assert ids(page) == [drawn.pk] and page.next is None and pages == 3


@pytest.mark.parametrize(
    ("params", "wanted"),
    [
        ({"player": "nobody"}, "there is no player nobody"),
        ({"opponent": "alice"}, "opponent needs player"),
        ({"options": "pits=6"}, "options needs game"),
        ({"speed": "blitz"}, "speed must be one of"),
        ({"result": "won"}, "result must be one of"),
        ({"termination": "abort"}, "termination must be one of"),
        ({"rated": "maybe"}, "rated must be true or false"),
        ({"since": "yesterday"}, "since must be a date"),
        ({"min_plies": "-3"}, "min_plies must be a whole number"),
        ({"cursor": "12"}, "cursor is not one this search gave"),
        ({"limit": "500"}, "limit must be 1 to 100"),
        ({"colour": "white"}, "unknown parameter colour"),
    ],
)
def test_a_bad_search_is_refused_with_bad_message(params: dict[str, str], wanted: str) -> None:
    make_user("alice")
    answer = Client().get("/api/games", {"status": "finished", **params})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "bad_message" and wanted in error["message"], error


def test_the_api_lists_a_page_with_players_results_and_the_next_cursor() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    games = [finished(alice, bob, minutes=n, rated=True, control="5+3") for n in range(3)]
    answer = Client().get("/api/games", {"status": "finished", "player": "ALICE", "limit": 2})
    body = answer.json()
    assert answer.status_code == 200
    assert [g["id"] for g in body["games"]] == [games[2].pk, games[1].pk]
    listed = body["games"][0]
    assert listed["players"]["1"]["username"] == "alice" and listed["rated"] is True
    assert listed["speed"] == "realtime" and listed["result"]["winner"] == 1
    rest = Client().get("/api/games", {"status": "finished", "cursor": body["next"]}).json()
    assert [g["id"] for g in rest["games"]] == [games[0].pk] and rest["next"] is None


@pytest.mark.django_db(transaction=True)
async def test_an_export_streams_every_game_found_as_its_own_record() -> None:
    from asgiref.sync import sync_to_async

    @sync_to_async
    def arrange() -> list[Game]:
        alice, bob = make_user("alice"), make_user("bob")
        return [finished(alice, bob, minutes=n) for n in range(search.MAX_LIMIT + 3)]

    games = await arrange()
    answer = await AsyncClient().get("/api/games/export", {"player": "bob", "format": "json"})
    assert answer.status_code == 200 and answer.streaming
    text = b"".join([chunk async for chunk in answer.streaming_content]).decode()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [record["id"] for record in lines] == [g.pk for g in reversed(games)]
    expected = await sync_to_async(
        lambda: selectors.game_record(Game.objects.get(pk=games[0].pk))
    )()
    assert lines[-1] == json.loads(json.dumps(expected))


def test_the_page_shows_the_search_and_links_to_each_game_and_the_next_page() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    games = [finished(alice, bob, minutes=n) for n in range(3)]
    page = Client().get("/games/", {"player": "alice", "limit": "2"})
    html = page.content.decode()
    assert page.status_code == 200
    assert f'href="/games/{games[2].pk}/"' in html and f'href="/games/{games[1].pk}/"' in html
    assert f'href="/games/{games[0].pk}/"' not in html
    assert 'id="search-next"' in html and "player=alice" in html
    refused = Client().get("/games/", {"speed": "blitz"}).content.decode()
    assert 'id="search-error"' in refused
