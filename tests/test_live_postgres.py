"""Live play on what production runs: PostgreSQL, the Redis layer, several server processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async
from django.db import connections

from games import services
from games.models import Game, GameEvent, Move
from tests.games_helpers import new_game, next_of_type, open_socket, session_for
from tests.servers import ROOT, daphnes, shared_test_env

pytestmark = [
    pytest.mark.postgres(
        reason="races between threads and server processes need a server database: SQLite "
        "lets one writer in at a time, and the embedded default is one process"
    ),
    pytest.mark.django_db(transaction=True),
]

db = database_sync_to_async


def race(*calls: Any) -> list[Any]:
    """Run the calls in threads released at the same instant; return results or errors."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Any) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except Exception as error:
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.parametrize("attempt", range(5))
def test_two_moves_for_the_same_ply_at_once_apply_exactly_one(attempt: int) -> None:
    game = new_game()
    alice = game.player1
    results = race(
        lambda: services.play_move(game_id=game.pk, user=alice, move="I", ply=0),
        lambda: services.play_move(game_id=game.pk, user=alice, move="J", ply=0),
    )
    applied = [r for r in results if isinstance(r, services.Applied)]
    refused = [r for r in results if isinstance(r, services.GameError)]
    assert len(applied) == 1 and len(refused) == 1, results
    assert refused[0].code == "stale_ply"
    game.refresh_from_db()
    assert (game.ply, game.version) == (1, 1)
    assert Move.objects.filter(game=game).count() == 1


def test_the_same_move_sent_twice_at_once_is_applied_once() -> None:
    game = new_game()
    alice = game.player1
    results = race(
        *(
            (lambda: services.play_move(game_id=game.pk, user=alice, move="I", ply=0))
            for _ in range(4)
        )
    )
    assert all(isinstance(r, services.Applied) for r in results), results
    assert sorted(r.duplicate for r in results) == [False, True, True, True]
    assert Move.objects.filter(game=game).count() == 1


def test_both_rematch_clicks_at_the_same_instant_make_one_game() -> None:
    game = new_game()
    services.resign(game_id=game.pk, user=game.player1)
    results = race(
        lambda: services.offer_rematch(game_id=game.pk, user=game.player1),
        lambda: services.offer_rematch(game_id=game.pk, user=game.player2),
    )
    assert all(isinstance(r, services.Applied) for r in results), results
    assert sorted(r.event["type"] for r in results) == ["rematch", "rematch_offer"]
    assert Game.objects.count() == 2
    game.refresh_from_db()
    assert game.rematch is not None
    assert (game.rematch.player1, game.rematch.player2) == (game.player2, game.player1)


@pytest.mark.redis
async def test_racing_moves_over_two_sockets_apply_one_through_redis(
    redis_channel_layer: str,
) -> None:
    game = await db(new_game)()
    first, _ = await open_socket(game.pk, game.player1)
    second, _ = await open_socket(game.pk, game.player1)
    watcher, _ = await open_socket(game.pk)
    await asyncio.gather(
        first.send_json_to({"type": "move", "move": "I", "ply": 0, "id": "first"}),
        second.send_json_to({"type": "move", "move": "J", "ply": 0, "id": "second"}),
    )
    answers = []
    for client in (first, second):
        while True:
            message = await client.receive_json_from(timeout=5)
            if message["type"] in {"move", "error"} and message.get("id") in {"first", "second"}:
                answers.append(message)
                break
    assert sorted(m["type"] for m in answers) == ["error", "move"]
    assert next(m for m in answers if m["type"] == "error")["code"] == "stale_ply"
    seen = await next_of_type(watcher, "move")
    assert seen["v"] == 1
    assert await db(lambda: Game.objects.get(pk=game.pk).ply)() == 1
    for client in (first, second, watcher):
        await client.disconnect()


@pytest.mark.redis
def test_a_move_on_one_server_process_reaches_a_spectator_on_another(tmp_path: Path) -> None:
    game = new_game()
    env = shared_test_env(f"two-procs-{game.pk}")
    cookie = f"sessionid={session_for(game.player1)}"

    async def play(first: Any, second: Any) -> dict[str, Any]:
        async with (
            websockets.connect(
                f"{second.ws}/ws/games/{game.pk}/", origin=websockets.Origin(second.http)
            ) as spectator,
            websockets.connect(
                f"{first.ws}/ws/games/{game.pk}/",
                origin=websockets.Origin(first.http),
                additional_headers={"Cookie": cookie},
            ) as player,
        ):
            assert json.loads(await player.recv())["you"] == 1
            assert json.loads(await spectator.recv())["you"] is None
            await player.send(json.dumps({"type": "move", "move": "I", "ply": 0}))
            while True:
                message = json.loads(await asyncio.wait_for(spectator.recv(), 10))
                if message["type"] == "move":
                    return message

    with daphnes(2, env, tmp_path) as (first, second):
        seen = asyncio.run(play(first, second))
    assert (seen["move"], seen["v"], seen["player"]) == ("I", 1, 1)
    game.refresh_from_db()
    assert game.ply == 1


def overdue_game() -> Game:
    """A real-time game whose first mover's 30 seconds ran out a moment ago."""
    game = new_game()
    started = services.now_ms() - 31_000
    game.time_control = "1+0"
    game.clock = {
        "control": "1+0",
        "remaining": [60_000, 60_000],
        "running": 1,
        "since": started,
        "moved": [False, False],
        "lag": [5_000, 5_000],
    }
    services._set_deadline(game)
    game.save()
    return game


@pytest.mark.parametrize("attempt", range(3))
def test_a_consumer_and_the_sweeper_racing_at_the_deadline_end_the_game_once(
    attempt: int,
) -> None:
    game = overdue_game()
    results = race(
        lambda: services.check_clock(game_id=game.pk),
        lambda: services.check_clock(game_id=game.pk),
        lambda: services.check_clock(game_id=game.pk),
    )
    assert sum(r.event is not None for r in results) == 1, results
    assert GameEvent.objects.filter(game=game, payload__type="end").count() == 1
    game.refresh_from_db()
    assert game.status == "aborted" and game.deadline is None


def test_two_sweeper_processes_end_each_overdue_game_exactly_once(tmp_path: Path) -> None:
    games = [overdue_game() for _ in range(20)]
    env = {**os.environ, **{k: v for k, v in shared_test_env("sweepers").items() if v}}
    command = [sys.executable, "manage.py", "sweeper", "--once"]
    sweepers = [subprocess.Popen(command, cwd=ROOT, env=env) for _ in range(2)]
    assert [process.wait(timeout=60) for process in sweepers] == [0, 0]
    for game in games:
        game.refresh_from_db()
        assert game.status == "aborted"
        assert GameEvent.objects.filter(game=game, payload__type="end").count() == 1
