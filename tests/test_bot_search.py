"""The computer's search (bots/search): pure Python over the rules API, no database."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.search import LEVELS, level, think
from bots.search.policies import chess_score, policy
from devtools import ladder
from games.rules import get_rules
from tests.rules.test_chess import position

SLUGS = ["diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess"]


def diffusion(top: str, bottom: str, to_move: int = 1) -> Any:
    """A 2x6 position written as printed: top row F..A, bottom row G..L; the stones not on
    the board are in the stores (their contents never matter)."""
    rows = [[int(n) for n in top.split()], [int(n) for n in bottom.split()]]
    rules = get_rules("diffusion")
    left = 48 - sum(map(sum, rows))
    return rules, rules.from_json({"rows": rows, "stores": [left, 0], "to_move": to_move})


def legal(rules: Any, state: Any, move: str) -> bool:
    if hasattr(rules, "is_legal"):
        return bool(rules.is_legal(state, move))
    return move in rules.legal_moves(state)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_every_level_empties_its_own_block_when_one_move_wins(number: int) -> None:
    #   F E D C B A          South owns F E D / G H I: its only stone, in I, goes east to
    #   0 0 0 4 4 4          J when scooped, so I wins at once.
    #   G H I J K L
    #   0 0 1 4 4 4
    rules, state = diffusion("0 0 0 4 4 4", "0 0 1 4 4 4")
    assert think(rules, state, number, seed=number).move == "I"


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_no_level_empties_the_opponents_block(number: int) -> None:
    #   F E D C B A          North owns C B A / J K L and has one stone left, in C; scooped,
    #   4 4 4 1 0 0          it goes west to D and North wins: South must play anything else.
    #   G H I J K L
    #   4 4 4 0 0 0
    rules, state = diffusion("4 4 4 1 0 0", "4 4 4 0 0 0")
    for seed in range(5):
        assert think(rules, state, number, seed=seed).move != "C"


# Diffusion Chess, drawn from a1 up (see tests/rules/test_chess.py). White's pair d3-d4 may
# take d5 (Black's pair: not smaller), which swaps d5 onto d4 and leaves Black's king alone.
# Every move of White's king pair a1-a2 leaves White's king alone.
KING_HUNT = """
    . . . . . .
    . . . k . .
    . . . X . .
    . . . O . .
    . . . O . .
    O . . . . .
    K . . . . .
