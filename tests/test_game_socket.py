"""The game socket: snapshot, moves to every socket, refusals, resync, resign/abort/rematch."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from accounts.models import User
from games import presence, services
from games.engine import client_moves, pick_client_move, rules_for
from games.models import Game, GameConnection, GameEvent
from games.selectors import MAX_REPLAY
from games.services import events
from realtime.ws import CLOSE_FLOODING
from tests.games_helpers import (
    game_row,
    make_user,
    new_game,
    next_of_type,
    open_socket,
    session_for,
    settle_crowd,
)
from tests.wsutil import frames_until_close

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture
async def table() -> dict[str, Any]:
    """A fresh Diffusion game with both players and one anonymous spectator connected."""
    game = await db(new_game)()
    alice = await db(User.objects.get)(username="alice")
    bob = await db(User.objects.get)(username="bob")
    p1, s1 = await open_socket(game.pk, alice)
    p2, s2 = await open_socket(game.pk, bob)
    watcher, s3 = await open_socket(game.pk)
    for client in (p1, p2, watcher):
        await settle_crowd(client, spectators=1)
    yield {
        "game": game,
        "alice": alice,
        "bob": bob,
        "p1": p1,
        "p2": p2,
        "watcher": watcher,
        "snapshots": (s1, s2, s3),
    }
    for client in (p1, p2, watcher):
        await client.disconnect()


async def test_each_socket_gets_a_snapshot_saying_who_it_is(table: dict[str, Any]) -> None:
    s1, s2, s3 = table["snapshots"]
    assert [s["type"] for s in (s1, s2, s3)] == ["state"] * 3
    assert (s1["you"], s2["you"], s3["you"]) == (1, 2, None)
    game = s1["game"]
    assert game["slug"] == "diffusion"
    assert game["players"]["1"]["username"] == "alice"
    assert game["players"]["2"]["username"] == "bob"
    assert game["status"] == "active"
    assert game["ply"] == 0 and game["moves"] == []
    assert game["to_move"] == 1
    assert sorted(game["legal_moves"]) == list("ABCDEFGHIJKL")
    assert game["state"]["rows"] == [[4] * 6, [4] * 6]
    assert s1["v"] == 0


async def test_a_move_reaches_both_players_and_the_spectator(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "i", "ply": 0, "id": "c1"})
    mine = await next_of_type(table["p1"], "move")
    theirs = await next_of_type(table["p2"], "move")
    watched = await next_of_type(table["watcher"], "move")
    assert mine["id"] == "c1"
    assert "id" not in theirs and "id" not in watched
    for event in (mine, theirs, watched):
        assert event["v"] == 1
        assert event["ply"] == 1
        assert event["player"] == 1
        assert event["move"] == "I"  # canonical spelling
        # RULES.md section 1, first worked example.
        assert event["state"]["rows"] == [[4, 5, 5, 5, 4, 4], [4, 4, 0, 5, 4, 4]]
        assert event["to_move"] == 2
        assert "I" not in event["legal_moves"]
        assert event["status"] == "active" and event["result"] is None
        # The sowing, stone by stone from I's four (east, north-east, north, north-west).
        assert event["path"] == [
            ["lift", "I"],
            ["sow", "J"],
            ["sow", "C"],
            ["sow", "D"],
            ["sow", "E"],
        ]
    assert await db(game_row)(table["game"].pk) == (1, 1, "active")


async def expect_refusal(client: Any, message: dict[str, Any], code: str) -> dict[str, Any]:
    await client.send_json_to(message)
    error = await next_of_type(client, "error")
    assert error["code"] == code, error
    assert error["message"]
    return error


@pytest.mark.parametrize(
    ("who", "message", "code", "says"),
    [
        ("p1", {"type": "move", "move": "Q", "ply": 0, "id": 5}, "illegal_move", "Q"),
        ("p1", {"type": "move", "move": "", "ply": 0, "id": 5}, "bad_message", "move"),
        ("p1", {"type": "move", "move": 7, "ply": 0, "id": 5}, "bad_message", "move"),
        ("p1", {"type": "move", "move": "I", "id": 5}, "bad_message", "ply"),
        ("p1", {"type": "move", "move": "I", "ply": "0", "id": 5}, "bad_message", "ply"),
        ("p1", {"type": "move", "move": "I", "ply": True, "id": 5}, "bad_message", "ply"),
        ("p1", {"type": "move", "move": "I" * 500, "ply": 0, "id": 5}, "bad_message", "at most"),
        ("p2", {"type": "move", "move": "I", "ply": 0, "id": 5}, "not_your_turn", "turn"),
        ("watcher", {"type": "move", "move": "I", "ply": 0, "id": 5}, "not_a_player", "players"),
        ("watcher", {"type": "resign", "id": 5}, "not_a_player", "players"),
        ("p1", {"type": "rematch", "id": 5}, "game_not_over", "over"),
        ("p1", {"type": "sync", "id": 5}, "bad_message", "v"),
    ],
)
async def test_a_refused_request_changes_nothing(
    table: dict[str, Any], who: str, message: dict[str, Any], code: str, says: str
) -> None:
    error = await expect_refusal(table[who], message, code)
    assert says in error["message"]
    assert error["id"] == 5
    assert await db(game_row)(table["game"].pk) == (0, 0, "active")
    assert await table["p2"].receive_nothing(timeout=0.1)


async def test_an_illegal_move_says_why(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p1"], "move")
    await next_of_type(table["p2"], "move")
    error = await expect_refusal(
        table["p2"], {"type": "move", "move": "I", "ply": 1}, "illegal_move"
    )
    assert "empty" in error["message"]
    assert await db(game_row)(table["game"].pk) == (1, 1, "active")


async def test_a_stale_ply_is_refused_and_followed_by_a_fresh_snapshot(
    table: dict[str, Any],
) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p1"], "move")
    await next_of_type(table["p2"], "move")
    await expect_refusal(table["p2"], {"type": "move", "move": "A", "ply": 0}, "stale_ply")
    fresh = await next_of_type(table["p2"], "state")
    assert fresh["v"] == 1 and fresh["game"]["ply"] == 1
    await expect_refusal(table["p2"], {"type": "move", "move": "A", "ply": 5}, "stale_ply")
    assert await db(game_row)(table["game"].pk) == (1, 1, "active")


async def test_a_resent_move_is_a_success_and_is_not_applied_twice(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0, "id": "a"})
    first = await next_of_type(table["p1"], "move")
    await table["p1"].send_json_to({"type": "move", "move": " i ", "ply": 0, "id": "b"})
    again = await next_of_type(table["p1"], "move")
    assert again["duplicate"] is True and again["id"] == "b"
    assert again["v"] == first["v"] and again["state"] == first["state"]
    assert await db(game_row)(table["game"].pk) == (1, 1, "active")
    assert await db(GameEvent.objects.filter(ply__isnull=False).count)() == 1
    # The other player saw it once.
    await next_of_type(table["p2"], "move")
    assert await table["p2"].receive_nothing(timeout=0.1)
    # A different move for the same ply is stale, not a resend.
    await expect_refusal(table["p1"], {"type": "move", "move": "A", "ply": 0}, "stale_ply")


async def test_the_game_over_refuses_moves_after_a_resignation(table: dict[str, Any]) -> None:
    await table["p2"].send_json_to({"type": "resign", "id": 1})
    for client in (table["p1"], table["p2"], table["watcher"]):
        end = await next_of_type(client, "end")
        assert end["status"] == "finished"
        assert end["result"] == {
            "winner": 1,
            "termination": "resignation",
            "reason": "bob resigned",
        }
    await expect_refusal(table["p1"], {"type": "move", "move": "I", "ply": 0}, "game_over")
    await expect_refusal(table["p1"], {"type": "resign"}, "game_over")
    assert await db(game_row)(table["game"].pk) == (0, 1, "finished")


async def test_abort_is_allowed_until_both_players_have_moved(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p2"], "move")
    await table["p2"].send_json_to({"type": "move", "move": "A", "ply": 1})
    await next_of_type(table["p2"], "move")
    for _ in range(2):
        await next_of_type(table["p1"], "move")
    await expect_refusal(table["p1"], {"type": "abort"}, "too_late_to_abort")
    assert (await db(game_row)(table["game"].pk))[2] == "active"


async def test_abort_before_the_second_player_moved_ends_without_a_result(
    table: dict[str, Any],
) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p2"], "move")
    await table["p2"].send_json_to({"type": "abort"})
    await next_of_type(table["watcher"], "move")
    end = await next_of_type(table["watcher"], "end")
    assert end["status"] == "aborted"
    assert end["result"] == {"winner": None, "termination": "abort", "reason": "aborted by bob"}


async def test_a_rematch_needs_both_and_swaps_the_sides(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "resign"})
    await next_of_type(table["p2"], "end")
    await next_of_type(table["p1"], "end")
    await table["p1"].send_json_to({"type": "rematch", "id": "r1"})
    offer = await next_of_type(table["p2"], "rematch_offer")
    assert offer["by"] == 1
    await table["p1"].send_json_to({"type": "rematch", "id": "r2"})
    assert (await next_of_type(table["p1"], "rematch_offer"))["id"] == "r1"
    assert await next_of_type(table["p1"], "ack") == {"type": "ack", "id": "r2", "duplicate": True}
    await table["p2"].send_json_to({"type": "rematch"})
    assert (await next_of_type(table["watcher"], "end"))["v"] == 1
    assert (await next_of_type(table["watcher"], "rematch_offer"))["v"] == 2
    rematch = await next_of_type(table["watcher"], "rematch")
    assert rematch["v"] == 3
    new = await db(Game.objects.select_related("player1", "player2").get)(pk=rematch["new_game_id"])
    assert (new.player1.username, new.player2.username) == ("bob", "alice")
    assert new.slug == "diffusion" and new.status == "active"


async def test_both_rematch_clicks_make_one_game() -> None:
    game = await db(new_game)()
    alice, bob = game.player1, game.player2
    await db(services.resign)(game_id=game.pk, user=alice)
    results = await asyncio.gather(
        db(services.offer_rematch)(game_id=game.pk, user=alice),
        db(services.offer_rematch)(game_id=game.pk, user=bob),
    )
    assert await db(Game.objects.count)() == 2
    assert {r.event["type"] for r in results} == {"rematch_offer", "rematch"}


async def test_a_missed_event_is_replayed_on_sync(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["watcher"], "move")
    await table["p2"].send_json_to({"type": "move", "move": "A", "ply": 1})
    await next_of_type(table["watcher"], "move")
    await table["watcher"].send_json_to({"type": "sync", "v": 0})
    replay = [await next_of_type(table["watcher"], "move") for _ in range(2)]
    assert [(e["v"], e["move"]) for e in replay] == [(1, "I"), (2, "A")]
    await table["watcher"].send_json_to({"type": "sync", "v": -1})
    assert (await next_of_type(table["watcher"], "state"))["v"] == 2
    await table["watcher"].send_json_to({"type": "sync", "v": 99})
    assert (await next_of_type(table["watcher"], "state"))["v"] == 2


async def test_a_reconnecting_client_gets_what_it_missed(table: dict[str, Any]) -> None:
    await table["watcher"].disconnect()
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p2"], "move")
    back, first = await open_socket(table["game"].pk, query="?v=0")
    assert (first["type"], first["v"], first["move"]) == ("move", 1, "I")
    table["watcher"] = back


async def test_a_dropped_broadcast_is_filled_in_before_the_next_event(
    table: dict[str, Any],
) -> None:
    game_id = table["game"].pk
    channel = await db(
        lambda: GameConnection.objects.get(game_id=game_id, player__isnull=True).channel_name
    )()
    layer = get_channel_layer()
    # The spectator misses one broadcast, as when a channel layer drops a message.
    await layer.group_discard(presence.game_group(game_id), channel)
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0})
    await next_of_type(table["p2"], "move")
    await layer.group_add(presence.game_group(game_id), channel)
    await table["p2"].send_json_to({"type": "move", "move": "A", "ply": 1})
    first = await next_of_type(table["watcher"], "move")
    second = await next_of_type(table["watcher"], "move")
    assert [(first["v"], first["move"]), (second["v"], second["move"])] == [(1, "I"), (2, "A")]


async def test_players_and_spectators_see_the_crowd(table: dict[str, Any]) -> None:
    extra, _ = await open_socket(table["game"].pk)
    crowd = await next_of_type(table["p1"], "crowd")
    assert crowd == {"type": "crowd", "spectators": 2, "players": {"1": True, "2": True}}
    await table["p2"].disconnect()
    crowd = await next_of_type(table["watcher"], "crowd")
    if crowd["players"]["2"]:  # the arrival's message came first
        crowd = await next_of_type(table["watcher"], "crowd")
    assert crowd == {"type": "crowd", "spectators": 2, "players": {"1": True, "2": False}}
    table["p2"], _ = await open_socket(table["game"].pk, table["bob"])
    await extra.disconnect()


async def test_a_flood_is_rate_limited_and_changes_nothing(table: dict[str, Any]) -> None:
    for _ in range(60):
        await table["watcher"].send_json_to({"type": "move", "move": "I", "ply": 0})
    codes = set()
    # Until both kinds have come, or nothing for a second (a busy machine answers in bursts).
    while codes != {"not_a_player", "rate_limited"} and not await table["watcher"].receive_nothing(
        timeout=1.0
    ):
        message = await table["watcher"].receive_json_from()
        if message["type"] == "error":
            codes.add(message["code"])
    assert codes == {"not_a_player", "rate_limited"}
    assert await db(game_row)(table["game"].pk) == (0, 0, "active")


async def test_an_oversized_frame_is_refused_on_the_game_socket(table: dict[str, Any]) -> None:
    await table["p1"].send_json_to({"type": "move", "move": "I", "ply": 0, "pad": "x" * 5000})
    assert (await next_of_type(table["p1"], "error"))["code"] == "too_large"
    assert await db(game_row)(table["game"].pk) == (0, 0, "active")


async def test_an_unknown_game_is_refused_with_a_message() -> None:
    from tests.wsutil import communicator

    client = communicator("/ws/games/999999/")
    connected, _ = await client.connect()
    assert connected
    error = await client.receive_json_from()
    assert error["code"] == "no_such_game"
    assert (await client.receive_output())["type"] == "websocket.close"


async def test_a_logged_in_non_player_is_a_spectator(table: dict[str, Any]) -> None:
    carol = await db(make_user)("carol")
    client, snapshot = await open_socket(table["game"].pk, carol)
    assert snapshot["you"] is None
    await expect_refusal(client, {"type": "move", "move": "I", "ply": 0}, "not_a_player")
    await client.disconnect()


def play_random_moves(game: Game, count: int) -> int:
    """Play up to `count` random legal moves through the service; how many were played."""
    rules = rules_for(game.slug, game.options)
    state = rules.initial_state()
    rng = random.Random(7)
    players = {1: game.player1, 2: game.player2}
    for ply in range(count):
        if rules.outcome(state) is not None:
            return ply
        move = pick_client_move(client_moves(rules, state), rng)
        services.play_move(game_id=game.pk, user=players[rules.to_move(state)], move=move, ply=ply)
        state = rules.play(state, move)
    return count


async def test_a_far_behind_sync_gets_one_snapshot_not_the_whole_history(
    table: dict[str, Any],
) -> None:
    played = await db(play_random_moves)(table["game"], MAX_REPLAY + 5)
    assert played == MAX_REPLAY + 5
    watcher = table["watcher"]
    while not await watcher.receive_nothing(timeout=0.2):  # the live moves
        await watcher.receive_json_from()
    await watcher.send_json_to({"type": "sync", "v": 0})
    answer = await next_of_type(watcher, "state")
    assert answer["v"] == played
    assert await watcher.receive_nothing(timeout=0.3)  # one frame, no replay after it


async def test_syncing_in_a_loop_spends_the_clients_rate_and_ends_in_a_close(
    table: dict[str, Any],
) -> None:
    await db(play_random_moves)(table["game"], 3)
    watcher = table["watcher"]
    for _ in range(3):
        await next_of_type(watcher, "move")
    for _ in range(150):
        await watcher.send_json_to({"type": "sync", "v": 0})  # each asks for three events
    frames, code = await frames_until_close(watcher)
    assert code == CLOSE_FLOODING
    # Each answer costs the rate as ten messages: a handful answered (without the charge,
    # the burst of 40 would have pulled 120 events), one warning.
    assert [f["type"] for f in frames].count("move") <= 15
    assert [f.get("code") for f in frames].count("rate_limited") == 1
    table["watcher"], _ = await open_socket(table["game"].pk)  # for the fixture's clean-up


async def test_a_move_whose_broadcast_was_lost_reaches_the_other_sockets_anyway(
    table: dict[str, Any], settings: Any, monkeypatch: Any
) -> None:
    settings.GAME_CATCH_UP_SECONDS = 0.2
    # New sockets, so the catching-up task runs at the short interval from the start.
    p2, _ = await open_socket(table["game"].pk, table["bob"])
    watcher, _ = await open_socket(table["game"].pk)
    with monkeypatch.context() as patch:
        # The channel layer loses the broadcast (Redis restarting at that moment).
        patch.setattr(events, "broadcast", lambda game_id, event: None)
        await db(services.play_move)(game_id=table["game"].pk, user=table["alice"], move="I", ply=0)
    for client in (p2, watcher):
        move = await next_of_type(client, "move")  # nothing else will come: it is a catch-up
        assert (move["v"], move["move"]) == (1, "I")
        await client.disconnect()


async def test_a_socket_opening_while_the_database_is_away_is_told_so_and_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It crashed the consumer (a 1011 close, "Exception inside application" in the log).
    from django.db import OperationalError

    from games import selectors
    from realtime.ws import CLOSE_TRY_AGAIN
    from tests.wsutil import communicator

    game = await db(new_game)()

    def away(*args: Any) -> None:
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(selectors, "load_game", away)
    client = communicator(f"/ws/games/{game.pk}/")
    accepted, _ = await client.connect()
    assert accepted
    frames, code = await frames_until_close(client)
    assert [(f["type"], f["code"]) for f in frames] == [("error", "unavailable")]
    assert code == CLOSE_TRY_AGAIN == 4503


async def test_a_socket_whose_sign_in_cannot_be_looked_up_is_told_to_come_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The session's user could not be read (the database away): the handshake crashed. It
    # must not let the player in as a visitor either.
    from django.db import OperationalError

    from realtime import auth
    from tests.wsutil import communicator

    game = await db(new_game)()
    key = await db(session_for)(game.player1)

    def away(*args: Any) -> None:
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(auth, "signed_in_many", away)
    client = communicator(f"/ws/games/{game.pk}/", session_key=key)
    accepted, _ = await client.connect()
    assert accepted
    frames, code = await frames_until_close(client)
    assert [(f["type"], f["code"]) for f in frames] == [("error", "unavailable")]
    assert code == 4503


async def versions_up_to(client: Any, last: int) -> list[tuple[int, Any]]:
    """The versioned frames a socket receives until version `last`, as (v, id) pairs: a
    version sent twice would show up here, as it comes before `last` on an ordered stream."""
    seen: list[tuple[int, Any]] = []
    while not seen or seen[-1][0] < last:
        frame = await client.receive_json_from(timeout=5)
        if "v" in frame:
            seen.append((frame["v"], frame.get("id")))
        else:
            assert frame["type"] == "crowd", frame
    return seen


@pytest.mark.parametrize("catch_up", [False, True], ids=["broadcast-first", "catch-up-too"])
async def test_the_mover_gets_its_own_move_once_with_its_id_whatever_reaches_its_socket_first(
    table: dict[str, Any], monkeypatch: pytest.MonkeyPatch, catch_up: bool
) -> None:
    from games import catchup, consumers

    # The move is committed and broadcast, but the mover's socket has not answered yet: it
    # waits here, between the service's return and the answer, until the test lets it go.
    committed, go = asyncio.Event(), asyncio.Event()
    real_db_call = consumers.db_call

    def pausing_db_call(func: Any, *args: Any) -> Any:
        call = real_db_call(func, *args)
        if func is not services.play_move:
            return call

        async def paused(**kwargs: Any) -> Any:
            applied = await call(**kwargs)
            committed.set()
            await go.wait()
            return applied

        return paused

    monkeypatch.setattr(consumers, "db_call", pausing_db_call)
    p1, p2, watcher = table["p1"], table["p2"], table["watcher"]
    await p1.send_json_to({"type": "move", "move": "I", "ply": 0, "id": "c1"})
    await asyncio.wait_for(committed.wait(), 5)
    # The broadcast has gone out (the opponent has it): it waits in the mover's queue.
    assert await versions_up_to(p2, 1) == [(1, None)]
    if catch_up:
        # Meanwhile the periodic catch-up looks, twice: the first sees v1 stored, the second
        # finds every socket still lacking it.
        # (Bounded: a catch-up that waited for the mover's answer would never end here.)
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(catchup.catch_up_once(loop), 5)
        await asyncio.wait_for(catchup.catch_up_once(loop), 5)
    go.set()
    await p2.send_json_to({"type": "move", "move": "A", "ply": 1, "id": "c2"})
    # Each socket receives each version once, in order; the mover's own with its id.
    assert await versions_up_to(p1, 2) == [(1, "c1"), (2, None)]
    assert await versions_up_to(p2, 2) == [(2, "c2")]
    assert await versions_up_to(watcher, 2) == [(1, None), (2, None)]


async def test_the_catch_up_serves_any_stream_and_passes_over_a_busy_one() -> None:
    from games import catchup

    class Stream:
        """Only what the catch-up asks of a socket's stream (catchup.Stream)."""

        def __init__(self, game_id: int) -> None:
            self.game_id, self.last_v, self.busy = game_id, 0, True
            self.caught: list[int] = []

        async def catch_up(self, version: int) -> None:
            self.caught.append(version)
            self.last_v = version

    game = await db(new_game)()
    await db(services.play_move)(game_id=game.pk, user=game.player1, move="I", ply=0)
    stream = Stream(game.pk)
    catchup.watch(stream)
    loop = asyncio.get_running_loop()
    try:
        # Behind, but busy (answering a request, which brings it up to date): passed over.
        await catchup.catch_up_once(loop)
        await catchup.catch_up_once(loop)
        assert stream.caught == []
        stream.busy = False
        await catchup.catch_up_once(loop)
        assert stream.caught == [1]
    finally:
        catchup.forget(stream)
