"""Which seeks pair: lobby/matching.py, a pure function tested without a database."""

from __future__ import annotations

import pytest

from lobby.matching import GameChoice, SeekView, candidates, shared_game

DIFFUSION = GameChoice.of("diffusion", {})
FOUR_RANK = GameChoice.of("four-rank-diffusion", {})
ZIGZAG_6_5 = GameChoice.of("zigzag", {"pits": 6, "seeds": 5})
ZIGZAG_8_7 = GameChoice.of("zigzag", {"seeds": 7, "pits": 8})


def seek(seek_id: int, user_id: int, *games: GameChoice, time_control: str = "") -> SeekView:
    return SeekView(seek_id=seek_id, user_id=user_id, games=games, time_control=time_control)


@pytest.mark.parametrize(
    ("older", "newer", "expected"),
    [
        # same game, different users
        (seek(1, 10, DIFFUSION), seek(2, 20, DIFFUSION), DIFFUSION),
        # never with yourself
        (seek(1, 10, DIFFUSION), seek(2, 10, DIFFUSION), None),
        # different games
        (seek(1, 10, DIFFUSION), seek(2, 20, FOUR_RANK), None),
        # same game, different options
        (seek(1, 10, ZIGZAG_6_5), seek(2, 20, ZIGZAG_8_7), None),
        # options compare regardless of the order they were written in
        (
            seek(1, 10, ZIGZAG_8_7),
            seek(2, 20, GameChoice.of("zigzag", {"pits": 8, "seeds": 7})),
            ZIGZAG_8_7,
        ),
        # several games: the first shared one in the older seek's order
        (
            seek(1, 10, FOUR_RANK, ZIGZAG_6_5, DIFFUSION),
            seek(2, 20, DIFFUSION, ZIGZAG_6_5),
            ZIGZAG_6_5,
        ),
        # different time controls never pair
        (seek(1, 10, DIFFUSION, time_control="5+3"), seek(2, 20, DIFFUSION), None),
        (
            seek(1, 10, DIFFUSION, time_control="5+3"),
            seek(2, 20, DIFFUSION, time_control="5+3"),
            DIFFUSION,
        ),
    ],
)
def test_shared_game(older: SeekView, newer: SeekView, expected: GameChoice | None) -> None:
    assert shared_game(older, newer) == expected


def test_candidates_come_oldest_first_and_skip_the_seek_itself() -> None:
    me = seek(5, 50, DIFFUSION, FOUR_RANK)
    waiting = [
        seek(1, 10, FOUR_RANK),
        seek(2, 20, ZIGZAG_6_5),
        seek(3, 50, DIFFUSION),  # mine, from another tab
        me,
        seek(4, 40, DIFFUSION),
    ]
    found = candidates(me, waiting)
    assert [(other.seek_id, choice) for other, choice in found] == [
        (1, FOUR_RANK),
        (4, DIFFUSION),
    ]


def test_the_older_seek_decides_between_shared_games() -> None:
    older = seek(1, 10, FOUR_RANK, DIFFUSION)
    newer = seek(2, 20, DIFFUSION, FOUR_RANK)
    assert candidates(newer, [older]) == [(older, FOUR_RANK)]
    assert candidates(older, [newer]) == [(newer, FOUR_RANK)]
