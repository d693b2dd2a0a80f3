"""The lobby: seeks and pairing, challenges, the pbmserv command form, the live feed."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import User
from games.models import Game
from lobby.models import Challenge, LobbyConnection, LobbyEvent, Seek
from lobby.services import challenges, seeks
from realtime.errors import ServiceError
from tests.games_helpers import make_user, session_for
from tests.wsutil import communicator, receive

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async
DIFFUSION = [{"slug": "diffusion", "options": {}}]
ZIGZAG = [{"slug": "zigzag", "options": {}}]


async def lobby_socket(user: User | None, query: str = "") -> tuple[Any, dict[str, Any]]:
    key = await db(session_for)(user) if user else None
    client = communicator(f"/ws/lobby/{query}", session_key=key)
    connected, _ = await client.connect()
    assert connected
    return client, await receive(client)


_unpacked: dict[int, list[dict[str, Any]]] = {}


def calls_of(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """The first argument of each call of `module.name` from now on; the real one still runs."""
    seen: list[Any] = []
    real = getattr(module, name)

    def counted(first: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return seen


async def until(client: Any, kind: str) -> dict[str, Any]:
    """The next message of a type, past any others; batches count as their events."""
    pending = _unpacked.setdefault(id(client), [])
    for _ in range(50):
        if not pending:
            message = await receive(client)
            pending.extend(message["events"] if message["type"] == "batch" else [message])
        message = pending.pop(0)
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message")


@pytest.fixture
async def users() -> dict[str, User]:
    return {name: await db(make_user)(name) for name in ("alice", "bob", "carol")}


async def test_the_snapshot_shows_the_lobby(users: dict[str, User]) -> None:
    await db(seeks.create_seek)(user=users["carol"], games=DIFFUSION)
    client, snapshot = await lobby_socket(users["alice"])
    assert snapshot["type"] == "lobby"
    assert snapshot["user"] == {"username": "alice", "is_guest": False, "is_bot_account": False}
    assert [s["user"] for s in snapshot["seeks"]] == ["carol"]
    assert snapshot["seeks"][0]["games"] == DIFFUSION
    assert snapshot["challenges"] == {"incoming": [], "outgoing": []}
    assert snapshot["games"] == [] and snapshot["my_games"] == []
    assert snapshot["online"] >= 1
    assert snapshot["v"] == 1
    await client.disconnect()


async def test_two_compatible_seeks_pair_at_once(users: dict[str, User]) -> None:
    alice, a_snap = await lobby_socket(users["alice"])
    bob, _ = await lobby_socket(users["bob"])
    watcher, _ = await lobby_socket(None)

    await alice.send_json_to({"type": "seek", "games": DIFFUSION, "id": 1})
    ok = await until(alice, "ok")
    assert ok["id"] == 1 and ok["seek_id"]
    added = await until(bob, "seek_added")
    assert added["seek"]["user"] == "alice" and added["v"] == a_snap["v"] + 1

    await bob.send_json_to({"type": "seek", "games": DIFFUSION, "id": 2})
    started_a = await until(alice, "game_started")
    started_b = await until(bob, "game_started")
    assert started_a["game_id"] == started_b["game_id"]
    game = await db(Game.objects.select_related("player1", "player2").get)(pk=started_a["game_id"])
    assert {game.player1.username, game.player2.username} == {"alice", "bob"}
    assert await db(Seek.objects.filter(status="open").count)() == 0
    # Alice's seek was shown while it waited; Bob's paired on arrival and never showed.
    removed = await until(watcher, "seek_removed")
    assert removed["seek_id"] == added["seek"]["id"]
    public = await until(watcher, "game_started")
    assert public["game"]["id"] == game.pk
    for client in (alice, bob, watcher):
        await client.disconnect()


def test_a_user_never_pairs_with_themself(users: dict[str, User]) -> None:
    seeks.create_seek(user=users["alice"], games=DIFFUSION)
    _, game = seeks.create_seek(user=users["alice"], games=DIFFUSION)
    assert game is None
    assert Seek.objects.filter(status="open").count() == 2


def test_a_seek_pairs_on_the_first_shared_game(users: dict[str, User]) -> None:
    seeks.create_seek(user=users["alice"], games=DIFFUSION)
    _, game = seeks.create_seek(
        user=users["bob"], games=[{"slug": "diffusion"}, {"slug": "diffusion", "options": {}}]
    )
    assert game is not None and game.slug == "diffusion"


def test_a_user_has_at_most_three_open_seeks(users: dict[str, User]) -> None:
    for _ in range(3):
        seeks.create_seek(user=users["alice"], games=DIFFUSION)
    with pytest.raises(ServiceError) as refused:
        seeks.create_seek(user=users["alice"], games=DIFFUSION)
    assert refused.value.code == "too_many_seeks"


@pytest.mark.parametrize(
    ("games", "code"),
    [
        ([{"slug": "chess"}], "invalid_options"),
        ([{"slug": "diffusion", "options": {"pits": 99}}], "invalid_options"),
        ([], "bad_message"),
        ("diffusion", "bad_message"),
        ([{"options": {}}], "bad_message"),
        ([{"slug": "diffusion", "options": [1]}], "bad_message"),
    ],
)
def test_a_bad_seek_is_refused_with_the_reason(
    users: dict[str, User], games: Any, code: str
) -> None:
    with pytest.raises(ServiceError) as refused:
        seeks.create_seek(user=users["alice"], games=games)
    assert refused.value.code == code
    assert refused.value.message
    assert Seek.objects.count() == 0


async def test_cancelling_a_seek_removes_it_for_everyone(users: dict[str, User]) -> None:
    alice, _ = await lobby_socket(users["alice"])
    bob, _ = await lobby_socket(users["bob"])
    await alice.send_json_to({"type": "seek", "games": DIFFUSION})
    seek_id = (await until(alice, "ok"))["seek_id"]
    assert (await until(bob, "seek_added"))["seek"]["id"] == seek_id
    await bob.send_json_to({"type": "cancel_seek", "seek_id": seek_id, "id": "x"})
    error = await until(bob, "error")
    assert (error["code"], error["id"]) == ("no_such_seek", "x")
    await alice.send_json_to({"type": "cancel_seek", "seek_id": seek_id})
    removed = await until(bob, "seek_removed")
    assert removed["seek_id"] == seek_id
    for client in (alice, bob):
        await client.disconnect()


async def test_a_seek_ends_with_its_owners_last_lobby_socket(users: dict[str, User]) -> None:
    first, _ = await lobby_socket(users["alice"])
    second, _ = await lobby_socket(users["alice"])
    await first.send_json_to({"type": "seek", "games": DIFFUSION})
    await until(first, "ok")
    await first.disconnect()
    assert await db(Seek.objects.filter(status="open").count)() == 1
    await second.disconnect()
    assert await db(Seek.objects.filter(status="open").count)() == 0


async def test_sockets_closing_together_end_the_seeks_of_owners_left_without_one(
    users: dict[str, User],
) -> None:
    """Alice closes both her sockets and Bob one of two, at once (one batch of departures,
    realtime/batches.py): Alice's seek ends, Bob's stays, and every row closed is gone."""
    alice = [await lobby_socket(users["alice"]) for _ in range(2)]
    bob = [await lobby_socket(users["bob"]) for _ in range(2)]
    visitor, _ = await lobby_socket(None)
    # Different games, so that the two seeks are not paired with each other.
    for (client, _), games in ((alice[0], DIFFUSION), (bob[0], ZIGZAG)):
        await client.send_json_to({"type": "seek", "games": games})
        await until(client, "ok")
    await asyncio.gather(
        *(client.disconnect() for client in (alice[0][0], alice[1][0], bob[0][0], visitor))
    )
    open_seeks = await db(
        lambda: sorted(Seek.objects.filter(status="open").values_list("user__username", flat=True))
    )()
    assert open_seeks == ["bob"]
    assert await db(LobbyConnection.objects.count)() == 1  # Bob's other socket
    await bob[1][0].disconnect()


async def test_a_visitor_must_sign_in_to_seek() -> None:
    client, _ = await lobby_socket(None)
    await client.send_json_to({"type": "seek", "games": DIFFUSION})
    assert (await until(client, "error"))["code"] == "not_logged_in"
    await client.disconnect()


# --- challenges ----------------------------------------------------------------------------


async def test_a_direct_challenge_accepted_starts_a_game_for_both(users: dict[str, User]) -> None:
    alice, _ = await lobby_socket(users["alice"])
    bob, _ = await lobby_socket(users["bob"])
    await alice.send_json_to(
        {"type": "challenge", "user": "bob", "slug": "diffusion", "side": "first", "id": 1}
    )
    challenge_id = (await until(alice, "ok"))["challenge_id"]
    incoming = await until(bob, "challenge")
    assert incoming["challenge"]["challenger"] == "alice"
    assert incoming["challenge"]["status"] == "pending"
    await bob.send_json_to({"type": "accept", "challenge_id": challenge_id})
    game_id = (await until(bob, "game_started"))["game_id"]
    assert (await until(alice, "game_started"))["game_id"] == game_id
    game = await db(Game.objects.select_related("player1").get)(pk=game_id)
    assert game.player1.username == "alice"  # side "first": the challenger moves first
    await bob.send_json_to({"type": "accept", "challenge_id": challenge_id, "id": 9})
    error = await until(bob, "error")
    assert (error["code"], error["id"]) == ("challenge_accepted", 9)
    for client in (alice, bob):
        await client.disconnect()


async def test_a_declined_challenge_tells_the_challenger_why(users: dict[str, User]) -> None:
    alice, _ = await lobby_socket(users["alice"])
    challenge = await db(challenges.create_challenge)(
        challenger=users["alice"], challenged="bob", slug="diffusion"
    )
    await db(challenges.decline_challenge)(
        user=users["bob"], challenge_id=challenge.pk, reason="too fast"
    )
    updated = await until(alice, "challenge_updated")
    assert updated["challenge"]["status"] == "declined"
    assert updated["challenge"]["decline_reason"] == "too fast"
    await alice.disconnect()


def test_a_challenge_can_be_accepted_only_by_its_recipient_and_only_once(
    users: dict[str, User],
) -> None:
    challenge = challenges.create_challenge(
        challenger=users["alice"], challenged="bob", slug="diffusion"
    )
    for user, code in ((users["carol"], "not_yours"), (users["alice"], "not_yours")):
        with pytest.raises(ServiceError) as refused:
            challenges.accept_challenge(user=user, challenge_id=challenge.pk)
        assert refused.value.code == code
    challenges.cancel_challenge(user=users["alice"], challenge_id=challenge.pk)
    with pytest.raises(ServiceError) as refused:
        challenges.accept_challenge(user=users["bob"], challenge_id=challenge.pk)
    assert refused.value.code == "challenge_cancelled"
    assert Game.objects.count() == 0


def test_a_challenge_expires_after_a_day(users: dict[str, User]) -> None:
    challenge = challenges.create_challenge(
        challenger=users["alice"], challenged="bob", slug="diffusion"
    )
    with (
        time_machine.travel(timezone.now() + timedelta(hours=24, seconds=1)),
        pytest.raises(ServiceError) as refused,
    ):
        challenges.accept_challenge(user=users["bob"], challenge_id=challenge.pk)
    assert refused.value.code == "challenge_expired"
    challenge.refresh_from_db()
    assert challenge.status == "expired"


def test_the_lobby_snapshot_leaves_out_challenges_past_their_expiry(users: dict[str, User]) -> None:
    from lobby.selectors import snapshot

    challenges.create_challenge(challenger=users["alice"], challenged="bob", slug="diffusion")
    assert len(snapshot(users["bob"]).challenges.incoming) == 1
    with time_machine.travel(timezone.now() + timedelta(hours=24, seconds=1)):
        # Nobody has touched it, so it is still "pending" in the table: not offered anyway.
        assert snapshot(users["bob"]).challenges.incoming == []
        assert snapshot(users["alice"]).challenges.outgoing == []


@pytest.mark.parametrize(
    ("challenged", "slug", "options", "code"),
    [
        ("nobody", "diffusion", {}, "unknown_user"),
        ("alice", "diffusion", {}, "self_challenge"),
        ("bob", "go", {}, "invalid_options"),
        ("bob", "diffusion", {"pits": 4}, "invalid_options"),
        # An option named like get_rules' own argument once raised TypeError (a 500).
        ("bob", "diffusion", {"slug": 1}, "invalid_options"),
    ],
)
def test_a_bad_challenge_is_refused(
    users: dict[str, User], challenged: str, slug: str, options: dict[str, Any], code: str
) -> None:
    with pytest.raises(ServiceError) as refused:
        challenges.create_challenge(
            challenger=users["alice"], challenged=challenged, slug=slug, options=options
        )
    assert refused.value.code == code
    assert Challenge.objects.count() == 0


def test_challenges_waiting_for_an_answer_are_limited_per_victim_and_in_all(
    users: dict[str, User], monkeypatch: Any
) -> None:
    monkeypatch.setattr(challenges, "MAX_PENDING", 5)
    alice, bob = users["alice"], users["bob"]
    sent = [
        challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
        for _ in range(3)
    ]
    with pytest.raises(ServiceError) as refused:
        challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
    assert refused.value.code == "too_many_challenges" and "bob has 3" in refused.value.message
    # Bob may still challenge Alice, and Alice others, up to the limit in all.
    challenges.create_challenge(challenger=bob, challenged="alice", slug="diffusion")
    challenges.create_challenge(challenger=alice, challenged="carol", slug="diffusion")
    challenges.create_challenge(challenger=alice, challenged=None, slug="diffusion")
    with pytest.raises(ServiceError) as refused:
        challenges.create_challenge(challenger=alice, challenged="carol", slug="diffusion")
    assert refused.value.code == "too_many_challenges"
    # An answer frees a place.
    challenges.decline_challenge(user=bob, challenge_id=sent[0].pk)
    challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
    assert Challenge.objects.filter(challenger=alice, status="pending").count() == 5


def test_an_open_challenge_goes_to_the_first_who_accepts(users: dict[str, User]) -> None:
    challenge = challenges.create_challenge(
        challenger=users["alice"], challenged=None, slug="diffusion"
    )
    with pytest.raises(ServiceError) as refused:
        challenges.accept_challenge(user=users["alice"], token=challenge.token)
    assert refused.value.code == "self_challenge"
    game = challenges.accept_challenge(user=users["carol"], token=challenge.token)
    assert {game.player1_id, game.player2_id} == {users["alice"].pk, users["carol"].pk}
    with pytest.raises(ServiceError) as refused:
        challenges.accept_challenge(user=users["bob"], token=challenge.token)
    assert refused.value.code == "challenge_accepted"


# --- pbmserv's command form ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sender", "text", "challenger", "side"),
    [
        ("alice", "diffusion challenge alice bob", "alice", "first"),
        ("bob", "diffusion challenge alice bob", "bob", "second"),
        ("alice", "  DIFFUSION   challenge   Alice   BOB ", "alice", "first"),
    ],
)
def test_the_pbmserv_challenge_command(
    users: dict[str, User], sender: str, text: str, challenger: str, side: str
) -> None:
    challenge = challenges.pbm_challenge(sender=users[sender], text=text)
    assert challenge.challenger.username == challenger
    assert challenge.side == side
    assert challenge.slug == "diffusion"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("diffusion accept alice bob", "bad_command"),
        ("diffusion challenge alice", "bad_command"),
        ("diffusion challenge -pits alice bob", "bad_command"),
        ("diffusion challenge carol bob", "not_yours"),
        ("diffusion challenge alice alice", "self_challenge"),
        ("diffusion challenge alice nobody", "unknown_user"),
        ("diffusion challenge 'alice bob", "bad_command"),
    ],
)
def test_a_bad_pbmserv_command_says_what_is_wrong(
    users: dict[str, User], text: str, code: str
) -> None:
    with pytest.raises(ServiceError) as refused:
        challenges.pbm_challenge(sender=users["alice"], text=text)
    assert refused.value.code == code


async def test_the_command_message_on_the_lobby_socket(users: dict[str, User]) -> None:
    alice, _ = await lobby_socket(users["alice"])
    bob, _ = await lobby_socket(users["bob"])
    await alice.send_json_to({"type": "command", "text": "diffusion challenge alice bob"})
    await until(alice, "ok")
    incoming = await until(bob, "challenge")
    assert incoming["challenge"]["side"] == "first"
    for client in (alice, bob):
        await client.disconnect()


def test_the_pbm_management_command(users: dict[str, User], capsys: Any) -> None:
    call_command("pbm", "diffusion challenge alice bob")
    assert "alice challenges bob" in capsys.readouterr().out
    assert Challenge.objects.get().challenger == users["alice"]
    with pytest.raises(CommandError, match="no user called"):
        call_command("pbm", "diffusion challenge nobody bob")


# --- the feed --------------------------------------------------------------------------------


async def test_a_reconnecting_lobby_socket_gets_the_events_it_missed(
    users: dict[str, User],
) -> None:
    client, snapshot = await lobby_socket(None)
    await client.disconnect()
    await db(seeks.create_seek)(user=users["alice"], games=DIFFUSION)
    back, first = await lobby_socket(None, query=f"?v={snapshot['v']}")
    assert first["type"] == "seek_added" and first["v"] == snapshot["v"] + 1
    await back.disconnect()


async def test_a_lobby_socket_claiming_a_future_version_gets_a_snapshot_and_then_events(
    users: dict[str, User],
) -> None:
    client, first = await lobby_socket(None, query="?v=999999999")
    assert first["type"] == "lobby" and first["v"] < 999999999
    await db(seeks.create_seek)(user=users["alice"], games=DIFFUSION)
    added = await until(client, "seek_added")
    assert added["v"] == first["v"] + 1
    await client.send_json_to({"type": "sync", "v": 999999999})
    assert (await until(client, "lobby"))["v"] == added["v"]
    await client.disconnect()


async def test_a_game_that_ends_leaves_the_live_list_of_every_lobby(users: dict[str, User]) -> None:
    from games import services as game_services

    game = await db(game_services.create_game)(
        slug="diffusion", options={}, player1=users["alice"], player2=users["bob"]
    )
    watcher, snapshot = await lobby_socket(None)
    await db(game_services.resign)(game_id=game.pk, user=users["alice"])
    ended = await until(watcher, "game_ended")
    assert ended == {
        "type": "game_ended",
        "game_id": game.pk,
        "status": "finished",
        "v": snapshot["v"] + 1,
    }
    await watcher.disconnect()


async def test_a_rematch_is_announced_to_both_players_and_on_the_live_list(
    users: dict[str, User],
) -> None:
    from games import services as game_services

    def finished_game() -> Game:
        game = game_services.create_game(
            slug="diffusion", options={}, player1=users["alice"], player2=users["bob"]
        )
        game_services.resign(game_id=game.pk, user=users["bob"])
        return game

    game = await db(finished_game)()
    alice, _ = await lobby_socket(users["alice"])
    watcher, _ = await lobby_socket(users["carol"])

    def both_ask() -> int:
        game_services.offer_rematch(game_id=game.pk, user=users["alice"])
        applied = game_services.offer_rematch(game_id=game.pk, user=users["bob"])
        assert applied.event is not None
        return int(applied.event["new_game_id"])

    rematch_id = await db(both_ask)()
    personal = await until(alice, "game_started")
    while "you" not in personal:  # the public announcement may come first
        personal = await until(alice, "game_started")
    assert (personal["game_id"], personal["you"]) == (rematch_id, 2)  # sides swapped
    public = await until(watcher, "game_started")
    assert public["game_id"] == rematch_id
    assert public["game"]["players"] == {"1": "bob", "2": "alice"}
    for client in (alice, watcher):
        await client.disconnect()


def stamped_unsent(monkeypatch: pytest.MonkeyPatch, seek_id: int) -> list[Any]:
    """A public event stored and versioned as publish() does, whose broadcast never leaves."""
    from django.db import transaction

    from lobby import protocol
    from lobby.services import feed

    with monkeypatch.context() as patch:
        patch.setattr(feed, "_send", lambda *args: None)
        with transaction.atomic():
            return feed.publish(protocol.SeekRemoved(v=feed.UNSTAMPED, seek_id=seek_id))


async def test_a_batch_from_another_process_arriving_late_is_put_back_in_order(
    users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    from channels.layers import get_channel_layer

    from lobby.services import feed

    client, snapshot = await lobby_socket(None)
    v = snapshot["v"]
    # Two processes stamp v+1 and v+2; v+2's batch reaches this socket first.
    first = await db(stamped_unsent)(monkeypatch, 101)
    second = await db(stamped_unsent)(monkeypatch, 102)
    # Not readable from the store either: only waiting for the late batch delivers it.
    await db(LobbyEvent.objects.filter(version=v + 1).delete)()
    layer = get_channel_layer()
    await layer.group_send(feed.LOBBY_GROUP, {"type": "lobby.batch", "events": second})
    await layer.group_send(feed.LOBBY_GROUP, {"type": "lobby.batch", "events": first})
    seen = [await until(client, "seek_removed"), await until(client, "seek_removed")]
    assert [(e["v"], e["seek_id"]) for e in seen] == [(v + 1, 101), (v + 2, 102)]
    await client.disconnect()


async def test_a_version_that_never_arrives_is_read_from_the_stored_feed(
    users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    from channels.layers import get_channel_layer

    from lobby.services import feed

    client, snapshot = await lobby_socket(None)
    v = snapshot["v"]
    await db(stamped_unsent)(monkeypatch, 201)  # its batch is lost
    later = await db(stamped_unsent)(monkeypatch, 202)
    await get_channel_layer().group_send(feed.LOBBY_GROUP, {"type": "lobby.batch", "events": later})
    seen = [await until(client, "seek_removed"), await until(client, "seek_removed")]
    assert [(e["v"], e["seek_id"]) for e in seen] == [(v + 1, 201), (v + 2, 202)]
    await client.disconnect()


async def test_sockets_that_miss_the_same_version_read_the_stored_feed_once_for_all(
    users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    from channels.layers import get_channel_layer

    from lobby import selectors
    from lobby.services import feed

    sockets = [await lobby_socket(None) for _ in range(6)]
    v = sockets[0][1]["v"]
    assert all(snapshot["v"] == v for _, snapshot in sockets)
    reads = calls_of(monkeypatch, selectors, "events_since")
    await db(stamped_unsent)(monkeypatch, 301)  # its batch is lost
    later = await db(stamped_unsent)(monkeypatch, 302)
    await get_channel_layer().group_send(feed.LOBBY_GROUP, {"type": "lobby.batch", "events": later})
    for client, _ in sockets:
        seen = [await until(client, "seek_removed"), await until(client, "seek_removed")]
        assert [(e["v"], e["seek_id"]) for e in seen] == [(v + 1, 301), (v + 2, 302)]
        await client.disconnect()
    assert reads == [v]  # six sockets, one gap, one read


def test_lobby_snapshots_in_a_storm_share_one_reading_per_feed_version(
    users: dict[str, User], django_assert_max_num_queries: Any
) -> None:
    from lobby import selectors

    seeks.create_seek(user=users["carol"], games=DIFFUSION)
    first = selectors.snapshot(None)
    assert len(first.seeks) == 1
    # The next anonymous snapshot reads the feed version only: nothing changed.
    with django_assert_max_num_queries(1):
        again = selectors.snapshot(None)
    assert again == first
    # A new version is a new reading.
    seeks.create_seek(user=users["bob"], games=[{"slug": "zigzag", "options": {}}])
    changed = selectors.snapshot(None)
    assert changed.v > first.v
    assert len(changed.seeks) == 2


def test_snapshots_for_many_sockets_give_each_user_their_own_in_a_fixed_number_of_queries(
    users: dict[str, User], django_assert_max_num_queries: Any
) -> None:
    from games import services
    from lobby import selectors

    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    to_bob = challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
    to_alice = challenges.create_challenge(challenger=carol, challenged="alice", slug="zigzag")
    anyone = challenges.create_challenge(challenger=bob, challenged=None, slug="diffusion")
    alice_carol = services.create_game(slug="diffusion", options={}, player1=alice, player2=carol)
    carol_alice = services.create_game(slug="zigzag", options={}, player1=carol, player2=alice)
    seeks.create_seek(user=bob, games=ZIGZAG)
    selectors.public_snapshot()  # the public part is read once per version (tested above)

    # The version, the challenges, the games: however many sockets ask.
    with django_assert_max_num_queries(3):
        made = selectors.snapshots([alice, None, bob, carol, alice])

    seen = [
        (
            s.user and s.user.username,
            [c.id for c in s.challenges.incoming],
            [c.id for c in s.challenges.outgoing],
            s.my_games,
        )
        for s in made
    ]
    assert seen == [
        ("alice", [to_alice.pk], [to_bob.pk], [carol_alice.pk, alice_carol.pk]),
        (None, [], [], []),
        ("bob", [to_bob.pk], [anyone.pk], []),
        ("carol", [], [to_alice.pk], [carol_alice.pk, alice_carol.pk]),
        ("alice", [to_alice.pk], [to_bob.pk], [carol_alice.pk, alice_carol.pk]),
    ]
    assert all(len(s.seeks) == 1 and s.v == made[0].v for s in made)
    assert made[1] is selectors.public_snapshot()  # a visitor's is the shared one


async def test_sockets_opening_together_share_one_reading_of_the_snapshot(
    users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lobby import selectors

    asked = calls_of(monkeypatch, selectors, "snapshots")
    opened = await asyncio.gather(
        *(lobby_socket(user) for user in (None, users["alice"], None, users["bob"], None))
    )
    assert [snapshot["user"] and snapshot["user"]["username"] for _, snapshot in opened] == [
        None,
        "alice",
        None,
        "bob",
        None,
    ]
    assert sum(map(len, asked)) == 5 and len(asked) < 5
    for client, _ in opened:
        await client.disconnect()


def test_seeks_asked_together_each_get_their_own_answer_in_a_fixed_number_of_queries(
    users: dict[str, User], django_assert_max_num_queries: Any
) -> None:
    from django.contrib.auth.models import AnonymousUser

    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    seeks.create_seek(user=alice, games=DIFFUSION, pair_now=False)
    asked = [
        seeks.SeekRequest(alice, DIFFUSION),
        seeks.SeekRequest(bob, [{"slug": "go"}]),
        seeks.SeekRequest(alice, ZIGZAG),
        seeks.SeekRequest(AnonymousUser(), DIFFUSION),
        seeks.SeekRequest(carol, ZIGZAG, time_control="5+3"),
        seeks.SeekRequest(alice, DIFFUSION),  # her fourth: refused
    ]
    # Begin, the owners' locks, their counts, the insert, commit: however many ask.
    with django_assert_max_num_queries(5):
        made = seeks.create_seeks(asked)

    assert [m.code if isinstance(m, ServiceError) else "ok" for m in made] == [
        "ok",
        "invalid_options",
        "ok",
        "not_logged_in",
        "ok",
        "too_many_seeks",
    ]
    stored = Seek.objects.filter(status="open").order_by("pk")
    assert [(s.user.username, s.games[0]["slug"], s.time_control.code) for s in stored] == [
        ("alice", "diffusion", ""),
        ("alice", "diffusion", ""),
        ("alice", "zigzag", ""),
        ("carol", "zigzag", "5+3"),
    ]
    assert [m.pk for m in made if isinstance(m, Seek)] == [s.pk for s in stored][1:]


async def test_seeks_sent_together_are_opened_together_and_each_socket_gets_its_answer(
    users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = calls_of(monkeypatch, seeks, "create_seeks")
    opened = [await lobby_socket(users[name]) for name in ("alice", "bob", "carol")]
    games = [DIFFUSION, [{"slug": "go"}], ZIGZAG]
    for (client, _), (number, seek) in zip(opened, enumerate(games), strict=True):
        await client.send_json_to({"type": "seek", "games": seek, "id": number})
    answers = [await until(client, "ok") for client, _ in (opened[0], opened[2])]
    refused = await until(opened[1][0], "error")

    assert [a["id"] for a in answers] == [0, 2] and all(a["seek_id"] for a in answers)
    assert (refused["id"], refused["code"]) == (1, "invalid_options")
    assert sum(map(len, batches)) == 3 and len(batches) < 3
    for client, _ in opened:
        await client.disconnect()


@pytest.mark.postgres(reason="two connections at once: SQLite lets one writer in at a time")
def test_two_batches_seeking_for_the_same_user_at_once_open_at_most_three_seeks(
    users: dict[str, User],
) -> None:
    import threading

    from django.db import connection

    alice = users["alice"]
    start = threading.Barrier(2)
    made: list[Any] = []

    def batch() -> None:
        try:
            start.wait()
            made.extend(seeks.create_seeks([seeks.SeekRequest(alice, DIFFUSION)] * 2))
        finally:
            connection.close()

    threads = [threading.Thread(target=batch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(m.code if isinstance(m, ServiceError) else "ok" for m in made) == [
        "ok",
        "ok",
        "ok",
        "too_many_seeks",
    ]
    assert Seek.objects.filter(user=alice, status="open").count() == 3
