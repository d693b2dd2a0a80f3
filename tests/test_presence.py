"""Presence survives crashes: rows of a dead server process are removed and the apps react;
a consumer that fails still cleans up after its socket."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from accounts.models import User
from games import services
from games.models import Game, GameConnection, GameEvent
from lobby.models import LobbyConnection, Seek
from lobby.selectors import online_count
from lobby.services import feed, seeks
from realtime import presence
from realtime.errors import ServiceError
from tests.games_helpers import make_user, open_socket, session_for
from tests.wsutil import communicator

pytestmark = pytest.mark.django_db(transaction=True)

DEAD = "host-that-died:4242:deadbeef"


def long_ago() -> Any:
    return timezone.now() - timedelta(seconds=presence.expiry_seconds() + 5)


def realtime_game() -> Game:
    return services.create_game(
        slug="diffusion",
        options={},
        player1=make_user("alice"),
        player2=make_user("bob"),
        time_control="5+3",
    )


def connection_of_a_dead_process(game: Game, player: int | None, name: str) -> GameConnection:
    user = (game.player1 if player == 1 else game.player2) if player else None
    return GameConnection.objects.create(
        game=game,
        channel_name=name,
        user=user,
        player=player,
        server=DEAD,
        seen_at=long_ago(),
    )


def test_a_dead_process_players_count_as_gone_and_the_opponent_can_claim_in_time() -> None:
    game = realtime_game()
    connection_of_a_dead_process(game, 1, "dead.alice")
    connection_of_a_dead_process(game, None, "dead.watcher")
    fresh = GameConnection.objects.create(
        game=game, channel_name="live.bob", user=game.player2, player=2, server="alive"
    )
    # Before the reaper runs, the dead socket still says Alice is here.
    with pytest.raises(ServiceError) as refused:
        services.claim_victory(game_id=game.pk, user=game.player2)
    assert refused.value.code == "opponent_here"

    assert presence.reap() == 2

    assert list(GameConnection.objects.values_list("pk", flat=True)) == [fresh.pk]
    game.refresh_from_db()
    assert set(game.away) == {"1"}
    away = GameEvent.objects.get(game=game, payload__type="away").payload
    assert away["player"] == 1
    with pytest.raises(ServiceError) as refused:
        services.claim_victory(game_id=game.pk, user=game.player2)
    assert refused.value.code == "too_early"  # the countdown runs: no longer `opponent_here`


def test_rows_a_live_process_vouched_for_are_kept() -> None:
    game = realtime_game()
    GameConnection.objects.create(
        game=game, channel_name="live.alice", user=game.player1, player=1, server="alive"
    )
    LobbyConnection.objects.create(channel_name="live.lobby", server="alive")
    assert presence.reap() == 0
    assert GameConnection.objects.count() == 1
    assert LobbyConnection.objects.count() == 1


def test_a_dead_process_lobby_users_go_offline_and_their_real_time_seeks_close() -> None:
    carol, dave = make_user("carol"), make_user("dave")
    realtime, _ = seeks.create_seek(
        user=carol, games=[{"slug": "diffusion"}], time_control="5+3", pair_now=False
    )
    correspondence, _ = seeks.create_seek(
        user=carol, games=[{"slug": "zigzag"}], time_control="3d", pair_now=False
    )
    daves, _ = seeks.create_seek(
        user=dave, games=[{"slug": "diffusion", "options": {}}], time_control="1+0", pair_now=False
    )
    for user, name in ((carol, "dead.carol"), (dave, "dead.dave")):
        LobbyConnection.objects.create(
            channel_name=name, user=user, server=DEAD, seen_at=long_ago()
        )
    # Dave has a second tab on a live process: he stays, and so does his seek.
    LobbyConnection.objects.create(channel_name="live.dave", user=dave, server="alive")
    assert online_count() == 2

    presence.reap()

    assert online_count() == 1
    statuses = dict(Seek.objects.values_list("pk", "status"))
    assert statuses == {
        realtime.pk: "cancelled",
        correspondence.pk: "open",  # a correspondence seek waits for its owner
        daves.pk: "open",
    }


def test_a_stalled_process_puts_its_rows_back_and_its_player_returns() -> None:
    game = realtime_game()
    presence.arrive(
        GameConnection, "this.alice", game_id=game.pk, user_id=game.player1_id, player=1
    )
    try:
        GameConnection.objects.update(seen_at=long_ago())  # as if this process had stalled
        presence.reap()
        assert not GameConnection.objects.exists()
        game.refresh_from_db()
        assert "1" in game.away

        presence.stamp()

        row = GameConnection.objects.get()
        assert (row.channel_name, row.server, row.player) == ("this.alice", presence.SERVER_ID, 1)
        game.refresh_from_db()
        assert game.away == {}
        kinds = list(
            GameEvent.objects.filter(game=game)
            .order_by("version")
            .values_list("payload__type", flat=True)
        )
        assert kinds == ["away", "back"]
    finally:
        presence.leave(GameConnection, "this.alice")


def test_a_socket_put_back_by_the_heartbeat_while_it_was_admitted_is_recorded_once() -> None:
    # admit_many holds the socket before its INSERT commits; a heartbeat in between finds
    # no row and puts it back first (the chaos suite met this: a duplicate key, a 1011).
    alice = make_user("alice")
    LobbyConnection.objects.create(
        channel_name="this.early", server=presence.SERVER_ID, seen_at=timezone.now(),
        user_id=alice.pk, address="x",
    )  # fmt: skip
    try:
        admitted = presence.Admission(LobbyConnection, "this.early", alice.pk, "x", 5, 5)
        assert presence.admit_many([admitted]) == [None]
        assert LobbyConnection.objects.filter(channel_name="this.early").count() == 1
    finally:
        presence.leave(LobbyConnection, "this.early")


def test_a_socket_that_closes_while_the_heartbeat_looks_is_not_put_back() -> None:
    # The heartbeat read the sockets held, a socket closed and deleted its row, and the
    # heartbeat then "revived" it: a phantom spectator stamped for ever (found by fuzzing).
    from django.utils import timezone as tz

    game = realtime_game()
    table = presence._tables[GameConnection]
    presence.arrive(GameConnection, "this.carol", game_id=game.pk, user_id=None, player=None)
    GameConnection.objects.filter(channel_name="this.carol").delete()  # reaped meanwhile
    missing = presence._missing(table, tz.now())
    assert list(missing) == ["this.carol"]

    presence.leave(GameConnection, "this.carol")  # the socket closes now
    assert presence._revive(table, missing, tz.now()) == []

    assert not GameConnection.objects.exists()


def test_a_row_that_could_not_be_deleted_when_its_socket_closed_goes_at_the_next_beat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The database was away when the socket closed: the row stayed, and the heartbeat, which
    # vouches for every row of this process, would have kept a phantom spectator for ever.
    from django.db import OperationalError
    from django.db.models import QuerySet

    game = realtime_game()
    presence.arrive(GameConnection, "this.dan", game_id=game.pk, user_id=None, player=None)
    real_delete = QuerySet.delete

    def unreachable(self: Any) -> Any:
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(QuerySet, "delete", unreachable)
    with pytest.raises(OperationalError):
        presence.leave(GameConnection, "this.dan")
    monkeypatch.setattr(QuerySet, "delete", real_delete)
    assert GameConnection.objects.filter(channel_name="this.dan").exists()

    presence.stamp()

    assert not GameConnection.objects.filter(channel_name="this.dan").exists()


def test_the_heartbeat_keeps_this_processes_rows_fresh() -> None:
    game = realtime_game()
    presence.arrive(GameConnection, "this.bob", game_id=game.pk, user_id=game.player2_id, player=2)
    try:
        GameConnection.objects.update(seen_at=long_ago())
        presence.beat()  # stamps first, so the reaper finds nothing of ours
        assert GameConnection.objects.filter(channel_name="this.bob").exists()
        assert GameConnection.objects.get().seen_at > timezone.now() - timedelta(seconds=5)
    finally:
        presence.leave(GameConnection, "this.bob")


# --- consumers that fail still clean up ----------------------------------------------------------


class ClosedTransport(Exception):
    """What Daphne raises for a send on a socket the client has just closed."""


def closing_transport(app: Any, closed: dict[str, bool]) -> Any:
    """The ASGI app, but sends fail once `closed["now"]` is set (the client went away)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        async def flaky_send(message: dict[str, Any]) -> None:
            if closed["now"] and message["type"] == "websocket.send":
                raise ClosedTransport("Attempt to send on a closed protocol")
            await send(message)

        await app(scope, receive, flaky_send)

    return wrapped


