"""Games against the computer: starting them, the worker playing the bot's moves through
the games services, offers, refusals, and a worker stopped in the middle of a think."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from accounts.models import User
from bots import services as bots
from bots.models import Bot
from bots.worker import Worker, think_ms
from games import services
from games.models import Game, GameEvent
from games.rules import get_rules
from realtime.errors import ServiceError
from tests.games_helpers import make_user
from tests.servers import ROOT, shared_test_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker() -> Any:
    running = Worker(processes=1, poll=0.05)
    yield running
    running.close()


def steps_until(worker: Worker, done: Any, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the computer did not answer"
        worker.step()


def moves_of(game: Game) -> list[str]:
    return list(
        GameEvent.objects.filter(game=game, ply__isnull=False, undone=False)
        .order_by("ply")
        .values_list("payload", flat=True)
    )


def test_the_computer_answers_a_move_through_the_services(worker: Worker) -> None:
    alice = make_user("alice")
    game = bots.play_computer(user=alice, slug="diffusion", options={}, level=1, side="first")
    assert game.player1 == alice and game.player2.is_bot and not game.rated
    assert game.player2.username == "Computer-1"
    services.play_move(game_id=game.pk, user=alice, move="I", ply=0)
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).ply == 2)
    game.refresh_from_db()
    rules = get_rules("diffusion")
    assert rules.to_move(rules.from_json(game.state)) == 1  # alice's turn again
    assert len(moves_of(game)) == 2 and game.version >= 2


def test_the_computer_moves_first_when_the_player_takes_the_second_side(worker: Worker) -> None:
    alice = make_user("alice")
    game = bots.play_computer(
        user=alice, slug="zigzag", options={"pits": 4}, level=2, side="second"
    )
    assert game.player1.is_bot and game.player2 == alice
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).ply == 1)


def test_the_computer_plays_a_whole_turn_of_diffusion_chess(worker: Worker) -> None:
    alice = make_user("alice")
    game = bots.play_computer(
        user=alice, slug="diffusion-chess", options={}, level=1, side="second"
    )
    # White's first turn has four moves; then it is Black's (alice's) turn.
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).state["to_move"] == 2)
    assert Game.objects.get(pk=game.pk).ply == 4


def test_one_bot_account_per_level_is_made_once() -> None:
    first = bots.bot_user(3)
    assert bots.bot_user(3) == first
    assert Bot.objects.get(user=first).level == 3 and first.is_bot
    assert not first.has_usable_password()


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"level": 0}, "bad_level"),
        ({"level": 6}, "bad_level"),
        ({"level": "3"}, "bad_level"),
        ({"side": "north"}, "bad_side"),
        ({"slug": "chess"}, "invalid_options"),
        ({"options": {"pits": 7}, "slug": "zigzag"}, "invalid_options"),
        ({"time_control": "5 minutes"}, "invalid_time_control"),
    ],
)
def test_a_bad_request_for_the_computer_is_refused_and_starts_nothing(
    fields: dict[str, Any], code: str
) -> None:
    alice = make_user("alice")
    request = {"slug": "diffusion", "options": {}, "level": 2, "side": "random"} | fields
    with pytest.raises(ServiceError) as refused:
        bots.play_computer(user=alice, **request)
    assert refused.value.code == code
    assert not Game.objects.exists()


def test_a_player_has_at_most_ten_games_against_the_computer_at_once() -> None:
    alice = make_user("alice")
    for _ in range(bots.MAX_COMPUTER_GAMES):
        bots.play_computer(user=alice, slug="diffusion", options={}, level=1)
    with pytest.raises(ServiceError) as refused:
        bots.play_computer(user=alice, slug="diffusion", options={}, level=1)
    assert refused.value.code == "too_many_computer_games"


def test_a_game_against_the_computer_is_never_rated() -> None:
    alice = make_user("alice")
    with pytest.raises(ServiceError) as refused:
        services.create_game(
            slug="diffusion", options={}, player1=alice, player2=bots.bot_user(1), rated=True
        )
    assert refused.value.code == "bots_play_casual"


def test_the_computer_takes_a_move_back_when_asked_and_plays_on_instead_of_a_draw(
    worker: Worker,
) -> None:
    alice = make_user("alice")
    game = bots.play_computer(user=alice, slug="zigzag", options={}, level=1, side="first")
    services.play_move(game_id=game.pk, user=alice, move="a", ply=0)
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).ply == 2)
    services.offer_takeback(game_id=game.pk, user=alice)
    # The computer answered at once, so its answer goes back with alice's move.
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).ply == 0)
    game.refresh_from_db()
    assert not game.offers and game.state["to_move"] == 1
    assert GameEvent.objects.filter(game=game, undone=True).count() == 2
    services.play_move(game_id=game.pk, user=alice, move="b", ply=0)
    steps_until(worker, lambda: Game.objects.get(pk=game.pk).state["to_move"] == 1)
    services.offer_draw(game_id=game.pk, user=alice)
    steps_until(worker, lambda: not Game.objects.get(pk=game.pk).offers)
    assert Game.objects.get(pk=game.pk).status == Game.Status.ACTIVE


def test_a_worker_dropped_while_thinking_leaves_the_move_to_the_next_one() -> None:
    alice = make_user("alice")
    game = bots.play_computer(
        user=alice, slug="four-rank-diffusion", options={}, level=5, side="second"
    )
    first = Worker(processes=1, poll=0.01)
    first.step()  # starts thinking...
    assert first.thinking
    first.close()  # ...and is gone before it answers
    assert Game.objects.get(pk=game.pk).ply == 0
    second = Worker(processes=1, poll=0.05)
    try:
        steps_until(second, lambda: Game.objects.get(pk=game.pk).ply == 1)
    finally:
        second.close()


def test_a_bot_thinks_within_a_share_of_its_real_time_clock() -> None:
    from bots.worker import Turn

    def turn(remaining: int, control: str = "3+2", moved: bool = True) -> Turn:
        clock = {
            "control": control,
            "remaining": [remaining, remaining],
            "running": 1,
            "since": 1_000,
            "moved": [moved, moved],
            "lag": [0, 0],
        }
        return Turn(1, 1, 2, 1, 1, 3, "diffusion", {}, {}, clock)

    # 3+2 with three minutes left: a thirtieth of it plus most of the increment.
    assert think_ms(turn(180_000), now=1_000, queued=1) == pytest.approx(6_000 + 1_200)
    # The time spent since the turn began counts; five seconds left: a fifteenth of them.
    assert think_ms(turn(65_000), now=61_000, queued=1) == pytest.approx(5_000 / 15)
    # A queue of answers waiting shares the time.
    assert think_ms(turn(180_000), now=1_000, queued=4) == pytest.approx(7_200 / 4)
    # Correspondence and untimed: the level's own limit.
    assert think_ms(turn(86_400_000, control="1d"), now=1_000, queued=1) is None


def children(pid: int) -> list[int]:
    """The processes `pid` started (Linux: every thread's list in /proc)."""
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has exited, only not yet reaped


@pytest.mark.postgres(reason="a worker process and the test share the database")
def test_a_worker_process_killed_mid_think_loses_nothing_leaves_no_thinker_and_a_new_one_resumes(
    tmp_path: Path,
) -> None:
    alice = make_user("alice")
    # Four-rank at level 5: its deepest search (about half a second on an idle core).
    game = bots.play_computer(
        user=alice, slug="four-rank-diffusion", options={}, level=5, side="first"
    )
    services.play_move(game_id=game.pk, user=alice, move="a1", ply=0)
    shared = {k: v for k, v in shared_test_env("bots").items() if v is not None}
    env = {**os.environ, **shared, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "manage.py", "bots", "--processes", "1"]
    log = (tmp_path / "bots.log").open("wb")
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while b"bots: playing" not in (tmp_path / "bots.log").read_bytes():
        assert time.monotonic() < deadline, (tmp_path / "bots.log").read_text()
        time.sleep(0.05)
    time.sleep(0.25)  # thinking now: the worker finds the game within its 0.1 s poll
    thinkers = children(first.pid)
    assert thinkers, "the worker should think in a process of its own"
    first.send_signal(signal.SIGKILL)
    first.wait()
    # Its thinking process does not outlive it.
    deadline = time.monotonic() + 10
    while any(map(alive, thinkers)):
        assert time.monotonic() < deadline, f"thinking processes {thinkers} outlived the worker"
        time.sleep(0.1)
    game.refresh_from_db()
    assert game.ply == 1 and game.status == Game.Status.ACTIVE
    second = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while Game.objects.get(pk=game.pk).ply < 2:
            assert time.monotonic() < deadline, (tmp_path / "bots.log").read_text()
            time.sleep(0.2)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=20)
    assert len(moves_of(game)) == 2
    assert "Traceback" not in (tmp_path / "bots.log").read_text()
    assert User.objects.filter(is_bot=True).count() == 1
