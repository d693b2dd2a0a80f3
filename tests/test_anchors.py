"""The benchmark opponents (devtools/anchors.py) that the computer's levels are measured
against: each measure as a table of positions, and what each player does with it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from devtools import anchors, chess_openings, chess_trace, ladder
from games.rules import get_rules
from tests.rules.test_chess import position
from tests.test_bot_search import KING_HUNT, diffusion


@pytest.mark.parametrize(
    ("top", "bottom", "me", "value"),
    [
        # South (1) owns F E D / G H I, North (2) C B A / J K L; fewer of one's own is better.
        ("4 4 4 4 4 4", "4 4 4 4 4 4", 1, 0.0),
        ("0 0 1 4 4 4", "0 0 1 4 4 4", 1, 22.0),
        ("0 0 1 4 4 4", "0 0 1 4 4 4", 2, -22.0),
        ("4 4 4 0 0 0", "4 4 4 1 0 0", 1, -23.0),
    ],
)
def test_the_sowing_measure_is_the_opponents_block_less_ones_own(
    top: str, bottom: str, me: int, value: float
) -> None:
    rules, state = diffusion(top, bottom)
    assert anchors.score(rules, state, me) == value


def test_zigzag_s_measure_is_the_captured_seeds_difference() -> None:
    rules = get_rules("zigzag")
    state = rules.initial_state()._replace(captured=(8, 3))
    assert anchors.score(rules, state, 1) == 5.0
    assert anchors.score(rules, state, 2) == -5.0


def test_the_chess_measure_counts_groups_the_group_owed_and_the_kings() -> None:
    rules = get_rules("diffusion-chess")
    start = rules.initial_state()
    # Even groups; White owes this turn's group (-2); both kings in 9-stone groups.
    assert anchors.score(rules, start, 1) == -2.0
    split = rules.play(start, "c5-c4")  # a tenth group: nothing owed, one more than Black
    assert anchors.score(rules, split, 1) == -1.0
    kept = rules.play(start, "c5-c4-d4")  # still in its group: the group still owed
    assert anchors.score(rules, kept, 1) == -2.0


def test_a_finished_game_is_worth_a_win_or_a_loss() -> None:
    rules, state = get_rules("diffusion-chess"), position(KING_HUNT)
    won = rules.play(state, "d4-d5")
    assert anchors.score(rules, won, 1) == anchors.WIN
    assert anchors.score(rules, won, 2) == -anchors.WIN


@pytest.mark.parametrize("name", anchors.NAMES)
@pytest.mark.parametrize("slug", ["diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess"])
def test_every_opponent_plays_only_legal_moves(name: str, slug: str) -> None:
    rules = get_rules(slug)
    state = rules.initial_state()
    rng = random.Random(7)
    for _ in range(3 if slug == "diffusion-chess" else 12):  # a chess move costs more
        if rules.outcome(state) is not None:
            break
        move = anchors.move(name, rules, state, rng)
        state = rules.play(state, move)  # IllegalMove would fail the test


@pytest.mark.parametrize("name", ["greedy-1", "greedy-2"])
def test_the_greedy_players_take_a_win_in_one(name: str) -> None:
    rules, state = diffusion("0 0 0 4 4 4", "0 0 1 4 4 4")
    assert anchors.move(name, rules, state, random.Random(1)) == "I"
    rules, state = get_rules("diffusion-chess"), position(KING_HUNT)
    assert anchors.move(name, rules, state, random.Random(1)) == "d4-d5"


def test_only_the_two_ply_player_sees_the_reply_that_loses() -> None:
    # ZigZag, South to move with `c` (2 seeds) and `d` (1): `d` captures at once, which the
    # one-ply measure likes, but leaves North a reply that wins; `c` does not.
    rules = get_rules("zigzag")
    state = rules.from_json(
        {
            "rows": [[0, 0, 0, 1, 1, 0], [0, 0, 2, 1, 0, 0]],
            "stores": [48, 7],
            "captured": [7, 48],
            "to_move": 1,
            "no_return": None,
            "last_capturer": 1,
            "repetition": ["2:0 1 0 1 1 0/0 0 1 1 0 0:-"],
            "end": None,
        }
    )
    after_d = rules.play(state, "d")
    assert anchors.score(rules, after_d, 1) > anchors.score(rules, rules.play(state, "c"), 1)
    assert any(
        anchors.score(rules, rules.play(after_d, reply), 1) == -anchors.WIN
        for reply in rules.legal_moves(after_d)
    )
    for seed in range(5):
        assert anchors.move("greedy-1", rules, state, random.Random(seed)) == "d"
        assert anchors.move("greedy-2", rules, state, random.Random(seed)) == "c"


def test_a_ladder_game_between_a_level_and_an_opponent_ends_with_a_winner() -> None:
    game = ladder.play("diffusion", 1, "greedy-1", seed=3)
    assert game.winner in (1, 2) and game.plies > 0
    zigzag = ladder.play("zigzag", "greedy-1", 1, seed=4, options={"pits": 4, "seeds": 3})
    assert zigzag.plies > 0


# The turn planner (devtools/chess_planner.py), Diffusion Chess only.
def test_the_planner_strands_the_enemy_king_when_it_can_and_plays_legal_moves() -> None:
    rules: Any = get_rules("diffusion-chess")
    assert anchors.move("planner", rules, position(KING_HUNT), random.Random(1)) == "d4-d5"
    start = rules.initial_state()
    assert rules.is_legal(start, anchors.move("planner", rules, start, random.Random(2)))
    with pytest.raises(ValueError):
        anchors.move(
            "planner",
            get_rules("diffusion"),
            get_rules("diffusion").initial_state(),
            random.Random(1),
        )


def test_a_traced_game_lists_each_turn_s_groups_and_its_result() -> None:
    lines, result = chess_trace.trace("random", "1", seed=3)
    assert lines[0].startswith("turn  1 W: groups  9/ 9, kings' groups 9/9, movable 41, ")
    assert lines[0].endswith(" ms")
    assert [line.split(":")[0] for line in lines[:3]] == ["turn  1 W", "turn  2 B", "turn  3 W"]
    assert result.startswith("Outcome(winner=")


def test_a_traced_turn_names_a_capture_made_by_an_echo() -> None:
    lines, _ = chess_trace.trace("5", "1", seed=1, turns=1)
    assert len(lines) == 1
    assert "by k3-k4-" in lines[0] or "by i3-i4-" in lines[0] or "by j3-j4-" in lines[0]
    assert " and its echo" in lines[0]


def test_an_opening_echo_capture_is_told_from_a_quiet_first_turn() -> None:
    rules = get_rules("diffusion-chess")
    start = rules.initial_state()
    assert not chess_openings.opens_with_capture(rules, start)
    # docs/DIFFUSION-CHESS-STRATEGY.md, section 6: a stone of White's central nine and its
    # echo take j17 on White's first turn.
    taken = rules.play(rules.play(start, "i3-i4-i5-i6-i7-i8-i9-i10-j10"), "echo")
    assert chess_openings.opens_with_capture(rules, taken)
