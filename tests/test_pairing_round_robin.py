"""Round robin: the published FIDE Berger tables, and what every table must satisfy."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.pairing.errors import PairingError
from tournaments.pairing.round_robin import berger_table, round_robin


def boards(text: str) -> tuple[tuple[int, int], ...]:
    """'1-6 2-5 3-4' as the table prints a round: (white, black) by board."""
    return tuple(
        (int(white), int(black)) for white, black in (pair.split("-") for pair in text.split())
    )


# FIDE Handbook C.05, Annex 1 ("Berger Tables for Round-Robin Tournaments"), copied row by row.
PUBLISHED = {
    4: ["1-4 2-3", "4-3 1-2", "2-4 3-1"],
    6: ["1-6 2-5 3-4", "6-4 5-3 1-2", "2-6 3-1 4-5", "6-5 1-4 2-3", "3-6 4-2 5-1"],
    8: [
        "1-8 2-7 3-6 4-5",
        "8-5 6-4 7-3 1-2",
        "2-8 3-1 4-7 5-6",
        "8-6 7-5 1-4 2-3",
        "3-8 4-2 5-1 6-7",
        "8-7 1-6 2-5 3-4",
        "4-8 5-3 6-2 7-1",
    ],
}


@pytest.mark.parametrize("players", sorted(PUBLISHED))
def test_the_table_is_the_published_fide_berger_table(players: int) -> None:
    assert berger_table(players) == tuple(boards(row) for row in PUBLISHED[players])


def test_an_odd_field_plays_the_next_table_with_the_dummys_opponent_sitting_out() -> None:
    rounds = round_robin(5)
    # The 6-player table with 6 as the dummy: 1-6 makes 1 sit out round 1, 6-4 makes 4 sit out.
    assert [r.bye for r in rounds] == [1, 4, 2, 5, 3]
    assert rounds[0].pairs == boards("2-5 3-4")
    assert rounds[1].pairs == boards("5-3 1-2")


def test_the_second_cycle_of_a_double_round_robin_reverses_the_colours() -> None:
    rounds = round_robin(4, double=True)
    assert [r.number for r in rounds] == [1, 2, 3, 4, 5, 6]
    assert [r.pairs for r in rounds[3:]] == [
        boards("4-1 3-2"),
        boards("3-4 2-1"),
        boards("4-2 1-3"),
    ]


@pytest.mark.parametrize("players", [0, 1, 1001])
def test_a_field_that_cannot_play_a_round_robin_is_refused(players: int) -> None:
    with pytest.raises(PairingError):
        round_robin(players)


def test_a_berger_table_is_only_for_an_even_number_of_players() -> None:
    with pytest.raises(PairingError):
        berger_table(5)


@settings(max_examples=30, deadline=None)
@given(players=st.integers(min_value=2, max_value=30), double=st.booleans())
def test_every_pair_meets_once_per_cycle_with_each_colour_in_a_double(
    players: int, double: bool
) -> None:
    rounds = round_robin(players, double=double)
    cycles = 2 if double else 1
    assert len(rounds) == cycles * (players - 1 + players % 2)
    games = [pair for r in rounds for pair in r.pairs]
    meetings = Counter(frozenset(pair) for pair in games)
    assert set(meetings) == {frozenset(p) for p in combinations(range(1, players + 1), 2)}
    assert set(meetings.values()) == {cycles}
    if double:
        assert len(set(games)) == len(games)  # (a, b) and (b, a): once with each colour


@settings(max_examples=30, deadline=None)
@given(players=st.integers(min_value=2, max_value=30))
def test_nobody_plays_twice_in_a_round_and_only_the_odd_one_out_rests(players: int) -> None:
    for r in round_robin(players):
        seated = [p for pair in r.pairs for p in pair] + ([r.bye] if r.bye else [])
        assert sorted(seated) == list(range(1, players + 1))
        assert (r.bye is None) == (players % 2 == 0)


@settings(max_examples=15, deadline=None)
@given(half=st.integers(min_value=1, max_value=15))
def test_in_a_single_round_robin_of_an_even_field_whites_and_blacks_differ_by_one(
    half: int,
) -> None:
    players = 2 * half
    balance = Counter[int]()
    for r in round_robin(players):
        for white, black in r.pairs:
            balance[white] += 1
            balance[black] -= 1
    assert all(abs(balance[p]) <= 1 for p in range(1, players + 1))
