"""Positions and games as text (games/rules/notation.py, docs/NOTATION.md): the spellings of
known positions, exact round trips from any position play reaches, and a clear refusal for
text that spells no position of the game (the position editor's check)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import get_rules
from games.rules.notation import (
    BadNotation,
    game_text,
    parse_game,
    parse_position,
    position_text,
)

GAMES = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("zigzag", {}),
    ("zigzag", {"pits": 8, "seeds": 7}),
    ("zigzag", {"pits": 26, "seeds": 5}),
    ("diffusion-chess", {}),
]
EMPTY_ROW = "19"
CHESS_START = (
    "XX2XX2XXX2XX2XX/XX2XX2XkX2XX2XX/8XXX8/19/2XX2XX3XX2XX2/2XX2XX3XX2XX2/19/19/19/19/19/19/19/"
    "2OO2OO3OO2OO2/2OO2OO3OO2OO2/19/8OOO8/OO2OO2OKO2OO2OO/OO2OO2OOO2OO2OO w 1 4"
)


def rules_of(slug: str, options: dict[str, int]) -> Any:
    return get_rules(slug, **options)


def random_line(rules: Any, seed: int, plies: int) -> tuple[list[Any], list[str]]:
    """The positions of a game of random moves, from the start, and the moves."""
    rng = random.Random(seed)
    state = rules.initial_state()
    states = [state]
    moves: list[str] = []
    for _ in range(plies):
        if rules.outcome(state) is not None:
            break
        if hasattr(rules, "random_move"):
            move = rules.random_move(state, rng)
        else:
            move = rng.choice(list(rules.legal_moves(state)))
        state = rules.play(state, move)
        states.append(state)
        moves.append(rules.canonical_move(states[-2], move))
    return states, moves


@pytest.mark.parametrize(
    ("slug", "options", "text"),
    [
        ("diffusion", {}, "4,4,4,4,4,4/4,4,4,4,4,4 0,0 1"),
        (
            "four-rank-diffusion",
            {},
            "4,4,4,4,4,4,4,4/5,5,5,5,5,5,5,5/5,5,5,5,5,5,5,5/4,4,4,4,4,4,4,4 0,0 1",
        ),
        ("zigzag", {}, "5,5,5,5,5,5/5,5,5,5,5,5 0,0 1"),
        ("zigzag", {"pits": 4, "seeds": 3}, "3,3,3,3/3,3,3,3 0,0 1"),
        ("diffusion-chess", {}, CHESS_START),
    ],
)
def test_the_start_is_spelled_in_the_shortest_form(
    slug: str, options: dict[str, int], text: str
) -> None:
    rules = rules_of(slug, options)
    assert position_text(rules, rules.initial_state()) == text
    assert parse_position(rules, text) == rules.initial_state()


def test_a_mid_turn_chess_position_carries_the_turn_so_far() -> None:
    rules = rules_of("diffusion-chess", {})
    state = rules.play(rules.initial_state(), "c6-c7")
    text = position_text(rules, state)
    fields = text.split()
    # The board, side, turn, moves left; then start groups, moved, sizes, last move, result.
    assert fields[1:] == ["w", "1", "3", "9", "c7", "c5=4,c7=4,d5=4,d6=4", "c6-c7", "-"]
    assert parse_position(rules, text) == state
    assert rules.play(parse_position(rules, text), "echo") == rules.play(state, "echo")


def test_a_zigzag_position_after_a_move_carries_its_history() -> None:
    rules = rules_of("zigzag", {})
    state = rules.play(rules.initial_state(), next(iter(rules.legal_moves(rules.initial_state()))))
    text = position_text(rules, state)
    assert text.endswith("- 0 - 1:5,5,5,5,5,5/5,5,5,5,5,5:-")
    assert parse_position(rules, text) == state


@pytest.mark.parametrize(("slug", "options"), GAMES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 120))
def test_every_position_play_reaches_reads_back_as_itself(
    slug: str, options: dict[str, int], seed: int, plies: int
) -> None:
    rules = rules_of(slug, options)
    for state in random_line(rules, seed, plies)[0]:
        text = position_text(rules, state)
        assert "\n" not in text and len(text.split()) >= 3
        assert parse_position(rules, text) == state


@pytest.mark.parametrize(("slug", "options"), GAMES)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 80))
def test_a_games_text_reads_back_as_its_moves(
    slug: str, options: dict[str, int], seed: int, plies: int
) -> None:
    rules = rules_of(slug, options)
    _, moves = random_line(rules, seed, plies)
    assert parse_game(rules, game_text(moves)) == moves


def test_the_sites_own_move_list_reads_as_a_game() -> None:
    rules = rules_of("diffusion", {})
    moves = parse_game(rules, "   1. (1) i\n   2. (2) A\n   3. (1) J")
    assert moves == ["I", "A", "J"]


@pytest.mark.parametrize(
    ("slug", "text", "says"),
    [
        ("diffusion", "", "empty"),
        ("diffusion", "4,4,4,4,4,4/4,4,4,4,4,4 0,0", "3 fields"),
        ("diffusion", "4,4,4,4,4,4/4,4,4,4,4,4 0,0 3", "1 or 2"),
        ("diffusion", "4,4,4,4,4,4/4,4,4,4,4,x 0,0 1", "whole number"),
        ("diffusion", "4,4,4,4,4,4/4,4,4,4,4,5 0,0 1", "holds 49 stones, not 48"),
        ("diffusion", "4,4,4,4,4/4,4,4,4,4,4,4 0,0 1", "rows must be"),
        ("diffusion", "0,0,0,0,0,0/0,0,0,0,0,0 24,24 1", "both blocks are empty"),
        ("zigzag", "5,5,5,5,5,5/5,5,5,5,5,5 0 1", "two numbers"),
        ("zigzag", "5,5,5,5,5,5/5,5,5,5,5,4 1,0 1", "last_capturer"),
        ("zigzag", "5,5,5,5,5,5/5,5,5,5,5,5 0,0 1 A", "not a pit of the player to move"),
        ("diffusion-chess", "19/" * 18 + "19 w 1 4", "king"),
        ("diffusion-chess", CHESS_START.replace(" w ", " b "), "to_move"),
        ("diffusion-chess", CHESS_START.replace("/19/", "/18/", 1), "row 16 has 18 cells"),
        ("diffusion-chess", CHESS_START.replace("8XXX8", "8XKX8"), "two kings"),
        ("diffusion-chess", CHESS_START.replace("8XXX8", "8XYX8"), "'Y' is not O, X, K, k"),
        ("diffusion-chess", CHESS_START.replace(" 4", " 9"), "moves_left"),
        ("diffusion-chess", CHESS_START + " 8 - - - -", "start_groups must count"),
        ("diffusion-chess", CHESS_START + " 9 - -", "five fields follow"),
        ("diffusion-chess", CHESS_START.replace("OKO", "OOO").replace("8OOO8", "8OKO8"), None),
        (
            "diffusion-chess",
            "k18/19/19/19/19/19/19/19/19/19/19/19/19/19/19/19/19/19/KO17 w 1 4",
            "result",
        ),
    ],
)
def test_text_that_spells_no_position_is_refused_with_a_reason(
    slug: str, text: str, says: str | None
) -> None:
    """The editor's check, as a table: the position, and what the refusal says (None: the
    position is fine)."""
    rules = rules_of(slug, {})
    if says is None:
        assert rules.to_move(parse_position(rules, text)) in (1, 2)
        return
    with pytest.raises(BadNotation, match=says):
        parse_position(rules, text)


@pytest.mark.parametrize("text", [None, 12, "x" * 200_001])
def test_what_is_not_a_line_of_text_is_refused(text: object) -> None:
    with pytest.raises(BadNotation):
        parse_position(rules_of("diffusion", {}), text)


def test_a_game_names_its_first_illegal_move() -> None:
    rules = rules_of("diffusion", {})
    with pytest.raises(BadNotation, match=r"move 2 \(Q\)"):
        parse_game(rules, "1. I 2. Q 3. A")
