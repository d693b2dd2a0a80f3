"""Chat, takebacks and draws over the game socket: who hears what, and resync."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from accounts.models import User
from games import services
from games.models import ChatLine, GameEvent
from tests.games_helpers import make_user, new_game, next_of_type, open_socket, settle_crowd

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture
async def table() -> Any:
    """A ZigZag game: both players, a signed-in spectator (carol) and an anonymous one."""
    game = await db(new_game)("zigzag")
    alice = await db(User.objects.get)(username="alice")
    bob = await db(User.objects.get)(username="bob")
    carol = await db(make_user)("carol")
    sockets = {}
    snapshots = {}
    for name, user in (("p1", alice), ("p2", bob), ("carol", carol), ("anon", None)):
        sockets[name], snapshots[name] = await open_socket(game.pk, user)
    for client in sockets.values():
        await settle_crowd(client, spectators=2)
    yield {"game": game, "snapshots": snapshots, **sockets}
    for client in sockets.values():
        await client.disconnect()


async def quiet(*clients: Any) -> bool:
    """True when none of the clients receives anything but presence."""
    for client in clients:
        while not await client.receive_nothing(timeout=0.1):
            frame = await client.receive_json_from()
            if frame["type"] != "crowd":
                return False
    return True


async def test_the_snapshot_carries_each_sockets_room(table: dict[str, Any]) -> None:
    rooms = {name: snap["chat"]["room"] for name, snap in table["snapshots"].items()}
    assert rooms == {"p1": "players", "p2": "players", "carol": "spectators", "anon": "spectators"}
    game = table["snapshots"]["p1"]["game"]
    assert (game["draws"], game["offers"], game["takebacks"], game["rated"]) == (
        True,
        {},
        [],
        False,
    )


async def test_a_players_line_reaches_the_players_only_and_the_sender_once(
    table: dict[str, Any],
) -> None:
    await table["p1"].send_json_to(
        {"type": "chat", "room": "players", "text": "<b>hi</b>", "id": 7}
    )
    mine = await next_of_type(table["p1"], "chat")
    theirs = await next_of_type(table["p2"], "chat")
    assert mine["id"] == 7 and "id" not in theirs
    assert mine["line"] == theirs["line"]
    assert theirs["line"]["text"] == "<b>hi</b>" and theirs["line"]["user"] == "alice"
    assert await quiet(table["p1"], table["carol"], table["anon"])


async def test_a_spectators_line_stays_with_the_spectators(table: dict[str, Any]) -> None:
    await table["carol"].send_json_to({"type": "chat", "room": "spectators", "text": "gg soon"})
    assert (await next_of_type(table["carol"], "chat"))["line"]["text"] == "gg soon"
    assert (await next_of_type(table["anon"], "chat"))["line"]["user"] == "carol"
    assert await quiet(table["p1"], table["p2"])


@pytest.mark.parametrize(
    ("who", "message", "code"),
    [
        ("anon", {"type": "chat", "room": "spectators", "text": "hello"}, "not_logged_in"),
        ("carol", {"type": "chat", "room": "players", "text": "hello"}, "not_a_player"),
        ("p1", {"type": "chat", "room": "spectators", "text": "hello"}, "not_a_spectator"),
        ("p1", {"type": "chat", "room": "players", "text": "y" * 141}, "chat_too_long"),
        ("p1", {"type": "chat", "room": "players"}, "bad_message"),
        ("carol", {"type": "chat_mute", "mute": True}, "not_a_player"),
        ("carol", {"type": "takeback"}, "not_a_player"),
        ("p1", {"type": "takeback"}, "nothing_to_take_back"),
        ("p2", {"type": "takeback_answer", "accept": True}, "no_offer"),
        ("p2", {"type": "draw_answer", "accept": True}, "no_offer"),
        ("p2", {"type": "draw_answer"}, "bad_message"),
    ],
)
async def test_a_refused_request_is_answered_and_changes_nothing(
    table: dict[str, Any], who: str, message: dict[str, Any], code: str
) -> None:
    await table[who].send_json_to({**message, "id": "r"})
    error = await next_of_type(table[who], "error")
    assert (error["code"], error["id"]) == (code, "r") and error["message"]
    assert await db(ChatLine.objects.count)() == 0
    assert await db(GameEvent.objects.count)() == 0
    assert await quiet(*(table[name] for name in ("p1", "p2", "carol", "anon") if name != who))


async def test_a_takeback_is_asked_answered_and_seen_by_everyone(table: dict[str, Any]) -> None:
    move = sorted(table["snapshots"]["p1"]["game"]["legal_moves"])[0]
    await table["p1"].send_json_to({"type": "move", "move": move, "ply": 0})
    for name in ("p1", "p2", "carol", "anon"):
        await next_of_type(table[name], "move")
    await table["p1"].send_json_to({"type": "takeback", "id": 1})
    for name in ("p1", "p2", "carol", "anon"):
        offer = await next_of_type(table[name], "takeback_offer")
        assert (offer["by"], offer["v"]) == (1, 2)
    await table["p2"].send_json_to({"type": "takeback_answer", "accept": True, "id": 2})
    for name in ("p1", "p2", "carol", "anon"):
        event = await next_of_type(table[name], "takeback")
        assert (event["v"], event["ply"], event["undone"], event["to_move"]) == (3, 0, 1, 1)
    # A late joiner's snapshot shows no move and one takeback.
    late, snapshot = await open_socket(table["game"].pk)
    assert snapshot["game"]["moves"] == [] and snapshot["game"]["ply"] == 0
    assert snapshot["game"]["takebacks"] == [{"ply": 0, "undone": 1}]
    await late.disconnect()


async def test_a_draw_offer_and_its_acceptance_end_the_game_for_everyone(
    table: dict[str, Any],
) -> None:
    await table["p2"].send_json_to({"type": "draw"})
    for name in ("p1", "p2", "carol", "anon"):
        assert (await next_of_type(table[name], "draw_offer"))["by"] == 2
    await table["p1"].send_json_to({"type": "draw_answer", "accept": True})
    for name in ("p1", "p2", "carol", "anon"):
        end = await next_of_type(table[name], "end")
        assert end["result"]["termination"] == "agreement" and end["result"]["winner"] is None


async def test_a_draw_in_diffusion_is_refused() -> None:
    game = await db(new_game)("diffusion")
    alice = await db(User.objects.get)(username="alice")
    client, _ = await open_socket(game.pk, alice)
    await client.send_json_to({"type": "draw"})
    error = await next_of_type(client, "error")
    assert error["code"] == "no_draws" and "cannot end in a draw" in error["message"]
    await client.disconnect()


async def test_a_muted_opponents_lines_no_longer_arrive(table: dict[str, Any]) -> None:
    await table["p2"].send_json_to({"type": "chat_mute", "mute": True, "id": "m"})
    ack = await next_of_type(table["p2"], "ack")
    assert ack["id"] == "m"
    await table["p1"].send_json_to({"type": "chat", "room": "players", "text": "hello?"})
    await next_of_type(table["p1"], "chat")
    assert await quiet(table["p2"])


async def test_sync_with_the_last_line_seen_brings_the_lines_missed(
    table: dict[str, Any],
) -> None:
    for text in ("one", "two", "three"):
        await table["p1"].send_json_to({"type": "chat", "room": "players", "text": text})
        first = await next_of_type(table["p1"], "chat")
        await next_of_type(table["p2"], "chat")
        if text == "one":
            seen = first["line"]["id"]
    await table["p2"].send_json_to({"type": "sync", "v": 0, "chat": seen})
    lines = await next_of_type(table["p2"], "chat_lines")
    assert lines["room"] == "players"
    assert [line["text"] for line in lines["lines"]] == ["two", "three"]
    # A reconnection's snapshot carries the room's lines.
    bob = await db(User.objects.get)(username="bob")
    again, snapshot = await open_socket(table["game"].pk, bob)
    assert [line["text"] for line in snapshot["chat"]["lines"]] == ["one", "two", "three"]
    await again.disconnect()


async def test_a_players_vacation_reaches_the_game_socket_with_the_held_clock() -> None:
    alice = await db(make_user)("alice")
    bob = await db(make_user)("bob")
    game = await db(services.create_game)(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="3d"
    )
    client, snapshot = await open_socket(game.pk, bob)
    assert snapshot["game"]["clock"]["paused_until"] is None
    await db(services.start_vacation)(user=alice, days=4)
    event = await next_of_type(client, "vacation")
    assert (event["player"], event["v"]) == (1, 1)
    assert event["clock"]["paused_until"] == event["until"]
    assert event["until"] - event["clock"]["server_time"] >= 4 * 86_400_000 - 5_000
    await client.disconnect()
