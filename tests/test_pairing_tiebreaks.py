"""Tie-breaks: crosstables worked out by hand, byes and forfeits by FIDE's virtual opponent."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from tournaments.pairing.errors import PairingError
from tournaments.pairing.tiebreaks import (
    Game,
    buchholz,
    buchholz_cut1,
    sonneborn_berger,
    tiebreaks,
)


def played(points: float, opponent: str) -> Game:
    return Game(points, opponent)


def bye(points: float = 1.0) -> Game:
    return Game(points)


def forfeit(points: float, opponent: str) -> Game:
    return Game(points, opponent, played=False)


# Three rounds, five players, one bye a round.
#   R1: A-B 1-0, C-D 1/2, E bye.  R2: A-C 1-0, B-E 0-1, D bye.  R3: A-E 1/2, B-D 1-0, C bye.
# Scores: A 2.5, B 1, C 1.5, D 1.5, E 2.5. As opponents (own byes as draws): A 2.5, B 1,
# C 1, D 1, E 2. Virtual opponents (SPR + 1 - SfPR + (n - R)/2): E's in R1 0+0+1 = 1,
# D's in R2 0.5+0+0.5 = 1, C's in R3 0.5+0+0 = 0.5.
WITH_BYES = {
    "A": [played(1, "B"), played(1, "C"), played(0.5, "E")],
    "B": [played(0, "A"), played(0, "E"), played(1, "D")],
    "C": [played(0.5, "D"), played(0, "A"), bye()],
    "D": [played(0.5, "C"), bye(), played(0, "B")],
    "E": [bye(), played(1, "B"), played(0.5, "A")],
}
# player: (Buchholz, Cut-1, Sonneborn-Berger)
WITH_BYES_EXPECTED = {
    "A": (1 + 1 + 2, 1 + 2, 1 + 1 + 0.5 * 2),
    "B": (2.5 + 2 + 1, 2.5 + 2, 1 * 1),
    "C": (1 + 2.5 + 0.5, 1 + 2.5, 0.5 * 1 + 1 * 0.5),
    "D": (1 + 1 + 1, 1 + 1, 0.5 * 1 + 1 * 1),
    "E": (1 + 1 + 2.5, 1 + 2.5, 1 * 1 + 1 * 1 + 0.5 * 2.5),
}

# Two rounds, a forfeit: R1 A wins against B by forfeit, C-D 1-0; R2 A-C 0-1, B-D 1/2.
# As opponents: A 0.5 (forfeit as a draw), B 1, C 2, D 0.5. Virtual opponents in R1: A's
# 0 + 0 + 0.5 = 0.5, B's 0 + 1 + 0.5 = 1.5.
WITH_FORFEIT = {
    "A": [forfeit(1, "B"), played(0, "C")],
    "B": [forfeit(0, "A"), played(0.5, "D")],
    "C": [played(1, "D"), played(1, "A")],
    "D": [played(0, "C"), played(0.5, "B")],
}
WITH_FORFEIT_EXPECTED = {
    "A": (0.5 + 2, 2, 1 * 0.5),
    "B": (1.5 + 0.5, 1.5, 0.5 * 0.5),
    "C": (0.5 + 0.5, 0.5, 1 * 0.5 + 1 * 0.5),
    "D": (2 + 1, 2, 0.5 * 1),
}

# Every game played: the plain sums. A beat B and C, drew D; the rest drew each other.
PLAIN = {
    "A": [played(1, "B"), played(1, "C"), played(0.5, "D")],
    "B": [played(0, "A"), played(0.5, "D"), played(0.5, "C")],
    "C": [played(0.5, "D"), played(0, "A"), played(0.5, "B")],
    "D": [played(0.5, "C"), played(0.5, "B"), played(0.5, "A")],
}
# Scores: A 2.5, B 1, C 1, D 1.5.
PLAIN_EXPECTED = {
    "A": (1 + 1 + 1.5, 1 + 1.5, 1 + 1 + 0.75),
    "B": (2.5 + 1.5 + 1, 2.5 + 1.5, 0.75 + 0.5),
    "C": (1.5 + 2.5 + 1, 2.5 + 1.5, 0.75 + 0.5),
    "D": (1 + 1 + 2.5, 1 + 2.5, 0.5 + 0.5 + 1.25),
}

# A round robin of five: each player sits out one round (None: no round of his at all). The
# classical Sonneborn-Berger, worked out by hand in tests/test_tournaments_standings.py.
# R1 2-5 1-0, 3-4 1-0, 1 out; R2 5-3 =, 1-2 1-0, 4 out; R3 3-1 =, 4-5 0-1, 2 out;
# R4 1-4 0-1, 2-3 1-0, 5 out; R5 4-2 =, 5-1 0-1, 3 out. Scores 2.5, 2.5, 2, 1.5, 1.5.
ROUND_ROBIN = {
    "1": [None, played(1, "2"), played(0.5, "3"), played(0, "4"), played(1, "5")],
    "2": [played(1, "5"), played(0, "1"), None, played(1, "3"), played(0.5, "4")],
    "3": [played(1, "4"), played(0.5, "5"), played(0.5, "1"), played(0, "2"), None],
    "4": [played(0, "3"), None, played(0, "5"), played(1, "1"), played(0.5, "2")],
    "5": [played(0, "2"), played(0.5, "3"), played(1, "4"), None, played(0, "1")],
}
ROUND_ROBIN_EXPECTED = {
    "1": (2.5 + 2 + 1.5 + 1.5, 2.5 + 2 + 1.5, 2.5 + 1 + 1.5),
    "2": (1.5 + 2.5 + 2 + 1.5, 2.5 + 2 + 1.5, 1.5 + 2 + 0.75),
    "3": (1.5 + 1.5 + 2.5 + 2.5, 2.5 + 2.5 + 1.5, 1.5 + 0.75 + 1.25),
    "4": (2 + 1.5 + 2.5 + 2.5, 2.5 + 2.5 + 2, 2.5 + 1.25),
    "5": (2.5 + 2 + 1.5 + 2.5, 2.5 + 2.5 + 2, 1 + 1.5),
}

CASES = [
    pytest.param(WITH_BYES, WITH_BYES_EXPECTED, id="byes"),
    pytest.param(WITH_FORFEIT, WITH_FORFEIT_EXPECTED, id="forfeit"),
    pytest.param(PLAIN, PLAIN_EXPECTED, id="plain"),
    pytest.param(ROUND_ROBIN, ROUND_ROBIN_EXPECTED, id="round robin sit-outs"),
]


@pytest.mark.parametrize(("table", "expected"), CASES)
def test_tiebreaks_count_unplayed_games_against_fides_virtual_opponent(
    table: dict[Hashable, list[Game | None]], expected: dict[str, tuple[float, float, float]]
) -> None:
    scores = tiebreaks(table)
    for player, (bh, cut1, sb) in expected.items():
        assert scores[player].buchholz == pytest.approx(bh), player
        assert scores[player].buchholz_cut1 == pytest.approx(cut1), player
        assert scores[player].sonneborn_berger == pytest.approx(sb), player


def test_the_single_tiebreak_functions_agree_with_the_table() -> None:
    table: dict[Hashable, list[Game]] = dict(WITH_BYES)
    assert buchholz(table, "B") == 5.5
    assert buchholz_cut1(table, "B") == 4.5
    assert sonneborn_berger(table, "E") == 3.25


def test_a_crosstable_with_a_missing_round_is_refused() -> None:
    with pytest.raises(PairingError):
        tiebreaks({"A": [played(1, "B")], "B": []})


def test_a_game_against_someone_outside_the_table_is_refused() -> None:
    with pytest.raises(PairingError):
        tiebreaks({"A": [played(1, "Z")]})
