"""Whole games over sockets, the HTTP move endpoint and the read APIs."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from games.consumers import GameConsumer
from games.engine import pick_client_move
from games.models import Game, GameEvent
from games.rules import available_games
from tests.games_helpers import new_game, next_of_type, open_socket, session_for, settle_crowd

db = database_sync_to_async
MAX_PLIES = 2000


def slugs() -> list[str]:
    return [game["slug"] for game in available_games()]


def pick(legal: Any, rng: random.Random) -> str:
    """A random legal move from whatever the server listed."""
    return pick_client_move(legal, rng)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("slug", slugs())
async def test_a_whole_game_reaches_every_socket(slug: str, monkeypatch: Any) -> None:
    # This plays far faster than people do: lift the per-socket flood limit.
    monkeypatch.setattr(GameConsumer, "rate_burst", 10_000.0)
    rng = random.Random(slug)
    game = await db(new_game)(slug)
    players = {1: game.player1, 2: game.player2}
    p1, snapshot = await open_socket(game.pk, players[1])
    p2, _ = await open_socket(game.pk, players[2])
    watcher, _ = await open_socket(game.pk)
    sockets = {1: p1, 2: p2}
    for client in (p1, p2, watcher):
        await settle_crowd(client, spectators=1)

    view = snapshot["game"]
    legal, to_move, ply, status = view["legal_moves"], view["to_move"], 0, "active"
    seen: dict[str, list[int]] = {"p1": [], "p2": [], "watcher": []}
    while status == "active":
        assert ply < MAX_PLIES, "the game did not end"
        await sockets[to_move].send_json_to({"type": "move", "move": pick(legal, rng), "ply": ply})
        events = {}
        for name, client in (("p1", p1), ("p2", p2), ("watcher", watcher)):
            events[name] = await next_of_type(client, "move")
            seen[name].append(events[name]["v"])
        first = events["watcher"]
        assert all(e["state"] == first["state"] and e["ply"] == ply + 1 for e in events.values())
        legal, to_move, ply, status = (
            first["legal_moves"],
            first["to_move"],
            first["ply"],
            first["status"],
        )

    ends = [await next_of_type(client, "end") for client in (p1, p2, watcher)]
    assert ends[0]["result"] == ends[1]["result"] == ends[2]["result"] == first["result"]
    assert ends[0]["result"]["termination"] == "rules"
    assert seen["p1"] == seen["p2"] == seen["watcher"] == list(range(1, ply + 1))
    row = await db(Game.objects.get)(pk=game.pk)
    assert (row.status, row.ply, row.version) == ("finished", ply, ply + 1)
    assert await db(GameEvent.objects.filter(game=row, ply__isnull=False).count)() == ply
    for client in (p1, p2, watcher):
        await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_move_over_http_reaches_the_sockets() -> None:
    game = await db(new_game)()
    watcher, _ = await open_socket(game.pk)

    def post_move() -> Any:
        browser = Client(enforce_csrf_checks=True)
        browser.cookies["sessionid"] = session_for(game.player1)
        browser.get("/")  # a page sets the CSRF cookie, as a browser would have it
        token = browser.cookies["csrftoken"].value
        return browser.post(
            f"/api/games/{game.pk}/move",
            data=json.dumps({"move": "I", "ply": 0}),
            content_type="application/json",
            headers={"X-CSRFToken": token},
        )

    response = await db(post_move)()
    assert response.status_code == 200, response.content
    assert response.json()["event"]["move"] == "I"
    event = await next_of_type(watcher, "move")
    assert (event["move"], event["v"]) == ("I", 1)
    await watcher.disconnect()


@pytest.fixture
def game_and_browser(db: None) -> tuple[Game, Client]:
    game = new_game()
    browser = Client()
    browser.force_login(game.player1)
    return game, browser


def post(browser: Client, game: Game, body: Any) -> Any:
    return browser.post(
        f"/api/games/{game.pk}/move", data=json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"move": "Q", "ply": 0}, 422, "illegal_move"),
        ({"move": "I", "ply": 3}, 409, "stale_ply"),
        ({"move": "I"}, 400, "bad_message"),
        ([1, 2], 400, "bad_message"),
        # As on the socket: an overlong move is a malformed request, not an illegal move.
        ({"move": "A" * 5000, "ply": 0}, 400, "bad_message"),
    ],
)
def test_the_http_move_endpoint_refuses_with_a_json_error(
    game_and_browser: tuple[Game, Client], body: Any, status: int, code: str
) -> None:
    game, browser = game_and_browser
    response = post(browser, game, body)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    game.refresh_from_db()
    assert (game.ply, game.version) == (0, 0)


def test_a_ten_mebibyte_body_is_a_documented_413_without_a_traceback(
    game_and_browser: tuple[Game, Client], caplog: pytest.LogCaptureFixture
) -> None:
    game, browser = game_and_browser
    huge = json.dumps({"move": "I", "ply": 0, "padding": "x" * (10 * 1024 * 1024)})
    response = browser.post(
        f"/api/games/{game.pk}/move", data=huge, content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    game.refresh_from_db()
    assert (game.ply, game.version) == (0, 0)


def test_the_http_move_endpoint_needs_a_player(game_and_browser: tuple[Game, Client]) -> None:
    game, _ = game_and_browser
    assert post(Client(), game, {"move": "I", "ply": 0}).status_code == 403
    other = Client()
    other.post("/guest/")
    response = post(other, game, {"move": "I", "ply": 0})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_a_player"


def test_the_http_move_endpoint_refuses_browsers_without_csrf(
    game_and_browser: tuple[Game, Client],
) -> None:
    game, _ = game_and_browser
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(game.player1)
    assert post(browser, game, {"move": "I", "ply": 0}).status_code == 403
    game.refresh_from_db()
    assert game.ply == 0


def test_the_read_apis_show_the_game(game_and_browser: tuple[Game, Client]) -> None:
    game, browser = game_and_browser
    assert post(browser, game, {"move": "I", "ply": 0}).status_code == 200
    detail = Client().get(f"/api/games/{game.pk}").json()
    assert detail["v"] == 1
    assert detail["game"]["moves"] == [{"player": 1, "notation": "I"}]
    assert detail["game"]["to_move"] == 2
    listing = Client().get("/api/games?status=active").json()["games"]
    assert [g["id"] for g in listing] == [game.pk]
    assert Client().get("/api/games?status=finished").json()["games"] == []
    assert Client().get("/api/games?status=bogus").status_code == 400
    assert Client().get("/api/games/999999").status_code == 404


def test_the_text_view_prints_the_board_and_the_moves(
    game_and_browser: tuple[Game, Client],
) -> None:
    game, browser = game_and_browser
    post(browser, game, {"move": "I", "ply": 0})
    text = Client().get(f"/games/{game.pk}.txt")
    assert text["Content-Type"].startswith("text/plain")
    body = text.content.decode()
    assert "alice (1) vs bob (2)" in body
    assert "   1. (1) I" in body
    assert "bob (2) to move; this move is #2." in body
    assert "5" in body  # the board shows the sown pits


def test_the_server_says_until_when_a_game_may_be_aborted(db: None) -> None:
    from games import selectors, services
    from realtime.errors import ServiceError

    game = new_game()
    assert selectors.snapshot(game)["abortable"] is True
    first = services.play_move(game_id=game.pk, user=game.player1, move="I", ply=0).event
    assert first is not None and first["abortable"] is True  # only player 1 has moved
    game.refresh_from_db()
    reply = sorted(selectors.snapshot(game)["legal_moves"])[0]
    second = services.play_move(game_id=game.pk, user=game.player2, move=reply, ply=1).event
    assert second is not None and second["abortable"] is False
    game.refresh_from_db()
    assert selectors.snapshot(game)["abortable"] is False
    with pytest.raises(ServiceError) as refused:
        services.abort(game_id=game.pk, user=game.player1)
    assert refused.value.code == "too_late_to_abort"


@pytest.mark.postgres(
    reason="SQLite's transactions take its one write lock at once (IMMEDIATE): no move can "
    "land while a snapshot is read there"
)
@pytest.mark.django_db(transaction=True)
def test_a_snapshot_has_the_moves_of_its_version_even_when_a_move_lands_while_it_is_read(
    monkeypatch: Any,
) -> None:
    import threading

    from django.db import connection

    from games import selectors, services

    game = new_game()
    read_moves = selectors.played

    def a_move_lands_first(row: Game) -> list[tuple[int, str]]:
        # Another connection plays the first move after the snapshot read the game's row,
        # before it reads the moves.
        def play() -> None:
            try:
                services.play_move(game_id=game.pk, user=game.player1, move="I", ply=0)
            finally:
                connection.close()

        other = threading.Thread(target=play)
        other.start()
        other.join()
        return read_moves(row)

    monkeypatch.setattr(selectors, "played", a_move_lands_first)
    loaded = selectors.load_snapshot(game.pk)
    assert loaded is not None
    row, state = loaded
    assert (row.version, state["moves"]) == (0, [])
    assert Game.objects.get(pk=game.pk).ply == 1  # the move did land
