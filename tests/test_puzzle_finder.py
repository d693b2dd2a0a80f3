"""The dev-only puzzle finder (devtools/puzzles/, docs/PUZZLES-FINDING.md): the forced-win
prover on positions drawn out below, the finder's one-answer rule, and the generator's
command storing what it accepts."""

from __future__ import annotations

import io
import random
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.puzzles.finder import (
    ACCEPTED,
    FORCED,
    NO_WIN,
    NOT_UNIQUE,
    OVER,
    examine,
    find,
    limits_for,
)
from devtools.puzzles.prover import Prover, first_wins
from games.models import Game, PlayedGame, PlayedMoves
from games.rules import get_rules
from games.rules.notation import parse_position, position_text
from games.services.records import rows_of
from puzzles.models import Puzzle
from tests.games_helpers import new_game
from tests.rules.test_chess import position as chess_position

DIFFUSION: Any = get_rules("diffusion")
FOUR_RANK: Any = get_rules("four-rank-diffusion")
ZIGZAG: Any = get_rules("zigzag", pits=6, seeds=5)
CHESS: Any = get_rules("diffusion-chess")

# Diffusion Chess positions drawn from a1 up (tests/rules/test_chess.py): the start of one of
# White's five-move turns. White's king pair on j2-j3 cannot move without stranding the king.
# b4-b3 takes the stone beside Black's king on b2, which is swapped to b4: the king is alone.
# b5 cannot move (three lone black stones around it, too small to take).
CHESS_WIN_IN_1 = """
    . . . . . . . . . .
    . X . . . . . . . .
    X O X . . . . . . .
    . O . . . . . . . .
    . X . . . . . . . .
    . k . . . . . . . O
    . . . . . . . . . K
"""
# b5-b4, then its echo steps on to b3 and takes the king's stone: b6 cannot move.
CHESS_WIN_IN_2 = """
    . X . . . . . . . .
    X O X . . . . . . .
    . O . . . . . . . .
    . . . . . . . . . .
    . X . . . . . . . .
    . k . . . . . . . O
    . . . . . . . . . K
"""
# a3-b3 and c3-b3 both take the king's stone: two answers.
CHESS_TWO_WINS = """
    . . . . . . . . . .
    O . O . . . . . . .
    O X O . . . . . . .
    . k . . . . . . . O
    . . . . . . . . . K
"""
# White's king pair and a pair on e5-e6: whatever White plays, the turn's third move must be
# the king's or its neighbour's (no passing), and strands White's king.
CHESS_LOST = """
    . . . . . . . . . .
    . . . . O . . . . .
    . . . . O . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . O
    . k X . . . . . . K
"""


def chess(diagram: str) -> str:
    """The position's text (docs/NOTATION.md) of a drawn Diffusion Chess position."""
    return position_text(CHESS, chess_position(diagram))


# (rules, position, own moves within which the side to move forces a win: its fewest; the
# one answer, or None when there are several)
WINS = [
    (DIFFUSION, "0,0,2,0,0,0/0,1,2,0,0,1 25,17 2", 1, "L"),
    (DIFFUSION, "0,0,3,0,0,0/0,1,0,0,1,0 25,18 2", 2, "K"),
    (
        FOUR_RANK,
        "0,0,0,0,1,0,0,0/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,0/0,0,0,1,0,0,2,0 73,66 1",
        1,
        "d1",
    ),
    (
        FOUR_RANK,
        "2,0,2,0,0,0,0,0/1,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/0,0,1,0,0,0,1,0 70,67 2",
        2,
        "g1",
    ),
    (ZIGZAG, "0,0,0,0,1,1/0,0,1,0,0,0 27,30 2 - 1", 1, "F"),
    (ZIGZAG, "0,0,1,0,0,1/0,0,0,0,0,0 28,30 2 - 1", 2, "F"),
    (CHESS, chess(CHESS_WIN_IN_1), 1, "b4-b3"),
    (CHESS, chess(CHESS_WIN_IN_2), 2, "b5-b4"),
]
# Positions where two moves or more win as soon as any does: no puzzle.
TWO_ANSWERS = [
    (DIFFUSION, "0,0,1,0,0,0/0,0,1,0,1,0 20,25 1"),
    (FOUR_RANK, "0,2,0,1,1,0,0,0/1,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,0 74,64 2"),
    (ZIGZAG, "0,1,0,0,0,0/0,1,1,0,1,0 31,25 1 - 2"),
    (CHESS, chess(CHESS_TWO_WINS)),
]
# Lost for the side to move: the opponent forces a win within this many of its own moves.
LOST = [
    (DIFFUSION, "0,0,3,0,0,0/0,1,0,0,0,1 25,18 1", 1),
    (FOUR_RANK, "0,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,0/0,0,0,0,0,1,0,1 69,71 2", 2),
    (ZIGZAG, "0,1,0,1,0,0/0,1,1,0,0,0 31,25 2 - 2 - 1:0,1,0,0,0,0/0,1,1,0,1,0:-", 1),
    (CHESS, chess(CHESS_LOST), 0),
]


