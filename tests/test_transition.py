"""The move transition without a database: the engine, the clock dict and plain values in,
what changed and the typed events out (games/transition.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from games import clocks, protocol, transition
from games.engine import client_moves, pick_client_move
from games.models import Game
from games.rules import IllegalMove, get_rules
from games.transition import Transition, advance
from realtime.protocol import encode

NOW = 1_700_000_000_000


def position(slug: str, moves: list[str]) -> Any:
    rules = get_rules(slug)
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    return state


def last_move_of_a_game(slug: str, seed: int) -> tuple[list[str], str]:
    """The moves of a seeded random game before its last move, and that last move."""
    rules = get_rules(slug)
    rng = random.Random(seed)
    state, moves = rules.initial_state(), []
    while rules.outcome(state) is None:
        move = pick_client_move(client_moves(rules, state), rng)
        moves.append(move)
        state = rules.play(state, move)
    return moves[:-1], moves[-1]


def play(slug: str, before: list[str], move: str, **kwargs: Any) -> Transition:
    rules = get_rules(slug)
    state = position(slug, before)
    player = int(rules.to_move(state))
    values: dict[str, Any] = {"clock": None, "both_moved": len(before) > 1, "now": NOW}
    return advance(rules, state, player=player, move=move, ply=len(before), **(values | kwargs))


@dataclass(frozen=True)
class Case:
    name: str
    slug: str
    before: list[str]
    move: str
    notation: str
    to_move: int
    turn_over: bool
    game_over: bool


ending = {slug: last_move_of_a_game(slug, 2) for slug in ("diffusion", "zigzag", "diffusion-chess")}

CASES = [
    Case("a first move", "diffusion", [], "i", "I", 2, True, False),
    Case("another game's first move", "zigzag", [], "a", "a", 2, True, False),
    # Diffusion Chess: a turn is several moves; only the last one passes it.
    Case("a move inside a turn", "diffusion-chess", [], "j3-j4", "j3-j4", 1, False, False),
    Case(
        "the move that ends a turn",
        "diffusion-chess",
        ["j3-j4", "b2-b3", "e2-e3"],
        "n2-n3",
        "n2-n3",
        2,
        True,
        False,
    ),
    *[
        Case(f"a move that ends {slug}", slug, before, last, last, -1, True, True)
        for slug, (before, last) in ending.items()
    ],
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_move_advances_the_game(case: Case) -> None:
    rules = get_rules(case.slug)
    mover = int(rules.to_move(position(case.slug, case.before)))
    step = play(case.slug, case.before, case.move)

    assert step.ply == len(case.before) + 1
    assert step.notation == case.notation
    assert step.state == rules.to_json(position(case.slug, [*case.before, case.move]))
    assert (step.turn_over, step.game_over) == (case.turn_over, case.game_over)
    move_event = step.events[0]
    assert isinstance(move_event, protocol.MoveEvent)
    assert (move_event.ply, move_event.player, move_event.move) == (step.ply, mover, step.notation)
    assert move_event.state == step.state and move_event.to_move == step.to_move
    if case.game_over:
        outcome = rules.outcome(position(case.slug, [*case.before, case.move]))
        assert outcome is not None
        assert (step.status, step.winner, step.reason) == (
            "finished",
            outcome.winner,
            outcome.reason,
        )
        assert step.termination == "rules"
        assert [type(event) for event in step.events] == [protocol.MoveEvent, protocol.End]
        assert move_event.result == protocol.Result(outcome.winner, "rules", outcome.reason)
        assert move_event.abortable is False
    else:
        assert step.to_move == case.to_move
        assert (step.status, step.winner, step.termination, step.reason) == ("active", None, "", "")
        assert len(step.events) == 1 and move_event.result is None


def test_a_pit_game_move_carries_its_sowing_and_a_board_game_move_does_not() -> None:
    sown = play("diffusion", [], "I")
    assert sown.path is not None and sown.path[0] == ["lift", "I"]
    assert sown.events[0].path == sown.path  # type: ignore[attr-defined]
    assert play("diffusion-chess", [], "j3-j4").path is None


def test_the_first_move_of_player_two_makes_the_game_no_longer_abortable() -> None:
    first = play("diffusion", [], "I", both_moved=False)
    assert first.both_moved is False and first.events[0].abortable is True  # type: ignore[attr-defined]
    reply = play("diffusion", ["I"], "A", both_moved=False)
    assert reply.both_moved is True and reply.events[0].abortable is False  # type: ignore[attr-defined]


def test_an_illegal_move_changes_nothing_and_says_why() -> None:
    with pytest.raises(IllegalMove):
        play("diffusion", [], "Z")


@dataclass(frozen=True)
class ClockCase:
    name: str
    slug: str
    control: str
    before: list[str]  # moves, each made 2 s after the one before
    move: str
    lag: int
    excused: int
    remaining: list[int]
    running: int | None


CLOCK_CASES = [
    # A real-time clock runs only once its player has moved: the first move is free.
    ClockCase("a first move is free", "diffusion", "5+3", [], "I", 0, 0, [300_000, 300_000], 2),
    # Player 1's second move took 2 s, plus the 3 s increment.
    ClockCase(
        "a move is charged and earns the increment",
        "diffusion",
        "5+3",
        ["I", "A"],
        "J",
        0,
        0,
        [301_000, 300_000],
        2,
    ),
    # Lag forgiven (at most 1 s a move) and time the opponent was away are not charged.
    ClockCase(
        "lag is forgiven", "diffusion", "5+3", ["I", "A"], "J", 800, 0, [301_800, 300_000], 2
    ),
    ClockCase(
        "away time is excused", "diffusion", "5+3", ["I", "A"], "J", 0, 500, [301_500, 300_000], 2
    ),
    # Inside a Diffusion Chess turn the clock keeps running for the mover, no increment.
    ClockCase(
        "a move inside a turn keeps the clock",
        "diffusion-chess",
        "1+5",
        ["j3-j4"],
        "b2-b3",
        0,
        0,
        [58_000, 60_000],
        1,
    ),
    # Correspondence: the next turn gets the whole allowance again.
    ClockCase(
        "a correspondence turn resets",
        "diffusion",
        "3d",
        ["I", "A"],
        "J",
        0,
        0,
        [259_200_000, 259_200_000],
        2,
    ),
]


def clock_after(case: ClockCase) -> dict[str, Any] | None:
    """The clock of a game of `case.control` started at NOW after case.before, a move every
    2 s (the Diffusion Chess case: a first move already made, the turn going on)."""
    rules = get_rules(case.slug)
    clock = clocks.start(clocks.parse(case.control), NOW)
    state = rules.initial_state()
    now = NOW
    for move in case.before:
        now += 2_000
        assert clock is not None
        player = int(rules.to_move(state))
        step = advance(
            rules, state, player=player, move=move, ply=0, clock=clock, both_moved=True, now=now
        )
        clock, state = step.clock, step.position
    return clock


@pytest.mark.parametrize("case", CLOCK_CASES, ids=[case.name for case in CLOCK_CASES])
def test_a_timed_move_charges_the_clock(case: ClockCase) -> None:
    rules = get_rules(case.slug)
    clock = clock_after(case)
    now = NOW + 2_000 * (len(case.before) + 1)
    state = position(case.slug, case.before)
    step = advance(
        rules,
        state,
        player=int(rules.to_move(state)),
        move=case.move,
        ply=len(case.before),
        clock=clock,
        both_moved=True,
        now=now,
        lag=case.lag,
        excused=case.excused,
    )
    assert step.clock is not None
    assert (step.clock["remaining"], step.clock["running"], step.clock["since"]) == (
        case.remaining,
        case.running,
        now,
    )
    # The event shows the clock as of the move, as clocks.view does.
    assert step.events[0].clock == transition.clock_frame(clocks.view(step.clock, now))  # type: ignore[attr-defined]


def test_a_game_ending_move_stops_the_clock_in_both_events() -> None:
    before, last = ending["diffusion"]
    mover = int(get_rules("diffusion").to_move(position("diffusion", before)))
    clock = {**(clocks.start(clocks.parse("3d"), NOW) or {}), "running": mover}
    step = play("diffusion", before, last, clock=clock)
    assert step.clock is not None and step.clock["running"] is None
    move_event, end = step.events
    assert isinstance(end, protocol.End)
    assert move_event.clock == end.clock and end.clock is not None and end.clock.running is None  # type: ignore[attr-defined]


def test_the_events_encode_to_documented_frames_once_numbered() -> None:
    before, last = ending["zigzag"]
    step = play("zigzag", before, last)
    for version, event in enumerate(step.events, start=41):
        event.v, event.game_id = version, 7
        text = encode(event)
        frame = msgspec.json.decode(text, type=protocol.SERVER_FRAMES)
        assert frame == event
        # Optional fields left unset are not sent at all (the stored event has no id).
        decoded = msgspec.json.decode(text)
        assert "id" not in decoded and "duplicate" not in decoded
        assert list(decoded)[:3] == ["type", "v", "game_id"]


def test_the_transition_spells_the_models_statuses() -> None:
    assert (transition.ACTIVE, transition.FINISHED) == (Game.Status.ACTIVE, Game.Status.FINISHED)
    assert transition.RULES == Game.Termination.RULES
