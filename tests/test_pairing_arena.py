"""Arena: lichess's streak scoring and the pairing of a wave of waiting players."""

from __future__ import annotations

from collections.abc import Hashable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.pairing.arena import ArenaPlayer, ArenaWave, pair_wave, score_sheet
from tournaments.pairing.errors import PairingError

# (results in order, points per game, on fire after the last): lichess arena/Sheet.scala.
SHEETS = [
    ("", "", False),
    ("W", "2", False),
    ("D L", "1 0", False),
    ("W W", "2 2", True),  # two wins light the fire; they score normally themselves
    ("W W W W", "2 2 4 4", True),
    ("W W D", "2 2 2", False),  # a draw on fire scores double, and puts the fire out
    ("W W D W", "2 2 2 2", False),
    ("W W L W W W", "2 2 0 2 2 4", True),
    ("W W W L D", "2 2 4 0 1", False),
    ("L W W D D", "0 2 2 2 1", False),
]
WORDS = {"W": "win", "D": "draw", "L": "loss"}


@pytest.mark.parametrize(("games", "points", "on_fire"), SHEETS)
def test_a_sheet_scores_two_a_win_one_a_draw_and_double_on_fire(
    games: str, points: str, on_fire: bool
) -> None:
    sheet = score_sheet(WORDS[g] for g in games.split())  # type: ignore[misc]
    expected = tuple(int(p) for p in points.split())
    assert sheet.points == expected
    assert sheet.total == sum(expected)
    assert sheet.on_fire is on_fire


def test_a_sheet_refuses_an_unknown_result() -> None:
    with pytest.raises(PairingError):
        score_sheet(["win", "resign"])  # type: ignore[list-item]


def player(
    name: str, rating: int, score: int = 0, last: str | None = None, colours: str = ""
) -> ArenaPlayer:
    names = {"w": "white", "b": "black"}
    return ArenaPlayer(name, rating, score, last, tuple(names[c] for c in colours))  # type: ignore[misc]


def games(wave: ArenaWave) -> set[frozenset[Hashable]]:
    return {frozenset(pair) for pair in wave.pairs}


# (waiting players, the pairs expected): names in standings order unless said otherwise.
WAVES = [
    # Neighbours in the standings (score, then rating) meet.
    (
        [player("a", 1500, 10), player("b", 2000, 4), player("c", 1400, 10), player("d", 1600, 4)],
        {("a", "c"), ("b", "d")},
    ),
    # b just played a: a takes c, b takes d.
    (
        [
            player("a", 2000, last="b"),
            player("b", 1900, last="a"),
            player("c", 1800),
            player("d", 1700),
        ],
        {("a", "c"), ("b", "d")},
    ),
    # c and d just met and nobody is left below them: they exchange with the pair above.
    (
        [
            player("a", 2000),
            player("b", 1900),
            player("c", 1800, last="d"),
            player("d", 1700, last="c"),
        ],
        {("a", "c"), ("b", "d")},
    ),
    # The rule holds when only one of the two remembers the game.
    (
        [player("a", 2000), player("b", 1900, last="a"), player("c", 1800), player("d", 1700)],
        {("a", "c"), ("b", "d")},
    ),
    # Two players waiting alone may meet again rather than wait for ever.
    ([player("a", 2000, last="b"), player("b", 1900, last="a")], {("a", "b")}),
]


@pytest.mark.parametrize(("waiting", "expected"), WAVES)
def test_a_wave_pairs_neighbours_and_never_the_last_opponent_when_another_is_free(
    waiting: list[ArenaPlayer], expected: set[tuple[str, str]]
) -> None:
    assert games(pair_wave(waiting)) == {frozenset(pair) for pair in expected}


def test_the_odd_one_out_is_the_lowest_placed_and_waits() -> None:
    wave = pair_wave([player("a", 2000), player("b", 1900), player("c", 1800)])
    assert games(wave) == {frozenset(("a", "b"))}
    assert wave.unpaired == ("c",)


# (colours of a, colours of b, who gets white)
COLOURS = [
    ("w", "", "b"),  # b has had white less often
    ("wb", "bw", "a"),  # even: a had black more recently
    ("bw", "wb", "b"),
    ("bbw", "bww", "a"),
    ("", "", "a"),  # nothing to go by: the better placed
]


@pytest.mark.parametrize(("colours_a", "colours_b", "white"), COLOURS)
def test_white_goes_to_who_had_it_less_then_to_who_had_black_more_recently(
    colours_a: str, colours_b: str, white: str
) -> None:
    wave = pair_wave(
        [player("a", 2000, colours=colours_a), player("b", 1900, colours=colours_b), player("c", 1)]
    )
    assert wave.pairs[0][0] == white


def test_a_player_waiting_twice_is_refused() -> None:
    with pytest.raises(PairingError):
        pair_wave([player("a", 1500), player("a", 1500)])


@st.composite
def waves(draw: st.DrawFn) -> list[ArenaPlayer]:
    count = draw(st.integers(min_value=0, max_value=40))
    ids = list(range(count))
    opponents = draw(st.permutations(ids))
    return [
        ArenaPlayer(
            i,
            draw(st.integers(1000, 2500)),
            draw(st.integers(0, 20)),
            # A derangement of sorts: pairs (i, opponents[i]) as last games, both ways or not.
            opponents[i] if draw(st.booleans()) and opponents[i] != i else None,
        )
        for i in ids
    ]


@settings(max_examples=60, deadline=None)
@given(waiting=waves())
def test_a_wave_seats_everyone_once_and_pairs_no_rematch_when_more_than_two_wait(
    waiting: list[ArenaPlayer],
) -> None:
    wave = pair_wave(waiting)
    seated = [p for pair in wave.pairs for p in pair] + list(wave.unpaired)
    assert sorted(seated) == sorted(p.id for p in waiting)  # type: ignore[type-var]
    last = {p.id: p.last_opponent for p in waiting}
    if len(waiting) > 2:
        assert not any(last[a] == b or last[b] == a for a, b in wave.pairs)
    # The rule leaves nobody waiting but the odd one out, unless two at the very end met.
    assert len(wave.unpaired) <= 3