async def test_a_lobby_socket_whose_send_fails_still_removes_its_presence() -> None:
    from channels.testing import WebsocketCommunicator

    from config.asgi import application

    user = await database_sync_to_async(make_user)("erin")
    key = await database_sync_to_async(session_for)(user)
    closed = {"now": False}
    client = WebsocketCommunicator(
        closing_transport(application, closed),
        "/ws/lobby/",
        headers=[
            (b"origin", b"http://localhost"),
            (b"host", b"localhost"),
            (b"cookie", f"sessionid={key}".encode()),
        ],
    )
    connected, _ = await client.connect()
    assert connected
    assert (await client.receive_json_from())["type"] == "lobby"
    assert await database_sync_to_async(LobbyConnection.objects.count)() == 1

    closed["now"] = True
    # A personal message arrives just as the client closes (a challenge accepted, say).
    await get_channel_layer().group_send(
        feed.user_group(user.pk), {"type": "lobby.personal", "text": '{"type": "challenge"}'}
    )
    await client.receive_nothing(timeout=0.2)
    await client.disconnect()

    assert await database_sync_to_async(LobbyConnection.objects.count)() == 0


async def test_a_frame_for_a_socket_that_is_closing_is_dropped_without_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The online count reached a socket whose client had just gone: the send raised inside
    # the JSON sender, past the guard of plain sends, and logged a traceback.
    from channels.testing import WebsocketCommunicator

    from config.asgi import application

    closed = {"now": False}
    client = WebsocketCommunicator(
        closing_transport(application, closed),
        "/ws/lobby/",
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")],
    )
    connected, _ = await client.connect()
    assert connected
    assert (await client.receive_json_from())["type"] == "lobby"
    closed["now"] = True
    await get_channel_layer().group_send(feed.LOBBY_GROUP, feed.online_message(9))
    await client.receive_nothing(timeout=0.2)
    await client.disconnect()
    errors = [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert not errors, [r.getMessage() for r in errors]
    assert await database_sync_to_async(LobbyConnection.objects.count)() == 0


async def test_a_game_socket_that_fails_on_a_broadcast_keeps_working_and_cleans_up() -> None:
    game = await database_sync_to_async(realtime_game)()
    client, _ = await open_socket(game.pk, None)
    # A broadcast the consumer cannot handle (a bug, a malformed event) is logged...
    await get_channel_layer().group_send(
        f"game.{game.pk}", {"type": "game.event", "text": "no version"}
    )
    # ...and the socket still answers and later cleans up.
    await client.send_json_to({"type": "ping", "id": 7})
    while True:
        message = await client.receive_json_from(timeout=5)
        if message["type"] == "pong":
            break
    assert message["id"] == 7
    await client.disconnect()
    assert await database_sync_to_async(GameConnection.objects.count)() == 0


async def test_a_server_error_answer_keeps_the_requests_id(monkeypatch: Any) -> None:
    def broken(**_: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(seeks, "cancel_seek", broken)
    user = await database_sync_to_async(User.objects.create_user)(
        username="frank", password="x-long-password-1"
    )
    client = communicator(session_key=await database_sync_to_async(session_for)(user))
    await client.connect()
    await client.receive_json_from()
    await client.send_json_to({"type": "cancel_seek", "seek_id": 1, "id": "req-9"})
    while True:
        answer = await client.receive_json_from(timeout=5)
        if answer["type"] == "error":
            break
    assert (answer["code"], answer["id"]) == ("server_error", "req-9")
    await client.disconnect()
