"""Time controls: the pure clock, the services under controlled time (time-machine), the
sweeper, the consumer's own deadline check, abandonment, correspondence e-mail and lag."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async
from django.core import mail
from django.db import close_old_connections

from accounts.models import User
from games import clocks, services
from games.consumers import GameConsumer
from games.management.commands.sweeper import sweep
from games.models import Game, GameConnection, GameEvent, MoveNotice
from games.services import events
from lobby.services import seeks
from realtime.errors import ServiceError
from tests.games_helpers import make_user, open_socket

START = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
T0 = int(START.timestamp() * 1000)

# --- the pure clock --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "code", "base", "increment", "days"),
    [
        ("", "untimed", "", 0, 0, 0),
        ("untimed", "untimed", "", 0, 0, 0),
        ("5+3", "realtime", "5+3", 300_000, 3_000, 0),
        (" 1+0 ", "realtime", "1+0", 60_000, 0, 0),
        ("180+180", "realtime", "180+180", 10_800_000, 180_000, 0),
        ("3d", "correspondence", "3d", 0, 0, 3),
        ("14 days", "correspondence", "14d", 0, 0, 14),
        ("1 day", "correspondence", "1d", 0, 0, 1),
    ],
)
def test_it_reads_the_time_controls_we_offer(
    text: str, kind: str, code: str, base: int, increment: int, days: int
) -> None:
    control = clocks.parse(text)
    assert (control.kind, control.code) == (kind, code)
    assert (control.base_ms, control.increment_ms, control.days) == (base, increment, days)
    assert clocks.parse(control.code) == control


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0+5", "real-time controls are 1 to 180 minutes plus 0 to 180 seconds"),
        ("181+0", "real-time controls are 1 to 180 minutes"),
        ("5+181", "plus 0 to 180 seconds a move, not 5\\+181"),
        ("4d", "correspondence is 1, 2, 3, 5, 7, 14 days per move, not 4"),
        ("blitz", "unknown time control 'blitz'"),
        (5, "a time control is text"),
    ],
)
def test_it_refuses_other_time_controls_saying_what_is_offered(text: Any, message: str) -> None:
    with pytest.raises(clocks.BadTimeControl, match=message):
        clocks.parse(text)


def realtime_clock(control: str = "1+2", **changes: Any) -> dict[str, Any]:
    clock = clocks.start(clocks.parse(control), T0)
    assert clock is not None
    return {**clock, **changes}


def test_a_first_move_is_free_and_a_later_one_costs_its_time_plus_the_increment() -> None:
    clock = realtime_clock()
    # White's first move after 20 s: free (the clock only runs once a player has moved).
    clock = clocks.after_move(clock, player=1, turn_over=True, game_over=False, now=T0 + 20_000)
    assert clock["remaining"] == [60_000, 60_000]
    assert clock["running"] == 2
    clock = clocks.after_move(clock, player=2, turn_over=True, game_over=False, now=T0 + 25_000)
    # White's second move, 10 s later: 60 - 10 + 2.
    clock = clocks.after_move(clock, player=1, turn_over=True, game_over=False, now=T0 + 35_000)
    assert clock["remaining"] == [52_000, 60_000]
    assert clocks.due(clock) == clocks.Due(at=T0 + 35_000 + 60_000, player=2, abort=False)


def test_until_a_first_move_the_deadline_is_the_first_move_abort() -> None:
    clock = realtime_clock()
    assert clocks.due(clock) == clocks.Due(at=T0 + clocks.FIRST_MOVE_MS, player=1, abort=True)
    view = clocks.view(clock, T0 + 1_000)
    assert view is not None
    assert view["first_move_by"] == T0 + 30_000
    assert view["remaining"] == [60_000, 60_000]


def test_lag_is_forgiven_up_to_a_second_a_move_and_five_seconds_a_game() -> None:
    clock = realtime_clock("1+0", moved=[True, True])
    now = T0
    forgiven = []
    for _ in range(7):
        before = clock["remaining"][0]
        clock = clocks.after_move(
            clock, player=1, turn_over=True, game_over=False, now=now + 3_000, lag=1_500
        )
        forgiven.append(3_000 - (before - clock["remaining"][0]))
        now += 3_000
        clock = clocks.after_move(clock, player=2, turn_over=True, game_over=False, now=now)
    assert forgiven == [1_000, 1_000, 1_000, 1_000, 1_000, 0, 0]
    assert clock["lag"] == [0, clocks.LAG_QUOTA_MS]


def test_a_turn_of_several_moves_keeps_one_clock_running_and_adds_one_increment() -> None:
    clock = realtime_clock("1+2", moved=[True, True])
    for second in (5, 10, 15):  # three moves inside one Diffusion Chess turn
        clock = clocks.after_move(
            clock, player=1, turn_over=False, game_over=False, now=T0 + second * 1_000
        )
        assert clock["running"] == 1
    clock = clocks.after_move(clock, player=1, turn_over=True, game_over=False, now=T0 + 20_000)
    assert clock["running"] == 2
    assert clock["remaining"] == [60_000 - 20_000 + 2_000, 60_000]


def test_correspondence_gives_every_turn_the_whole_allowance() -> None:
    clock = clocks.start(clocks.parse("2d"), T0)
    assert clock is not None
    clock = clocks.after_move(clock, player=1, turn_over=True, game_over=False, now=T0 + 3_600_000)
    assert clock["remaining"] == [2 * clocks.DAY_MS, 2 * clocks.DAY_MS]
    assert clocks.due(clock) == clocks.Due(T0 + 3_600_000 + 2 * clocks.DAY_MS, 2, abort=False)


# --- services under controlled time ----------------------------------------------------------


def players() -> tuple[User, User]:
    return make_user("alice"), make_user("bob")


def timed_game(control: str, slug: str = "diffusion") -> Game:
    alice, bob = players()
    return services.create_game(
        slug=slug, options={}, player1=alice, player2=bob, time_control=control
    )


def play(game: Game, player: int, ply: int) -> services.Applied:
    game.refresh_from_db()
    from games.engine import rules_for

    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    choice = sorted(rules.legal_moves(state))[0]
    user = game.player1 if player == 1 else game.player2
    return services.play_move(game_id=game.pk, user=user, move=choice, ply=ply)


@pytest.mark.django_db
def test_moves_carry_both_times_and_the_server_clock() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+2")
        traveller.shift(5)
        first = play(game, 1, 0).event
        traveller.shift(3)
        play(game, 2, 1)
        traveller.shift(10)
        third = play(game, 1, 2).event
    assert first is not None and third is not None
    assert first["clock"]["remaining"] == [60_000, 60_000]
    assert first["clock"]["running"] == 2
    assert third["clock"]["remaining"] == [52_000, 60_000]
    assert third["clock"]["server_time"] == T0 + 18_000
    game.refresh_from_db()
    assert game.deadline == datetime.fromtimestamp((T0 + 18_000 + 60_000) / 1000, tz=UTC)


@pytest.mark.django_db
def test_the_sweeper_ends_a_game_on_time_with_nobody_connected() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+0")
        play(game, 1, 0)
        play(game, 2, 1)
        play(game, 1, 2)  # White has moved: now Black's clock runs
        traveller.shift(59)
        assert sweep() == 0
        traveller.shift(2)
        assert sweep() == 1
        assert sweep() == 0  # already over: nothing twice
    game.refresh_from_db()
    assert (game.status, game.termination, game.winner) == ("finished", "time", 1)
    assert game.reason == "bob ran out of time"
    assert game.clock["remaining"][1] == 0 and game.clock["running"] is None
    assert game.deadline is None
    assert GameEvent.objects.filter(game=game, payload__type="end").count() == 1


@pytest.mark.django_db
def test_a_move_after_the_flag_ends_the_game_instead_of_being_played() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+0")
        play(game, 1, 0)
        play(game, 2, 1)
        traveller.shift(61)
        with pytest.raises(ServiceError, match="alice ran out of time"):
            play(game, 1, 2)
    game.refresh_from_db()
    assert (game.status, game.winner, game.ply) == ("finished", 2, 2)


@pytest.mark.django_db
def test_a_real_time_game_without_a_first_move_in_30_seconds_is_aborted() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("3+2")
        traveller.shift(29)
        assert sweep() == 0
        traveller.shift(2)
        assert sweep() == 1
    game.refresh_from_db()
    assert (game.status, game.termination, game.winner) == ("aborted", "abort", None)
    assert game.reason == "alice did not make a first move within 30 seconds"


@pytest.mark.django_db
def test_the_second_players_first_move_has_its_own_30_seconds() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("3+2")
        traveller.shift(10)
        play(game, 1, 0)
        traveller.shift(31)
        assert sweep() == 1
    game.refresh_from_db()
    assert game.status == "aborted" and game.reason.startswith("bob did not make a first move")


@pytest.mark.django_db
def test_a_correspondence_move_must_come_within_its_days() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1d")
        traveller.shift(23 * 3600)
        play(game, 1, 0)  # in time; the clock does not wait for first moves here
        traveller.shift(24 * 3600 - 1)
        assert sweep() == 0
        traveller.shift(2)
        assert sweep() == 1
    game.refresh_from_db()
    assert (game.termination, game.winner, game.reason) == ("time", 1, "bob ran out of time")


@pytest.mark.django_db
def test_diffusion_chess_switches_clocks_only_at_the_end_of_a_turn() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+5", slug="diffusion-chess")
        for ply, path in enumerate(["j3-j4", "b2-b3", "e2-e3"]):
            traveller.shift(2)
            event = services.play_move(game_id=game.pk, user=game.player1, move=path, ply=ply)
            assert event.event is not None
            assert event.event["clock"]["running"] == 1
        traveller.shift(2)
        last = services.play_move(game_id=game.pk, user=game.player1, move="n2-n3", ply=3).event
    assert last is not None
    assert last["to_move"] == 2 and last["clock"]["running"] == 2
    # The first move was free; the three after it took 6 s; one increment at the turn's end.
    assert last["clock"]["remaining"] == [60_000 - 6_000 + 5_000, 60_000]


@pytest.mark.django_db(transaction=True)
def test_two_checkers_racing_at_the_deadline_end_the_game_once() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+0")
        traveller.shift(31)
        results: list[Any] = []
        barrier = threading.Barrier(2)

        def check() -> None:
            barrier.wait()
            try:
                results.append(services.check_clock(game_id=game.pk).event)
            finally:
                close_old_connections()

        threads = [threading.Thread(target=check) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sum(event is not None for event in results) == 1
    assert GameEvent.objects.filter(game=game, payload__type="end").count() == 1


# --- abandonment ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_player_away_for_a_minute_can_be_claimed_against_and_the_waiter_loses_no_time() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+0")
        play(game, 1, 0)
        play(game, 2, 1)
        play(game, 1, 2)
        traveller.shift(1)
        play(game, 2, 3)  # Alice to move; her clock runs
        services.player_left(game_id=game.pk, player=2)  # Bob's last socket closes
        traveller.shift(30)
        with pytest.raises(ServiceError, match="you can claim in 30 s"):
            services.claim_victory(game_id=game.pk, user=game.player1)
        traveller.shift(30)
        assert sweep() == 0  # Alice's minute of waiting is not taken from her clock
        applied = services.claim_victory(game_id=game.pk, user=game.player1)
    assert applied.event is not None
    game.refresh_from_db()
    assert (game.status, game.termination, game.winner) == ("finished", "abandon", 1)
    assert game.reason == "bob left the game"


@pytest.mark.django_db
def test_no_claim_against_a_player_who_came_back() -> None:
    with time_machine.travel(START, tick=False) as traveller:
        game = timed_game("1+0")
        play(game, 1, 0)
        services.player_left(game_id=game.pk, player=2)
        traveller.shift(20)
        back = services.player_returned(game_id=game.pk, player=2)
        assert back.event is not None and back.event["type"] == "back"
        GameConnection.objects.create(game=game, channel_name="bob-socket", player=2)
        traveller.shift(61)
        with pytest.raises(ServiceError, match="Your opponent is connected"):
            services.claim_victory(game_id=game.pk, user=game.player1)


# --- correspondence e-mail ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_opponent_is_e_mailed_only_when_no_socket_of_theirs_is_open() -> None:
    def move(game: Game, player: int, ply: int) -> None:
        play(game, player, ply)
        services.send_move_notices()  # what the sweeper does on its next pass

    alice, bob = players()
    User.objects.filter(pk=bob.pk).update(email="bob@example.org")
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="3d"
    )
    mail.outbox.clear()
    move(game, 1, 0)
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.subject == f"Your move in Diffusion #{game.pk} against alice"
    assert message.to == ["bob@example.org"]
    assert f"/games/{game.pk}/" in message.body
    # Alice has no address: no mail for her.
    move(game, 2, 1)
    assert len(mail.outbox) == 1
    # Bob is looking at the game: no mail.
    GameConnection.objects.create(game=game, channel_name="bob-socket", player=2)
    move(game, 1, 2)
    assert len(mail.outbox) == 1
    # Bob turned the e-mails off.
    GameConnection.objects.all().delete()
    User.objects.filter(pk=bob.pk).update(email_on_move=False)
    move(game, 2, 3)
    move(game, 1, 4)
    assert len(mail.outbox) == 1


@pytest.mark.django_db(transaction=True)
def test_queued_notices_stay_one_each_and_only_the_player_to_move_is_told() -> None:
    alice, bob = players()
    User.objects.filter(pk__in=[alice.pk, bob.pk]).update(email="them@example.org")
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="3d"
    )
    mail.outbox.clear()
    with time_machine.travel(START, tick=False) as traveller:
        play(game, 1, 0)
        traveller.shift(60)
        play(game, 2, 1)
        play(game, 1, 2)  # Bob's notice is still pending: it stays, with its first time
    pending = sorted(MoveNotice.objects.values_list("player", "created_at"))
    assert pending == [(1, START + timedelta(seconds=60)), (2, START)]
    services.send_move_notices()
    assert not MoveNotice.objects.exists()
    # Alice has moved since Bob's move queued her notice: only Bob, whose move it is, is told.
    assert [(message.to, message.subject) for message in mail.outbox] == [
        (["them@example.org"], f"Your move in Diffusion #{game.pk} against alice")
    ]


# --- lobby: time controls on seeks and challenges ---------------------------------------------


@pytest.mark.django_db
def test_seeks_pair_only_with_an_equal_time_control_and_the_game_gets_it() -> None:
    alice, bob = players()
    carol = make_user("carol")
    choice = [{"slug": "diffusion", "options": {}}]
    _, none = seeks.create_seek(user=alice, games=choice, time_control="5+3")
    assert none is None
    _, still_none = seeks.create_seek(user=bob, games=choice, time_control="3+2")
    assert still_none is None
    _, game = seeks.create_seek(user=carol, games=choice, time_control=" 5+3 ")
    assert game is not None
    assert game.time_control.code == "5+3"
    assert {game.player1.username, game.player2.username} == {"alice", "carol"}
    assert game.clock is not None and game.clock["remaining"] == [300_000, 300_000]


@pytest.mark.django_db
def test_a_bad_time_control_on_a_seek_is_refused_clearly() -> None:
    alice, _ = players()
    with pytest.raises(Exception, match="correspondence is 1, 2, 3, 5, 7, 14 days"):
        seeks.create_seek(
            user=alice, games=[{"slug": "diffusion", "options": {}}], time_control="4d"
        )


# --- the consumer checks the deadline itself ---------------------------------------------------


def almost_out(left_ms: int) -> Game:
    """A 1+0 game in which both have moved and player 1 has `left_ms` left, running."""
    game = timed_game("1+0")
    now = services.now_ms()
    game.clock = {**game.clock, "moved": [True, True], "remaining": [left_ms, 60_000], "since": now}
    services._set_deadline(game)
    game.save()
    return game


@pytest.mark.django_db(transaction=True)
async def test_a_connected_players_socket_ends_the_game_at_the_deadline() -> None:
    game = await database_sync_to_async(almost_out)(300)
    client, snapshot = await open_socket(game.pk, game.player1)
    assert snapshot["game"]["clock"]["running"] == 1
    while True:  # no sweeper runs here: only the socket's own timer can end the game
        message = await client.receive_json_from(timeout=5)
        if message["type"] == "end":
            break
    assert message["result"]["termination"] == "time"
    assert message["result"]["winner"] == 2
    assert message["clock"]["remaining"][0] == 0
    await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_players_socket_probes_the_round_trip_and_refuses_a_bad_reply(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(GameConsumer, "lag_probe_seconds", 0.05)
    game = await database_sync_to_async(timed_game)("1+0")
    client, _ = await open_socket(game.pk, game.player1)
    while True:
        probe = await client.receive_json_from(timeout=5)
        if probe["type"] == "lag_probe":
            break
    await client.send_json_to({"type": "lag_reply", "t": probe["t"] - 800})  # forged: ignored
    await client.send_json_to({"type": "lag_reply", "t": "soon"})
    while True:
        error = await client.receive_json_from(timeout=5)
        if error["type"] == "error":
            break
    assert error["code"] == "bad_message"
    await client.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("answer", ["the probe", "a forged time"])
async def test_only_an_answer_to_a_real_probe_earns_lag_compensation(
    monkeypatch: Any, answer: str
) -> None:
    monkeypatch.setattr(GameConsumer, "lag_probe_seconds", 0.05)
    game = await database_sync_to_async(timed_game)("1+0")
    alice, snapshot = await open_socket(game.pk, game.player1)
    bob, _ = await open_socket(game.pk, game.player2)

    async def play(client: Any, legal: list[str], ply: int) -> dict[str, Any]:
        await client.send_json_to({"type": "move", "move": legal[0], "ply": ply, "id": ply})
        while True:
            event = await client.receive_json_from(timeout=5)
            if event["type"] == "move" and event["ply"] == ply + 1:
                return event

    # Both have moved, so Alice's clock runs from Bob's move on.
    first = await play(alice, snapshot["game"]["legal_moves"], 0)
    second = await play(bob, first["legal_moves"], 1)
    # Probes as rare as in production from now on (after at most one more already on its
    # way), so the newest one stays outstanding: older ones make room for newer ones.
    monkeypatch.setattr(GameConsumer, "lag_probe_seconds", 10.0)
    await asyncio.sleep(0.1)
    probe = None
    while probe is None or not await alice.receive_nothing(timeout=0.1):
        frame = await alice.receive_json_from(timeout=5)
        if frame["type"] == "lag_probe":
            probe = frame
    await asyncio.sleep(0.4)  # a slow line: the probe is answered 400 ms later
    # A forger claims a 4 s round trip it never had, to be charged less thinking time.
    t = probe["t"] if answer == "the probe" else probe["t"] - 3_600
    await alice.send_json_to({"type": "lag_reply", "t": t})
    await alice.send_json_to({"type": "lag_reply", "t": t})  # the same answer twice
    await play(alice, second["legal_moves"], 2)
    row = await database_sync_to_async(Game.objects.get)(pk=game.pk)
    forgiven = 5_000 - row.clock["lag"][0]
    if answer == "the probe":
        assert 150 <= forgiven <= 1_000  # about half of the 400 ms round trip, once
    else:
        assert forgiven == 0
    for client in (alice, bob):
        await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_game_ended_on_time_by_another_process_reaches_both_players_and_a_spectator(
    monkeypatch: Any,
) -> None:
    # 3 s left: on a busy machine, opening three sockets must not take the clock to zero and
    # let a socket's own timer end the game before the other process does.
    game = await database_sync_to_async(almost_out)(3_000)
    alice, _ = await open_socket(game.pk, game.player1)
    bob, _ = await open_socket(game.pk, game.player2)
    watcher, _ = await open_socket(game.pk)

    def sweeper_in_another_process() -> None:
        # `make run`: the sweeper is its own process on the in-memory layer, so its broadcast
        # never reaches the server's sockets. It wakes first and ends the game.
        with monkeypatch.context() as patch:
            patch.setattr(events, "broadcast", lambda game_id, event: None)
            row = Game.objects.get(pk=game.pk)
            row.clock = {**row.clock, "since": row.clock["since"] - 5_000}
            row.save(update_fields=["clock"])
            assert services.check_clock(game_id=game.pk).event is not None

    await database_sync_to_async(sweeper_in_another_process)()
    for client in (alice, bob, watcher):
        while True:
            message = await client.receive_json_from(timeout=5)
            if message["type"] == "end":
                break
        assert message["result"]["termination"] == "time"
        assert message["result"]["winner"] == 2
        await client.disconnect()
