"""The Bot API's streams (botapi/streams.py, docs/API.md): the account's event stream and a
game's stream, read through Django's ASGI handler as Daphne serves them; and a whole game
played through POSTs by two tokens streaming from two server processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import urllib.request
from pathlib import Path
from typing import Any

import msgspec
import pytest

from accounts import tokens
from botapi import protocol as api
from games import services
from games.engine import pick_client_move, rules_for
from games.models import Game
from games.rules.notation import position_text
from lobby.models import Challenge
from lobby.services import challenges
from realtime import drain, presence
from tests.botapi_helpers import Stream, apost, db, token_for
from tests.games_helpers import make_user, new_game, next_of_type, open_socket, session_for
from tests.servers import daphnes, shared_test_env

transactional = pytest.mark.django_db(transaction=True)


def position_now(game_id: int) -> str:
    game = Game.objects.get(pk=game_id)
    rules = rules_for(game.slug, game.options)
    return position_text(rules, rules.from_json(game.state))


def a_legal_move(frame: dict[str, Any]) -> str:
    legal = frame["game"]["legal_moves"] if frame["type"] == "state" else frame["legal_moves"]
    return pick_client_move(legal, random.Random(7))


# --- the game stream -----------------------------------------------------------------------


@transactional
async def test_a_game_stream_sends_the_state_then_every_event_with_positions() -> None:
    game = await db(new_game)()
    alice, bob = game.player1, game.player2
    alice_token, bob_token = await db(token_for)(alice, "play"), await db(token_for)(bob, "read")
    mine = await Stream(f"/api/games/{game.pk}/stream", token=alice_token).open()
    theirs = await Stream(f"/api/games/{game.pk}/stream", token=bob_token).open()
    assert mine.status == 200
    assert mine.headers[b"Content-Type"] == b"application/x-ndjson"
    state = await mine.line()
    assert state is not None and state["type"] == "state"
    assert (state["you"], state["v"]) == (1, game.version)
    assert state["position"] == await db(position_now)(game.pk)
    assert (await theirs.line() or {})["you"] == 2

    status, answer = await apost(
        f"/api/games/{game.pk}/move", {"move": a_legal_move(state), "ply": 0}, token=alice_token
    )
    assert status == 200, answer
    for stream in (mine, theirs):
        move = await stream.until("move")
        assert move["v"] == answer["event"]["v"]
        assert move["position"] == await db(position_now)(game.pk)
        assert "id" not in move  # the broadcast, not the mover's answer

    status, answer = await apost(f"/api/games/{game.pk}/resign", token=alice_token)
    assert status == 200 and answer["event"]["type"] == "end", answer
    for stream in (mine, theirs):
        end = await stream.until("end")
        assert end["result"]["winner"] == 2
        assert await stream.end() == []  # the answer finishes a moment after `end`


@transactional
async def test_a_finished_game_streams_its_state_and_ends() -> None:
    game = await db(new_game)()
    await db(services.resign)(game_id=game.pk, user=game.player1)
    watcher = await Stream(f"/api/games/{game.pk}/stream").open()
    state = await watcher.line()
    assert state is not None and state["game"]["status"] == "finished" and state["you"] is None
    assert await watcher.end() == []


@transactional
async def test_players_hear_their_rooms_chat_and_spectators_do_not() -> None:
    game = await db(new_game)()
    token = await db(token_for)(game.player1, "play")
    player = await Stream(f"/api/games/{game.pk}/stream", token=token).open()
    spectator = await Stream(f"/api/games/{game.pk}/stream").open()
    await player.line(), await spectator.line()
    status, answer = await apost(f"/api/games/{game.pk}/chat", {"text": "good luck"}, token=token)
    assert status == 200 and answer["event"]["line"]["text"] == "good luck", answer
    chat = await player.until("chat")
    assert chat["line"]["text"] == "good luck" and chat["room"] == "players"
    await apost(f"/api/games/{game.pk}/resign", token=token)
    assert [frame["type"] for frame in await spectator.end()] == ["end"]
    await player.close()


@transactional
async def test_one_stream_per_game_and_token_across_the_cache() -> None:
    game = await db(new_game)()
    token = await db(token_for)(game.player1, "play")
    other = await db(token_for)(game.player1, "read")
    first = await Stream(f"/api/games/{game.pk}/stream", token=token).open()
    await first.line()
    second = await Stream(f"/api/games/{game.pk}/stream", token=token).open()
    assert second.status == 429
    assert second.error()["code"] == "too_many_streams"
    beside = await Stream(f"/api/games/{game.pk}/stream", token=other).open()
    assert beside.status == 200
    await first.close()
    again = await Stream(f"/api/games/{game.pk}/stream", token=token).open()
    assert again.status == 200 and (await again.line() or {})["type"] == "state"
    await again.close()
    await beside.close()


@transactional
async def test_revoking_a_token_ends_its_streams_at_once_and_no_others() -> None:
    game = await db(new_game)()
    alice = game.player1
    doomed, kept = await db(token_for)(alice, "play"), await db(token_for)(alice, "read")
    ending = await Stream(f"/api/games/{game.pk}/stream", token=doomed).open()
    events = await Stream("/api/stream/event", token=doomed).open()
    staying = await Stream(f"/api/games/{game.pk}/stream", token=kept).open()
    await ending.line(), await staying.line(), await events.line()
    row = await db(tokens.ApiToken.objects.get)(digest=tokens.digest(doomed))
    started = asyncio.get_running_loop().time()
    await db(tokens.revoke)(user=alice, token_id=row.pk)
    assert await ending.end() == [] and await events.end() == []
    assert asyncio.get_running_loop().time() - started < 1.0
    assert staying.ended is False
    await staying.close()


@transactional
async def test_a_log_out_ends_that_sessions_stream() -> None:
    game = await db(new_game)()
    alice = game.player1
    cookie = await db(session_for)(alice)
    stream = await Stream(f"/api/games/{game.pk}/stream", cookie=cookie).open()
    assert (await stream.line() or {})["you"] == 1
    from accounts.services import do_end_sockets

    await db(do_end_sockets)(alice.pk, cookie)  # the session logged out
    assert await stream.end() == []


@transactional
async def test_no_such_game_and_missing_scopes_are_refused() -> None:
    alice = await db(make_user)("alice")
    token = await db(token_for)(alice, "read")
    missing = await Stream("/api/games/999999/stream", token=token).open()
    assert (missing.status, missing.error()["code"]) == (404, "no_such_game")
    challenger = await db(token_for)(alice, "challenge")
    game = await db(new_game)()
    refused = await Stream(f"/api/games/{game.pk}/stream", token=challenger).open()
    assert (refused.status, refused.error()["code"]) == (403, "missing_scope")
    nobody = await Stream("/api/stream/event").open()
    assert (nobody.status, nobody.error()["code"]) == (403, "not_logged_in")


@transactional
async def test_a_quiet_stream_sends_an_empty_line_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api, "KEEP_ALIVE_SECONDS", 0.2)
    game = await db(new_game)()
    stream = await Stream(f"/api/games/{game.pk}/stream").open()
    assert (await stream.line() or {})["type"] == "state"
    assert [await stream.raw_line(2), await stream.raw_line(2)] == [b"", b""]
    await stream.close()


@transactional
async def test_a_draining_server_tells_its_streams_and_ends_them() -> None:
    game = await db(new_game)()
    stream = await Stream(f"/api/games/{game.pk}/stream").open()
    events = await Stream("/api/stream/event", cookie=await db(session_for)(game.player2)).open()
    await stream.line(), await events.line()
    try:
        drained = await drain.drain(5.0)  # the streams do not move: they wait ~3.5 s
        late = await Stream(f"/api/games/{game.pk}/stream").open()
        assert [frame["type"] for frame in await late.end()] == ["restarting"]
    finally:  # this test process goes on serving the next tests
        drain._state["draining"] = False
        presence._reaping["on"] = True
    assert drained.left_open == 0
    for each in (stream, events):
        frames = await each.end()
        assert [frame["type"] for frame in frames] == ["restarting"]


# --- the event stream ----------------------------------------------------------------------


@transactional
async def test_the_event_stream_opens_with_games_and_challenges_then_follows_them() -> None:
    game = await db(new_game)()
    alice, bob = game.player1, game.player2
    carol = await db(make_user)("carol")
    waiting = await db(challenges.create_challenge)(
        challenger=carol, challenged="alice", slug="diffusion"
    )
    token = await db(token_for)(alice, "challenge")
    stream = await Stream("/api/stream/event", token=token).open()
    opening: list[Any] = [await stream.line(), await stream.line()]
    assert opening[0] == {"type": "game_start", "game": opening[0]["game"]}
    started = opening[0]["game"]
    assert (started["id"], started["you"], started["status"]) == (game.pk, 1, "active")
    assert started["opponent"]["username"] == "bob" and started["opponent"]["rating"] == 1500
    assert opening[1]["challenge"]["id"] == waiting.pk

    await db(challenges.decline_challenge)(user=alice, challenge_id=waiting.pk)
    declined = await stream.line()
    assert declined is not None and declined["type"] == "challenge_declined"

    mine = await db(challenges.create_challenge)(
        challenger=alice, challenged="carol", slug="zigzag"
    )
    assert (await stream.line() or {})["challenge"]["id"] == mine.pk
    await db(challenges.cancel_challenge)(user=alice, challenge_id=mine.pk)
    cancelled = await stream.line()
    assert cancelled is not None and cancelled["type"] == "challenge_cancelled"
    assert cancelled["challenge"]["status"] == Challenge.Status.CANCELLED

    third = await db(challenges.create_challenge)(
        challenger=carol, challenged="alice", slug="zigzag"
    )
    assert (await stream.line() or {})["type"] == "challenge"
    new = await db(challenges.accept_challenge)(user=alice, challenge_id=third.pk)
    begun = await stream.until("game_start")
    assert begun["game"]["id"] == new.pk and begun["game"]["opponent"]["username"] == "carol"

    await db(services.resign)(game_id=game.pk, user=bob)
    finished = await stream.until("game_finish")
    assert finished["game"]["id"] == game.pk
    assert finished["game"]["status"] == "finished" and finished["game"]["result"]["winner"] == 1
    await stream.close()


# --- secrets ---------------------------------------------------------------------------------


@transactional
async def test_no_token_reaches_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    game = await db(new_game)()
    token = await db(token_for)(game.player1, "play")
    caplog.set_level(logging.DEBUG)
    stream = await Stream(f"/api/games/{game.pk}/stream", token=token).open()
    await stream.line()
    await Stream(f"/api/games/{game.pk}/stream", token=token).open()  # refused: logged
    await apost(f"/api/games/{game.pk}/nonsense", token=token)
    await apost(f"/api/games/{game.pk}/resign", token=token)
    await stream.end()
    assert caplog.records
    assert not [r for r in caplog.records if token in r.getMessage() or token[4:20] in str(r)]


# --- the production shape ------------------------------------------------------------------


GAME_LINE = msgspec.json.Decoder(api.GAME_STREAM_FRAMES)


def _read_lines(url: str, token: str, into: list[dict[str, Any]], ready: Any) -> None:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        for raw in answer:
            if raw.strip():
                GAME_LINE.decode(raw)  # every line is one of the stream's typed frames
                into.append(json.loads(raw))
                ready.set()


POOL = 5  # the servers' DATABASE_POOL_MAX below


@pytest.mark.postgres(reason="two server processes share one database: the production shape")
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_two_bots_on_two_processes_see_every_move_in_order(tmp_path: Path) -> None:
    import threading

    game = new_game("zigzag")
    alice_token, bob_token = token_for(game.player1, "play"), token_for(game.player2, "play")
    watcher_token = token_for(make_user("carol"), "read")
    # A small pool: a stream that kept its view's connection while open (as they once did)
    # would leave the requests below none, past POOL streams on a process.
    env = {**shared_test_env(f"botapi-{id(tmp_path)}"), "DATABASE_POOL_MAX": str(POOL)}
    with daphnes(2, env, tmp_path) as (first, second), contextlib.ExitStack() as held:
        for _ in range(POOL + 2):
            opened = held.enter_context(
                urllib.request.urlopen(
                    urllib.request.Request(
                        f"{first.http}/api/stream/event",
                        headers={"Authorization": f"Bearer {watcher_token}"},
                    ),
                    timeout=20,
                )
            )
            assert opened.status == 200
        seen: dict[str, list[dict[str, Any]]] = {"alice": [], "bob": []}
        ready = {name: threading.Event() for name in seen}
        readers = [
            threading.Thread(
                target=_read_lines,
                args=(f"{server.http}/api/games/{game.pk}/stream", token, seen[name], ready[name]),
                daemon=True,
            )
            for name, server, token in (
                ("alice", first, alice_token),
                ("bob", second, bob_token),
            )
        ]
        for reader in readers:
            reader.start()
        assert all(event.wait(20) for event in ready.values())
        tokens_by_seat = {1: alice_token, 2: bob_token}
        servers_by_seat = {1: second, 2: first}  # each bot posts to the other's process
        played = []
        frame = seen["alice"][0]
        rng = random.Random(3)
        for ply in range(12):
            seat = frame["game"]["to_move"] if frame["type"] == "state" else frame["to_move"]
            legal = (
                frame["game"]["legal_moves"] if frame["type"] == "state" else frame["legal_moves"]
            )
            move = pick_client_move(legal, rng)
            request = urllib.request.Request(
                f"{servers_by_seat[seat].http}/api/games/{game.pk}/move",
                data=json.dumps({"move": move, "ply": ply}).encode(),
                headers={
                    "Authorization": f"Bearer {tokens_by_seat[seat]}",
                    "Content-Type": "application/json",
                },
            )
            with urllib.request.urlopen(request, timeout=20) as answer:
                event = json.loads(answer.read())["event"]
            played.append(event["v"])
            frame = event
            if event["status"] != "active":
                break
        else:
            resign = urllib.request.Request(
                f"{first.http}/api/games/{game.pk}/resign",
                data=b"{}",
                headers={"Authorization": f"Bearer {alice_token}"},
            )
            with urllib.request.urlopen(resign, timeout=20) as answer:
                assert json.loads(answer.read())["ok"] is True
        for reader in readers:
            reader.join(30)
            assert not reader.is_alive(), "a stream did not end after the game's end"
        logs = first.output() + second.output()
    for name, frames in seen.items():
        state, *events = frames
        assert state["type"] == "state" and state["position"]
        versions = [event["v"] for event in events]
        assert versions == list(range(state["v"] + 1, state["v"] + 1 + len(events))), name
        moves = [event for event in events if event["type"] == "move"]
        assert [move["v"] for move in moves] == played, name
        assert all(move["position"] for move in moves)
        assert events[-1]["type"] == "end", name
    assert alice_token not in logs and bob_token not in logs
    assert Game.objects.get(pk=game.pk).status == Game.Status.FINISHED


@transactional
async def test_revoking_a_token_leaves_the_users_sockets_open() -> None:
    game = await db(new_game)()
    client, _state = await open_socket(game.pk, game.player1)
    token = await db(token_for)(game.player1, "play")
    row = await db(tokens.ApiToken.objects.get)(digest=tokens.digest(token))
    await db(tokens.revoke)(user=game.player1, token_id=row.pk)
    await asyncio.sleep(0.3)  # the revocation's message reaches the socket's account group
    await client.send_json_to({"type": "ping", "id": 1})
    assert await next_of_type(client, "pong") == {"type": "pong", "id": 1}
    await client.disconnect()