"""


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_every_level_strands_the_enemy_king_when_a_capture_does_it_at_once(number: int) -> None:
    rules, state = get_rules("diffusion-chess"), position(KING_HUNT)
    for seed in range(3):
        choice = think(rules, state, number, seed=seed)
        assert choice.move == "d4-d5"
        outcome = rules.outcome(rules.play(state, choice.move))
        assert outcome is not None and outcome.winner == 1


@pytest.mark.parametrize("number", [1, 2])
def test_no_level_however_careless_strands_its_own_king(number: int) -> None:
    # Levels 1 and 2 sometimes play a move they found worse, but never one that loses.
    rules, state = get_rules("diffusion-chess"), position(KING_HUNT)
    state = rules.play(state, "d4-c4")  # the capture gone, five moves of the turn left
    for seed in range(20):
        move = think(rules, state, number, seed=seed).move
        assert move.split("-")[0] not in ("a1", "a2"), move


def test_the_chess_score_counts_the_group_the_mover_must_still_add() -> None:
    # The opening: White's c5 walking off its square adds the group the turn needs; walking
    # round to d4 it stays in its group, and the turn still owes one.
    rules = get_rules("diffusion-chess")
    state = rules.initial_state()
    split, kept = rules.play(state, "c5-c4"), rules.play(state, "c5-c4-d4")
    assert chess_score(rules, kept) == pytest.approx(chess_score(rules, state))
    assert chess_score(rules, split) > chess_score(rules, state)
    # Black's turn owes a group too: with the turns even, the number leans to White.
    black_to_move = position(KING_HUNT, to_move=2)
    assert chess_score(rules, black_to_move) > 0.5


@pytest.mark.parametrize("slug", SLUGS)
def test_the_same_seed_gives_the_same_move(slug: str) -> None:
    rules = get_rules(slug)
    state = rules.initial_state()
    # Level 2 with time enough that its playouts, not the clock, end the search: on a loaded
    # machine 500 ms can cut one search short and not the other.
    unhurried = dataclasses.replace(level(2), max_ms=60_000)
    first = think(rules, state, unhurried, seed=11)
    assert first.move == think(rules, state, unhurried, seed=11).move
    assert legal(rules, state, first.move)
    assert first.playouts >= 1


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 60))
def test_a_move_chosen_anywhere_in_a_random_game_is_legal(slug: str, seed: int, plies: int) -> None:
    rules = get_rules(slug)
    rng = random.Random(seed)
    state = rules.initial_state()
    for _ in range(plies):
        if rules.outcome(state) is not None:
            break
        drawn = getattr(rules, "random_move", None)
        move = drawn(state, rng) if drawn else rng.choice(list(rules.legal_moves(state)))
        state = rules.play(state, move)
    if rules.outcome(state) is not None:
        with pytest.raises(ValueError, match="over"):
            think(rules, state, 1, seed=seed)
        return
    choice = think(rules, state, 1, seed=seed)
    assert legal(rules, state, choice.move)


def test_a_clock_share_cuts_the_search_short() -> None:
    rules = get_rules("four-rank-diffusion")
    state = rules.initial_state()
    full = think(rules, state, 5, seed=3)
    hurried = think(rules, state, 5, seed=3, max_ms=5)
    assert hurried.playouts < full.playouts
    assert hurried.ms < 200


def test_the_levels_are_one_to_five_and_grow() -> None:
    assert [entry.number for entry in LEVELS] == [1, 2, 3, 4, 5]
    for slug in SLUGS:
        game = policy(slug)
        budgets = [game.budget(entry.number, entry.playouts) for entry in LEVELS]
        assert budgets == sorted(budgets) and len(set(budgets)) == 5, slug
    for wrong in (0, 6, "3", True, None):
        with pytest.raises(ValueError, match="1 to 5"):
            level(wrong)


class CountingRules:
    """The rules of a game, counting the moves played through them."""

    def __init__(self, slug: str) -> None:
        self.rules = get_rules(slug)
        self.played = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rules, name)

    def play(self, state: Any, move: str) -> Any:
        self.played += 1
        return self.rules.play(state, move)


@pytest.mark.parametrize(("number", "plies"), [(1, 2), (4, 2), (5, 4)])
def test_four_rank_s_top_level_plays_out_deeper_than_the_others(number: int, plies: int) -> None:
    from bots.search.mcts import Search

    rules = CountingRules("four-rank-diffusion")
    game = policy("four-rank-diffusion")
    search = Search(rules, game, random.Random(1), 1.0, 0, game.playout_depth(number))
    value = search.playout(rules.initial_state())
    assert rules.played == plies
    assert 0.0 < value < 1.0


def test_the_search_imports_no_django() -> None:
    import ast
    from pathlib import Path

    for path in (Path(__file__).parent.parent / "bots" / "search").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert "django" not in names and not names & {"accounts", "lobby", "ratings"}, path


def test_a_ladder_pairing_played_in_parts_adds_up_to_the_whole() -> None:
    # Each game has its own seed, so games 0-5 and 6-11 are the twelve games of one run. A
    # level plays the same moves for a seed only when its time limit never cuts its search
    # short: level 1 with a limit no busy machine reaches (its 300 ms once did, beside the
    # other tests).
    untimed = dataclasses.replace(level(1), max_ms=10**9)
    whole = ladder.pairing("diffusion", untimed, ladder.RANDOM, 12, seed=3, jobs=1)
    lines: list[str] = []
    head = ladder.pairing("diffusion", untimed, ladder.RANDOM, 6, seed=3, jobs=1)
    tail = ladder.pairing("diffusion", untimed, ladder.RANDOM, 6, seed=3, jobs=1, first=6)
    assert (head.games, tail.games) == (6, 6)
    assert head.plies + tail.plies == whole.plies
    assert head.points + tail.points == whole.points
    assert head.first_player_wins + tail.first_player_wins == whole.first_player_wins
    ladder.pairing("diffusion", 1, ladder.RANDOM, 12, seed=3, jobs=1, progress=lines.append)
    assert len(lines) == 1
    assert lines[0].startswith("    games 0-9: level 1 ")
    assert lines[0].split(" of ")[1].startswith("10 ")


def test_a_budget_scale_multiplies_the_playouts_of_a_level() -> None:
    # The benchmarks' stronger opponent ("5x10" in devtools/ladder.py) is a level with more.
    rules = get_rules("diffusion")
    state = rules.initial_state()
    assert think(rules, state, 1, seed=1).playouts == 25
    assert think(rules, state, 1, seed=1, scale=4).playouts == 100
    assert ladder.scaled("5x10") == (5, 10.0)
    with pytest.raises(ValueError):
        ladder.scaled("6x10")