def ids(cases: list[Any]) -> list[str]:
    return [f"{case[0].slug}-{number}" for number, case in enumerate(cases)]


@pytest.mark.parametrize(("rules", "text", "moves", "answer"), WINS, ids=ids(WINS))
def test_the_prover_finds_the_fewest_moves_that_win(
    rules: Any, text: str, moves: int, answer: str
) -> None:
    state = parse_position(rules, text)
    prover = Prover(rules, rules.to_move(state), nodes=200_000)
    assert prover.wins(state, moves - 1) is False
    assert prover.wins(state, moves) is True
    assert prover.distance(state, moves + 2) == moves
    assert first_wins(rules, state, moves, prover) == [answer]
    line = prover.line(state, moves)
    assert line[0] == answer
    # The line is a game: it ends with the solver's win, after `moves` of its own moves.
    me = rules.to_move(state)
    mine = 0
    for move in line:
        mine += rules.to_move(state) == me
        state = rules.play(state, move)
    assert rules.outcome(state) is not None and rules.outcome(state).winner == me
    assert mine == moves


@pytest.mark.parametrize(("rules", "text", "moves", "answer"), WINS, ids=ids(WINS))
def test_the_finder_accepts_one_answer(rules: Any, text: str, moves: int, answer: str) -> None:
    # Diffusion Chess's generator proves wins in one move only (its turns are wide): here
    # the horizon reaches the answer's.
    limits = limits_for(rules.slug)
    limits = replace(limits, depth=max(limits.depth, moves))
    verdict = examine(rules, parse_position(rules, text), limits)
    assert verdict.reason == ACCEPTED
    found = verdict.found
    assert found is not None
    assert (found.solution, found.goal, found.moves) == (answer, "win", moves)
    horizon = moves + limits_for(rules.slug).margin
    assert found.verified == (
        f"proved: wins in {moves} move{'s' * (moves != 1)}; no other move wins in {horizon}"
    )
    assert found.line[0] == answer
    assert "short" in found.themes


@pytest.mark.parametrize(("rules", "text"), TWO_ANSWERS, ids=ids(TWO_ANSWERS))
def test_two_answers_are_no_puzzle(rules: Any, text: str) -> None:
    state = parse_position(rules, text)
    prover = Prover(rules, rules.to_move(state))
    fewest = prover.distance(state, 5)
    assert fewest is not None
    assert len(first_wins(rules, state, fewest, prover) or []) >= 2
    assert examine(rules, state, limits_for(rules.slug)).reason == NOT_UNIQUE
    assert examine(rules, state, limits_for(rules.slug)).found is None


@pytest.mark.parametrize(("rules", "text", "moves"), LOST, ids=ids(LOST))
def test_a_lost_position_has_no_win_and_no_puzzle(rules: Any, text: str, moves: int) -> None:
    state = parse_position(rules, text)
    me = rules.to_move(state)
    assert len(list(rules.legal_moves(state))) > 1
    assert Prover(rules, me).wins(state, 3) is False
    opponent = Prover(rules, 3 - me)
    assert opponent.wins(state, moves) is True
    if moves:
        assert opponent.wins(state, moves - 1) is False
    verdict = examine(rules, state, limits_for(rules.slug))
    assert (verdict.found, verdict.reason) == (None, NO_WIN)


def test_the_texts_of_the_drawn_chess_positions_are_what_the_table_shows() -> None:
    text = chess(CHESS_WIN_IN_1)
    assert text.startswith("19/19/")
    assert text.endswith(" w 3 5")
    assert "/1k7O9/9K9 w" in text
    assert position_text(CHESS, parse_position(CHESS, text)) == text


def test_a_budget_too_small_answers_unknown_never_a_guess() -> None:
    state = parse_position(DIFFUSION, "0,0,3,0,0,0/0,1,0,0,1,0 25,18 2")
    prover = Prover(DIFFUSION, 2, nodes=5)
    assert prover.wins(state, 2) is None
    assert prover.made == 6  # stopped at the first position past the budget
    assert Prover(DIFFUSION, 2, nodes=10_000).wins(state, 2) is True


def test_no_choice_and_a_finished_game_are_no_puzzles() -> None:
    over = DIFFUSION.play(parse_position(DIFFUSION, "0,0,2,0,0,0/0,1,2,0,0,1 25,17 2"), "L")
    assert DIFFUSION.outcome(over) is not None
    assert examine(DIFFUSION, over).reason == OVER
    # South's c is barred (its seed would go straight back), which leaves e alone.
    single = parse_position(
        ZIGZAG, "0,0,0,0,2,0/0,0,1,0,1,0 25,31 1 c 1 - 2:0,0,0,1,2,0/0,0,0,0,1,0:-"
    )
    assert list(ZIGZAG.legal_moves(single)) == ["e"]
    assert examine(ZIGZAG, single).reason == FORCED


