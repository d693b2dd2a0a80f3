"""Live play on what production runs: PostgreSQL, the Redis layer, several server processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async
from django.db import connections

from games import services
from games.models import Game, GameConnection, GameEvent
from lobby.models import LobbyConnection
from realtime.errors import ServiceError
from tests.games_helpers import new_game, next_of_type, open_socket, overdue_game, session_for
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
    refused = [r for r in results if isinstance(r, ServiceError)]
    assert len(applied) == 1 and len(refused) == 1, results
    assert refused[0].code == "stale_ply"
    game.refresh_from_db()
    assert (game.ply, game.version) == (1, 1)
    assert GameEvent.objects.filter(game=game, ply__isnull=False).count() == 1


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
    assert GameEvent.objects.filter(game=game, ply__isnull=False).count() == 1


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


@pytest.mark.redis
def test_when_a_server_process_is_killed_its_players_seeks_and_counts_recover(
    tmp_path: Path,
) -> None:
    game = new_game()
    game.time_control = "5+3"
    game.save(update_fields=["time_control"])
    alice, bob = game.player1, game.player2
    env = {
        **shared_test_env(f"kill-{game.pk}"),
        # Short figures so the test is quick; production's are 10 s and 30 s.
        "PRESENCE_HEARTBEAT_SECONDS": "0.5",
        "PRESENCE_EXPIRY_SECONDS": "3",
    }
    alice_cookie = {"Cookie": f"sessionid={session_for(alice)}"}
    bob_cookie = {"Cookie": f"sessionid={session_for(bob)}"}

    async def connect(server: Any, path: str, headers: dict[str, str]) -> Any:
        socket = await websockets.connect(
            server.ws + path, origin=websockets.Origin(server.http), additional_headers=headers
        )
        await asyncio.wait_for(socket.recv(), 10)  # the snapshot
        return socket

    async def frames(socket: Any, **wanted: Any) -> dict[str, Any]:
        """Read until each named test has matched a frame (in any order); those frames."""
        found: dict[str, Any] = {}
        while len(found) < len(wanted):
            message = json.loads(await asyncio.wait_for(socket.recv(), 30))
            for event in message["events"] if message["type"] == "batch" else [message]:
                for name, accept in wanted.items():
                    if name not in found and accept(event):
                        found[name] = event
        return found

    async def frame(socket: Any, accept: Any) -> dict[str, Any]:
        return dict((await frames(socket, it=accept))["it"])

    async def crash(doomed: Any, survivor: Any) -> dict[str, Any]:
        path = f"/ws/games/{game.pk}/"
        # Alice, a spectator and Alice's lobby (with a real-time seek) live on the doomed one.
        await connect(doomed, path, alice_cookie)
        await connect(doomed, path, {})
        alice_lobby = await connect(doomed, "/ws/lobby/", alice_cookie)
        await alice_lobby.send(
            json.dumps({"type": "seek", "games": [{"slug": "zigzag"}], "time_control": "3+2"})
        )
        seek_id = (await frame(alice_lobby, lambda e: e["type"] == "ok"))["seek_id"]
        # Bob plays and watches the lobby from the survivor.
        bob_game = await connect(survivor, path, bob_cookie)
        bob_lobby = await connect(survivor, "/ws/lobby/", bob_cookie)
        await frame(bob_game, lambda e: e["type"] == "crowd" and e["players"]["1"])

        os.kill(doomed.process.pid, signal.SIGKILL)  # no disconnect runs anywhere

        seen, lobby = await asyncio.gather(
            frames(
                bob_game,
                away=lambda e: e["type"] == "away",
                crowd=lambda e: e["type"] == "crowd" and not e["players"]["1"],
            ),
            frames(
                bob_lobby,
                removed=lambda e: e["type"] == "seek_removed" and e["seek_id"] == seek_id,
                online=lambda e: e["type"] == "online" and e["online"] == 1,
            ),
        )
        await bob_game.send(json.dumps({"type": "claim", "id": 1}))
        claim = await frame(bob_game, lambda e: e["type"] == "error")
        for socket in (bob_game, bob_lobby):
            await socket.close()
        return {**seen, **lobby, "claim": claim}

    def connections_left() -> tuple[list[int], bool]:
        return (
            list(GameConnection.objects.values_list("player", flat=True)),
            LobbyConnection.objects.exists(),
        )

    with daphnes(2, env, tmp_path) as (doomed, survivor):
        seen = asyncio.run(crash(doomed, survivor))
        # The survivor forgets Bob's sockets after their close handshakes, not before: give its
        # disconnect handlers a moment before the server is stopped.
        deadline = time.monotonic() + 10
        while connections_left() != ([], False) and time.monotonic() < deadline:
            time.sleep(0.05)

    assert seen["away"]["player"] == 1
    assert seen["crowd"]["spectators"] == 0 and seen["crowd"]["players"] == {"1": False, "2": True}
    assert seen["online"]["online"] == 1
    # Alice's socket is gone: the claim's countdown runs (it is no longer `opponent_here`).
    assert seen["claim"]["code"] == "too_early"
    assert list(GameConnection.objects.values_list("player", flat=True)) == []
    assert not LobbyConnection.objects.exists()