def _late_positions(rules: Any, seed: int) -> list[Any]:
    rng = random.Random(seed)
    state = rules.initial_state()
    states = [state]
    while rules.outcome(state) is None:
        state = rules.play(state, rng.choice(list(rules.legal_moves(state))))
        states.append(state)
    return states[-8:-1]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    rules=st.sampled_from([DIFFUSION, FOUR_RANK, ZIGZAG]),
)
def test_an_accepted_answer_leaves_every_reply_lost_within_the_horizon(
    seed: int, rules: Any
) -> None:
    limits = limits_for(rules.slug)
    for state in _late_positions(rules, seed):
        found = examine(rules, state, limits).found
        if found is None or found.goal != "win":
            continue
        me = rules.to_move(state)
        after = rules.play(state, found.solution)
        if rules.outcome(after) is not None:
            assert rules.outcome(after).winner == me
            continue
        assert rules.to_move(after) == 3 - me
        for reply in rules.legal_moves(after):
            answer = rules.play(after, reply)
            # A fresh prover, sharing nothing with the finder's.
            assert Prover(rules, me).wins(answer, found.moves - 1) is True, (found, reply)
        # And no other move of the position wins as soon.
        for move in rules.legal_moves(state):
            if move != found.solution:
                other = rules.play(state, move)
                assert Prover(rules, me).wins(other, found.moves - 1) is not True


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("puzzlegen", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_stores_verified_puzzles_of_games_it_plays() -> None:
    text = _run("--game", "diffusion", "--count", "3", "--seed", "5", "--batch", "1")
    assert "diffusion:" in text and "3 stored" in text and "rejected:" in text
    puzzles = list(Puzzle.objects.filter(slug="diffusion"))
    assert len(puzzles) == 3
    for puzzle in puzzles:
        state = parse_position(DIFFUSION, puzzle.position)
        assert puzzle.game_id is None
        assert puzzle.verified.startswith("proved: ")
        found = examine(DIFFUSION, state, limits_for("diffusion")).found
        assert found is not None and found.solution == puzzle.solution
        assert puzzle.line[0] == puzzle.solution and "endgame" in puzzle.themes


@pytest.mark.django_db
def test_the_command_reads_the_database_games_and_records_where_each_puzzle_is() -> None:
    rng = random.Random(3)
    state = DIFFUSION.initial_state()
    moves: list[str] = []
    while DIFFUSION.outcome(state) is None:
        moves.append(rng.choice(DIFFUSION.legal_moves(state)))
        state = DIFFUSION.play(state, moves[-1])
    game = new_game("diffusion")
    game.status = Game.Status.FINISHED
    game.winner = DIFFUSION.outcome(state).winner
    game.termination = "rules"
    game.ended_at = datetime.now(UTC)
    game.ply = len(moves)
    game.save()
    PlayedGame.objects.bulk_create(rows_of(game))
    PlayedMoves.objects.create(game=game, moves=" ".join(moves))
    text = _run("--game", "diffusion", "--from-db", "--count", "50", "--earlier", "0")
    assert "1 games" in text
    puzzles = list(Puzzle.objects.filter(slug="diffusion"))
    assert puzzles, text
    for puzzle in puzzles:
        assert puzzle.game_id == game.pk
        replayed = DIFFUSION.initial_state()
        for move in moves[: puzzle.ply]:
            replayed = DIFFUSION.play(replayed, move)
        assert position_text(DIFFUSION, replayed) == puzzle.position
        assert puzzle.ply >= len(moves) - 10
    # Again: every position it finds is a puzzle already, and none is stored twice.
    again = _run("--game", "diffusion", "--from-db", "--count", "50", "--earlier", "0")
    assert "0 stored" in again and "already-a-puzzle" in again
    assert Puzzle.objects.filter(slug="diffusion").count() == len(puzzles)


def test_where_the_prover_does_not_reach_the_search_decides_twice() -> None:
    # South's F empties South's own block (a win), L empties North's (a loss): the searches
    # read both at once; with a budget of one position the prover cannot.
    state = parse_position(DIFFUSION, "1,0,0,0,0,0/0,0,0,0,0,1 23,23 1")
    limits = replace(limits_for("diffusion"), nodes=1, search_ms=50, confirm_ms=200)
    assert examine(DIFFUSION, state, replace(limits, search_ms=0)).reason == "unknown"
    found = examine(DIFFUSION, state, limits).found
    assert found is not None
    assert (found.solution, found.goal, found.method) == ("F", "win", "search")
    assert found.verified == "searched 50 ms, confirmed 200 ms: 1.00 vs at most 0.00"


def test_a_diffusion_chess_save_is_decided_within_the_turn() -> None:
    # With the generator's horizon (a win in one move), the win in 2 is not seen, but every
    # other first move is proved to lose before White's turn is over: a save, a race.
    found = find(CHESS, chess_position(CHESS_WIN_IN_2))
    assert found is not None
    assert (found.solution, found.goal) == ("b5-b4", "save")
    assert found.verified.startswith("proved: after every other move the turn cannot be")
    assert "race" in found.themes
