"""Diffusion Chess: RULES.md section 4, with every position drawn in the test.

Diagrams are drawn as White sees the board, top row first, one symbol a cell: `.` empty,
`O` White's stone, `K` White's king, `X` Black's stone, `k` Black's king. The bottom-left
symbol lands on a1; the rest of the 19x19 board is empty. The group sizes of the start of
the turn are worked out here by a plain flood fill, so the engine's own bookkeeping is
checked when it loads the position.
"""

from __future__ import annotations

import json
from textwrap import dedent
from typing import Any

import pytest

import games.rules.chess  # noqa: F401  (registers the game)
from games.rules import IllegalMove, Outcome, get_rules

RULES: Any = get_rules("diffusion-chess")
FILES = "abcdefghijklmnopqrs"


def name(file: int, row: int) -> str:
    return f"{FILES[file]}{row + 1}"


def groups(stones: set[str]) -> list[set[str]]:
    """The stones split into orthogonally connected groups."""
    left = set(stones)
    found = []
    while left:
        group = {left.pop()}
        frontier = list(group)
        while frontier:
            cell = frontier.pop()
            file, row = FILES.index(cell[0]), int(cell[1:]) - 1
            for df, dr in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                if 0 <= file + df < 19 and 0 <= row + dr < 19 and name(file + df, row + dr) in left:
                    left.remove(name(file + df, row + dr))
                    group.add(name(file + df, row + dr))
                    frontier.append(name(file + df, row + dr))
        found.append(group)
    return found


def position_json(diagram: str, to_move: int = 1, turn: int | None = None) -> dict[str, Any]:
    """The JSON of the start of a turn with the stones drawn in `diagram`."""
    rows = [line.split() for line in dedent(diagram).strip().splitlines()]
    white: set[str] = set()
    black: set[str] = set()
    kings = {}
    for row, line in enumerate(reversed(rows)):
        for file, symbol in enumerate(line):
            cell = name(file, row)
            assert symbol in ".OKXk", symbol
            if symbol in "OK":
                white.add(cell)
            elif symbol in "Xk":
                black.add(cell)
            if symbol == "K":
                kings["white"] = cell
            elif symbol == "k":
                kings["black"] = cell
    if turn is None:
        turn = 3 if to_move == 1 else 2  # a five-move turn
    white_groups, black_groups = groups(white), groups(black)
    return {
        "white": sorted(white),
        "black": sorted(black),
        "kings": kings,
        "to_move": to_move,
        "turn": turn,
        "moves_left": 4 if turn == 1 else 5,
        "moved": [],
        "sizes": {cell: len(g) for g in white_groups + black_groups for cell in g},
        "start_groups": len(white_groups if to_move == 1 else black_groups),
        "last_move": None,
        "result": None,
    }


def position(diagram: str, to_move: int = 1, turn: int | None = None) -> Any:
    """The start of a turn with the stones drawn in `diagram` (see the module docstring)."""
    return RULES.from_json(position_json(diagram, to_move, turn))


def play(state: Any, *moves: str) -> Any:
    for move in moves:
        state = RULES.play(state, move)
    return state


def white_stones(state: Any) -> set[str]:
    return set(RULES.to_json(state)["white"])


def black_stones(state: Any) -> set[str]:
    return set(RULES.to_json(state)["black"])


def assert_over(state: Any, outcome: Outcome) -> None:
    """The game is over with `outcome`: nothing more can be played or offered."""
    assert RULES.outcome(state) == outcome
    assert list(RULES.legal_moves(state)) == []
    assert RULES.client_moves(state) == {"destinations": {}, "echo": False, "groups": None}
    with pytest.raises(IllegalMove, match=r"^the game is over$"):
        RULES.play(state, "echo")
    assert RULES.from_json(RULES.to_json(state)) == state


# White: the c2-f2 line (4 stones: 3 steps), a lone stone on a4, the king's square a9-b10.
# Black: lone stones on d5 and e4, a pair on g4-h4, the king's pair on i1-j1.
ARENA = """
    O O . . . . . . . .
    K O . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . X . . . . . .
    O . . . X . X X . .
    . . . . . . . . . .
    . . O O O O . . . .
    . . . . . . . . X k
"""

# White: the c1-c3 line (3 stones), the f1-g2 square (4), the king's pair a6-b6.
# Black: the e3-g3 line (3 stones), the king's pair j1-j2.
CAPTURES = """
    K O . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . O . X X X . . .
    . . O . . O O . . k
    . . O . . O O . . X
"""

# White: the c2-f2 line (3 steps), a lone stone on a5, the king's square a9-b10.
# Black: the h5-h8 line (4 stones: White's 4s may take it), a lone stone on e5, the
# king's pair i1-j1.
ECHOES = """
    O O . . . . . . . .
    K O . . . . . . . .
    . . . . . . . X . .
    . . . . . . . X . .
    . . . . . . . X . .
    O . . . X . . X . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . O O O O . . . .
    . . . . . . . . X k
"""


# --- the opening ------------------------------------------------------------------------


def test_it_sets_up_41_stones_a_side_in_nine_groups_with_the_kings_in_the_middle() -> None:
    data = RULES.to_json(RULES.initial_state())
    assert len(data["white"]) == len(data["black"]) == 41
    assert data["kings"] == {"white": "j2", "black": "j18"}
    assert len(groups(set(data["white"]))) == len(groups(set(data["black"]))) == 9
    assert data["sizes"]["j2"] == data["sizes"]["i1"] == data["sizes"]["k19"] == 9
    assert data["sizes"]["a1"] == data["sizes"]["c5"] == data["sizes"]["q15"] == 4
    assert data["start_groups"] == 9
    # Black's setup is White's turned half round.
    turned = {name(18 - FILES.index(c[0]), 19 - int(c[1:])) for c in data["white"]}
    assert turned == set(data["black"])
    assert (data["to_move"], data["turn"], data["moves_left"]) == (1, 1, 4)
    assert data["moved"] == [] and data["last_move"] is None and data["result"] is None


def test_whites_first_turn_has_four_moves_then_black_has_five() -> None:
    state = play(RULES.initial_state(), "c6-c7-c8-c9", "g6-g7-g8-g9", "l6-l7-l8-l9")
    assert RULES.to_move(state) == 1
    assert RULES.to_json(state)["moves_left"] == 1
    state = RULES.play(state, "p6-p7-p8-p9")
    data = RULES.to_json(state)
    assert (data["to_move"], data["turn"], data["moves_left"]) == (2, 2, 5)
    assert data["start_groups"] == 9  # Black's groups, counted as its turn starts
    assert data["sizes"]["c9"] == 1 and data["sizes"]["c5"] == 3  # sizes counted afresh
    assert data["moved"] == [] and data["last_move"] is None
    assert RULES.outcome(state) is None


def test_the_groups_the_turn_must_grow_are_offered_as_they_change() -> None:
    state = RULES.initial_state()
    groups = RULES.client_moves(state)["groups"]
    assert (groups["at_turn_start"], groups["now"], groups["needed"]) == (9, 9, 10)
    assert ["c5", "c6", "d5", "d6"] in groups["members"]
    assert ["i1", "i2", "i3", "j1", "j2", "j3", "k1", "k2", "k3"] in groups["members"]
    # c6 leaves its group of 4 and stands alone on c9: White now has one group more.
    state = RULES.play(state, "c6-c7-c8-c9")
    groups = RULES.client_moves(state)["groups"]
    assert (groups["at_turn_start"], groups["now"], groups["needed"]) == (9, 10, 10)
    assert ["c9"] in groups["members"] and ["c5", "d5", "d6"] in groups["members"]
    assert sorted(cell for group in groups["members"] for cell in group) == state_cells(state)


def state_cells(state: object) -> list[str]:
    """White's stones in the state's JSON (White is to move in these positions)."""
    return sorted(RULES.to_json(state)["white"])


def test_the_opening_offers_every_reachable_cell_with_a_shortest_path_and_no_echo() -> None:
    moves = RULES.client_moves(RULES.initial_state())
    assert moves["echo"] is False
    destinations = moves["destinations"]
    assert "j2" not in destinations  # the king is walled in by its own square
    assert destinations["j3"]["j4"] == "j3-j4"
    assert destinations["j3"]["j11"] == "j3-j4-j5-j6-j7-j8-j9-j10-j11"  # a group of 9: 8 steps
    assert "j12" not in destinations["j3"]
    # c6 (a group of 4: 3 steps) walks north and west of its square, never through it.
    assert set(destinations["c6"]) == {
        "c7", "c8", "c9", "b6", "b7", "b8", "d7", "d8", "e7", "a6", "a7", "b5", "a5", "b4",
    }  # fmt: skip
    assert destinations["c6"]["e7"] == "c6-c7-d7-e7"


# White's 32nd turn without a capture: 9 groups at the start, one more every turn, so 40
# groups now: 39 lone stones (stranded: they cannot move) and the king's pair. The only
# moves split the pair, which strands the king. So no game without captures lasts
# longer than 32 turns a side; the bound follows from the rules, it is not a rule itself.
THIRTY_SECOND_TURN = """
    . . . . . . . . . . . . . . . . . k X
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    K O . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    O . O . O . O . O . O . O . O . O . .
    . . . . . . . . . . . . . . . . . . .
    O . O . O . O . O . O . O . O . O . O
    . . . . . . . . . . . . . . . . . . .
    O . O . O . O . O . O . O . O . O . O
    . . . . . . . . . . . . . . . . . . .
    O . O . O . O . O . O . O . O . O . O
"""


def test_the_32_turn_bound_follows_from_the_rules() -> None:
    state = position(THIRTY_SECOND_TURN, to_move=1, turn=63)
    assert RULES.to_json(state)["start_groups"] == 40
    moves = sorted(RULES.legal_moves(state))
    assert moves == ["a10-a11", "a10-a9", "b10-b11", "b10-b9", "b10-c10"]
    for move in moves:
        assert RULES.outcome(RULES.play(state, move)) == Outcome(2, "White's king is stranded")


def test_it_lists_every_path_of_every_stone() -> None:
    state = position(
        """
        . . . .
        K O X k
        . . . .
        """
    )
    # A group of 2 walks one step; b2 may take c2 (a group of 2 too).
    assert sorted(RULES.legal_moves(state)) == ["a2-a1", "a2-a3", "b2-b1", "b2-b3", "b2-c2"]
    moves = RULES.client_moves(state)
    assert moves["destinations"] == {
        "a2": {"a1": "a2-a1", "a3": "a2-a3"},
        "b2": {"b1": "b2-b1", "b3": "b2-b3", "c2": "b2-c2"},
    }
    assert moves["echo"] is False


# --- normal moves ------------------------------------------------------------------------


def test_a_stone_walks_up_to_one_step_less_than_its_groups_size() -> None:
    state = position(ARENA)
    after = RULES.play(state, "c2-c3-c4-c5")
    assert "c5" in white_stones(after) and "c2" not in white_stones(after)
    assert RULES.is_legal(state, "c2-c3")
    with pytest.raises(IllegalMove, match=r"^that stone may move at most 3 steps$"):
        RULES.play(state, "c2-c3-c4-c5-c6")


def test_the_allowance_stays_with_the_turn_start_size_when_the_group_breaks_up() -> None:
    state = play(position(ARENA), "f2-f3-f4")  # c2-e2 are now a group of 3
    after = RULES.play(state, "e2-e3-d3-d4")  # still 3 steps: e2 started in a group of 4
    assert "d4" in white_stones(after)
    assert RULES.to_json(after)["sizes"]["d4"] == 4  # the size travels with the stone


def test_a_stone_alone_at_the_start_of_the_turn_stays_stranded_when_others_join_it() -> None:
    state = play(position(ARENA), "c2-b2-a2-a3")  # a3 now touches the lone stone on a4
    assert RULES.to_json(state)["sizes"]["a4"] == 1
    with pytest.raises(IllegalMove, match=r"^that stone is stranded"):
        RULES.play(state, "a4-a5")


@pytest.mark.parametrize(
    ("move", "message"),
    [
        ("c2", "a path must have at least one step"),
        ("z9-z10", "no such cell: z9"),
        ("c2-c3-c33", "no such cell: c33"),
        ("c2--c3", r"no such cell: \(nothing\)"),
        ("", "no move given"),
        ("c2-c4", "steps must be orthogonal and one cell long: c2 to c4"),
        ("c2-d3", "steps must be orthogonal and one cell long: c2 to d3"),
        ("f2-f3-f3", "steps must be orthogonal and one cell long: f3 to f3"),
        ("c2-c3-c2", "the path visits c2 twice"),
        ("c2-c3-b3-b2-c2", "the path visits c2 twice"),
        ("c2-c3-b3-b4-c4-c3", "the path visits c3 twice"),
        ("c3-c4", "there is no stone on c3"),
        ("g4-g5", "g4 holds your opponent's stone"),
        ("c2-d2", "d2 is occupied by your own stone"),
        ("f2-e2-e3", "e2 is occupied by your own stone"),
        ("e2-e3-e4-e5", "e4 is occupied by an opponent's stone: only the last step may capture"),
        ("d2-d3-d4-d5", r"cannot capture: target group \(1\) is smaller than yours \(4\)"),
        ("f2-f3-g3-g4", r"cannot capture: target group \(2\) is smaller than yours \(4\)"),
        ("a4-a5", "that stone is stranded: its group had one stone at the start of the turn"),
        ("echo", "an echo may only follow a normal move of this turn"),
    ],
)
def test_it_refuses_a_bad_path_naming_the_problem(move: str, message: str) -> None:
    state = position(ARENA)
    with pytest.raises(IllegalMove, match=f"^{message}"):
        RULES.play(state, move)
    assert not RULES.is_legal(state, move)


@pytest.mark.parametrize("move", [None, 3, 2.5, ["c2", "c3"], {"c2": "c3"}, b"c2-c3", ("c2",)])
def test_it_refuses_a_move_that_is_not_text(move: Any) -> None:
    state = position(ARENA)
    with pytest.raises(IllegalMove, match=r"^a move is a path such as j3-j4 or the word echo"):
        RULES.play(state, move)
    assert not RULES.is_legal(state, move)


def test_it_reads_moves_in_any_case_with_spaces_around() -> None:
    state = position(ARENA)
    assert RULES.canonical_move(state, "  C2-C3 - c4 ") == "c2-c3-c4"
    assert RULES.canonical_move(state, " Echo ") == "echo"
    assert RULES.play(state, " C2-C3 ") == RULES.play(state, "c2-c3")
    assert RULES.is_legal(state, "C2-c3")


def test_a_stone_moves_once_a_turn() -> None:
    state = play(position(ARENA), "c2-c3")
    assert RULES.to_json(state)["moved"] == ["c3"]
    with pytest.raises(IllegalMove, match=r"^that stone has already moved this turn$"):
        RULES.play(state, "c3-c4")


def test_the_king_walks_like_any_stone_and_stays_the_king() -> None:
    state = play(position(ARENA), "a9-a8-b8")  # b8 touches b9: the king keeps company
    assert RULES.to_json(state)["kings"]["white"] == "b8"
    assert RULES.outcome(state) is None


# --- captures ----------------------------------------------------------------------------


def test_a_capture_swaps_the_captured_stone_onto_the_capturers_previous_cell() -> None:
    after = RULES.play(position(CAPTURES), "c3-d3-e3")
    assert "e3" in white_stones(after) and "c3" not in white_stones(after)
    assert "d3" in black_stones(after) and "e3" not in black_stones(after)
    data = RULES.to_json(after)
    assert data["sizes"]["d3"] == 3 and data["sizes"]["e3"] == 3  # sizes go with the stones
    assert data["moved"] == ["e3"]
    assert data["last_move"] == "c3-d3-e3"


def test_a_one_step_capture_swaps_the_two_stones() -> None:
    state = position(
        """
        K . k .
        O . X .
        . O X .
        . O . .
        """
    )
    after = RULES.play(state, "b2-c2")  # Black's c2-c4 group of 3 is not smaller than 2
    assert "c2" in white_stones(after) and "b2" in black_stones(after)
    assert RULES.outcome(after) is None


def test_a_capture_ends_the_capturers_moves_this_turn() -> None:
    state = play(position(CAPTURES), "c3-d3-e3")
    with pytest.raises(IllegalMove, match=r"^that stone has already moved this turn$"):
        RULES.play(state, "e3-e4")


def test_it_refuses_to_capture_a_smaller_group_or_its_own_stone() -> None:
    state = position(CAPTURES)
    with pytest.raises(
        IllegalMove, match=r"^cannot capture: target group \(3\) is smaller than yours \(4\)$"
    ):
        RULES.play(state, "f2-f3")  # the square (4) against the e3-g3 line (3)
    with pytest.raises(IllegalMove, match=r"^c1 is occupied by your own stone$"):
        RULES.play(state, "c2-c1")


def test_a_swapped_stone_keeps_its_turn_start_size_for_later_captures() -> None:
    # After c3 takes e3, Black's stone on d3 stands alone but still counts as 3, and c2,
    # whose line lost c3, still counts as 3: it may take d3, the square's 4s may not.
    state = play(position(CAPTURES), "c3-d3-e3")
    with pytest.raises(IllegalMove, match=r"target group \(3\) is smaller than yours \(4\)"):
        RULES.play(state, "f2-e2-d2-d3")
    after = RULES.play(state, "c2-d2-d3")
    assert "d3" in white_stones(after) and "d2" in black_stones(after)
    assert RULES.to_json(after)["sizes"]["d2"] == 3


# --- echoes ------------------------------------------------------------------------------


def test_an_echo_repeats_the_directions_of_the_move_before_it() -> None:
    state = play(position(ECHOES), "c2-c3-b3")  # north, west
    assert RULES.client_moves(state)["echo"] is True
    assert RULES.is_legal(state, "ECHO")
    after = RULES.play(state, "echo")  # north to b4, west to a4
    assert "a4" in white_stones(after) and "b3" not in white_stones(after)
    data = RULES.to_json(after)
    assert data["moved"] == ["a4"] and data["last_move"] == "echo"
    assert data["moves_left"] == 3


def test_an_echo_may_cross_the_cells_of_the_move_before_it() -> None:
    state = play(position(ECHOES), "f2-f3-g3-g2")  # north, east, south
    after = RULES.play(state, "echo")  # through g3 again, then h3, h2
    assert "h2" in white_stones(after) and "g2" not in white_stones(after)


def test_an_echo_stops_at_the_edge_of_the_board() -> None:
    state = play(position(ECHOES), "c2-c3-b3-a3")  # north, west, west
    after = RULES.play(state, "echo")  # north to a4; west would leave the board
    assert "a4" in white_stones(after) and "a3" not in white_stones(after)


def test_an_echo_stops_before_its_own_stone() -> None:
    state = play(position(ECHOES), "c2-b2-b3-b4")  # west, north, north
    after = RULES.play(state, "echo")  # west to a4; a5 is White's own
    assert "a4" in white_stones(after) and "b4" not in white_stones(after)


def test_an_echo_stops_before_a_stone_it_may_not_capture() -> None:
    state = play(position(ECHOES), "c2-c3-d3-d4")  # north, east, north
    after = RULES.play(state, "echo")  # north to d5; e5 is a lone stone, smaller than 4
    assert "d5" in white_stones(after) and "e5" in black_stones(after)


def test_an_echo_captures_a_stone_it_may_capture_and_stops() -> None:
    state = play(position(ECHOES), "f2-f3-f4-g4")  # north, north, east
    after = RULES.play(state, "echo")  # g5, g6, then onto h6 of Black's line of 4
    assert "h6" in white_stones(after) and "g6" in black_stones(after)
    assert "g4" not in white_stones(after)
    assert RULES.to_json(after)["sizes"]["g6"] == 4


def test_an_echo_must_make_a_step() -> None:
    state = play(position(ECHOES), "c2-b2-a2")  # west, west: the echo would leave at once
    assert RULES.client_moves(state)["echo"] is False
    assert not RULES.is_legal(state, "echo")
    with pytest.raises(
        IllegalMove,
        match=r"^the echo cannot make a single step: the next step would leave the board$",
    ):
        RULES.play(state, "echo")
    state = play(position(ECHOES), "e2-e3-e4")  # north, north: e5 cannot be taken
    with pytest.raises(IllegalMove, match=r"^the echo cannot make a single step: cannot capture"):
        RULES.play(state, "echo")


@pytest.mark.parametrize(
    ("moves", "message"),
    [
        (("f2-f3-f4-f5", "echo"), "an echo cannot follow an echo"),
        (("a9-a8-b8",), "an echo may not follow a move of the king"),
    ],
)
def test_it_refuses_an_echo_after_an_echo_or_a_kings_move(
    moves: tuple[str, ...], message: str
) -> None:
    state = play(position(ECHOES), *moves)
    assert RULES.client_moves(state)["echo"] is False
    with pytest.raises(IllegalMove, match=f"^{message}$"):
        RULES.play(state, "echo")


def test_it_refuses_an_echo_after_a_capture() -> None:
    state = play(position(CAPTURES), "c3-d3-e3")
    assert RULES.client_moves(state)["echo"] is False
    with pytest.raises(
        IllegalMove, match=r"^an echo may only follow a normal move without a capture$"
    ):
        RULES.play(state, "echo")


def test_each_new_normal_move_may_have_its_echo() -> None:
    state = play(position(ECHOES), "c2-c3", "echo", "d2-d3", "echo")
    assert {"c4", "d4"} <= white_stones(state)
    assert RULES.to_json(state)["moves_left"] == 1


# --- the end of a turn and of the game ---------------------------------------------------

# White's L on a1-b1 (its king on a1) is walled in by Black's lone stones, which are
# smaller; only its f5-f6 pair can move. Black's king pair i1-j1 can move.
EARLY = """
    . . . . . . . . . .
    . . . . . O . . . .
    . . . . . O . . . .
    . . . . . . . . . .
    X . . . . . . . . .
    O X . . . . . . . .
    K O X . . . . . X k
"""

# The same, and Black's L in the s1 corner is walled in by White's lone stones.
NO_MOVE = """
    . . . . . O . . . . . . . . . . . . .
    . . . . . O . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    X . . . . . . . . . . . . . . . . . O
    O X . . . . . . . . . . . . . . . O X
    K O X . . . . . . . . . . . . . O X k
"""


def test_a_turn_ends_early_when_no_legal_move_remains() -> None:
    state = play(position(EARLY), "f5-f4", "f6-f7")
    # No stone may move, but the echo of f6-f7 still may: the turn goes on.
    moves = RULES.client_moves(state)
    assert (moves["destinations"], moves["echo"]) == ({}, True)
    assert RULES.to_move(state) == 1
    state = RULES.play(state, "echo")  # f7 to f8; White has nothing left after 3 moves
    data = RULES.to_json(state)
    assert (data["to_move"], data["turn"], data["moves_left"]) == (2, 4, 5)
    assert {"f4", "f8"} <= set(data["white"])
    assert RULES.outcome(state) is None


def test_a_player_without_a_legal_move_at_the_start_of_the_turn_loses() -> None:
    state = play(position(NO_MOVE), "f5-f4", "f6-f7", "echo")
    assert RULES.to_move(state) == 2  # it is Black's turn, and Black cannot move
    assert RULES.to_json(state)["turn"] == 4
    assert_over(state, Outcome(1, "Black has no legal move at the start of the turn"))
    assert RULES.to_json(state)["result"] == "no-legal-move"


def test_a_stranded_king_loses_at_once_even_in_the_middle_of_a_turn() -> None:
    state = position(
        """
        . . . . .
        . . K O .
        . . . . .
        k X . . .
        """
    )
    after = RULES.play(state, "d3-d4")
    assert RULES.to_move(after) == 1
    assert RULES.to_json(after)["moves_left"] == 4
    assert_over(after, Outcome(2, "White's king is stranded"))


def test_a_capture_that_leaves_the_opposing_king_alone_wins() -> None:
    state = position(
        """
        . . k . . . .
        . . X . . . .
        . . O . . . .
        . . O . . K O
        """
    )
    after = RULES.play(state, "c2-c3")  # Black's c3 is swapped away from its king on c4
    assert_over(after, Outcome(1, "Black's king is stranded"))


def test_both_kings_stranded_by_one_move_is_a_draw() -> None:
    state = position(
        """
        . . . . .
        . . . k .
        . . O X .
        . . K . .
        """
    )
    after = RULES.play(state, "c2-d2")  # White leaves its king and takes Black's king's partner
    assert_over(after, Outcome(None, "both kings are stranded"))
    assert RULES.to_json(after)["result"] == "both-kings-stranded"


# White's only group: the 3x3 king's square c1-e3. Black's king pair is far away.
SQUARE = """
    . . . . . . . . . . . .
    . . . . . . . . . . . .
    . . O O O . . . . . . .
    . . O K O . . . . . X k
    . . O O O . . . . . . .
"""
# Five moves that keep the square in one piece; the last one could split it instead.
KEEPING = ("e3-f3-f2", "c3-b3-b2", "e1-f1", "c1-b1")


def test_a_turn_that_adds_no_group_loses() -> None:
    state = play(position(SQUARE), *KEEPING, "d3-e3")
    data = RULES.to_json(state)
    assert (data["to_move"], data["moves_left"]) == (1, 0)  # still White's turn: it lost
    assert len(groups(set(data["white"]))) == 1
    assert_over(state, Outcome(2, "White made no new group this turn"))
    assert data["result"] == "no-new-group"


def test_a_turn_that_adds_one_group_passes_to_the_opponent() -> None:
    state = play(position(SQUARE), *KEEPING, "d3-d4-d5")
    data = RULES.to_json(state)
    assert (data["to_move"], data["turn"], data["start_groups"]) == (2, 4, 1)
    assert RULES.outcome(state) is None


def test_the_king_rule_comes_before_the_group_rule_at_the_end_of_a_turn() -> None:
    # Four moves made; the last one takes d3, leaving Black's king on d4 alone, and adds no
    # White group (d3 joins the king's pair while e2 is left alone): the king rule decides.
    data = position_json(
        """
        . . . . . . . . . . . . . . . .
        . . . . . . . . . . . . . . . .
        . . . . . . . O . . . . . . . O
        . . . k . . . . . . . . . . . .
        . K O X . . . . . . . . . . . .
        . . . O O . . . . . . . . . . .
        . . . . . . . . . . . . . . . .
        """
    )
    data |= {"moves_left": 1, "moved": ["h5", "p5"], "last_move": "p3-p4-p5"}
    data["sizes"] |= {"h5": 3, "p5": 3}
    data["start_groups"] = len(groups(set(data["white"])))  # 4: no new group so far
    state = RULES.from_json(data)
    after = RULES.play(state, "d2-d3")
    assert len(groups(white_stones(after))) == data["start_groups"]
    assert_over(after, Outcome(1, "Black's king is stranded"))


# --- JSON and text -----------------------------------------------------------------------


def test_the_json_is_plain_json_and_round_trips() -> None:
    state = play(position(ECHOES), "c2-c3-b3", "echo")
    data = RULES.to_json(state)
    assert json.loads(json.dumps(data)) == data
    assert RULES.from_json(data) == state
    assert data["last_move"] == "echo" and data["moved"] == ["a4"]
    assert data["white"] == sorted(data["white"])  # a10 before a4: sorted as strings


def valid() -> dict[str, Any]:
    return RULES.to_json(play(position(CAPTURES), "c3-d3-e3"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("sizes"), "needs sizes"),
        (lambda d: d.update(colour="white"), "unexpected keys in a diffusion-chess state: colour"),
        (lambda d: d.update(white=list(reversed(d["white"]))), "white must be sorted"),
        (lambda d: d.update(white=[*d["white"], "z1"]), "must be sorted|must be a cell"),
        (lambda d: d.update(black=sorted([*d["black"], "a6"])), "a6 is both white and black"),
        (lambda d: d.update(black=[]), "black has no stones"),
        (lambda d: d.update(kings={"white": "j1", "black": "j2"}), "king on j1 is not one of"),
        (lambda d: d.update(kings=["a6", "j2"]), "kings must be"),
        (lambda d: d.update(to_move=2), "to_move must be 1 on odd turns"),
        (lambda d: d.update(turn=True), "turn must be a whole number"),
        (lambda d: d.update(moves_left=6), "moves_left must be a whole number from 0 to 5"),
        (lambda d: d.update(moves_left=2), "1 stones cannot have made 3 moves"),
        (lambda d: d["sizes"].pop("a6"), "sizes must map the cell of every stone"),
        (lambda d: d["sizes"].update(a6=1.0), "the size of a6's group must be from 1 to"),
        (lambda d: d.update(start_groups=0), "start_groups must be from 1 to"),
        (lambda d: d.update(moved=["c2"]), "moved and last_move|does not end on a stone"),
        (lambda d: d.update(last_move=None), "do not fit moved and last_move"),
        (lambda d: d.update(last_move="C3-d3-e3"), "last_move must be written canonically"),
        (lambda d: d.update(last_move="f2-e2-e3"), "the path of last_move f2-e2-e3 is not empty"),
        (lambda d: d.update(result="white-wins"), "result must be null or one of"),
        (lambda d: d.update(result="white-king-stranded"), "result does not match"),
        (lambda d: d.update(result="no-legal-move"), "no-legal-move"),
    ],
)
def test_it_refuses_json_that_does_not_add_up(change: Any, message: str) -> None:
    data = valid()
    RULES.from_json(data)
    change(data)
    with pytest.raises(ValueError, match=message):
        RULES.from_json(data)


def test_it_refuses_a_turn_start_whose_sizes_are_not_the_groups() -> None:
    data = position_json(ARENA)
    data["sizes"]["c2"] = 3
    with pytest.raises(ValueError, match="at the start of a turn, sizes must be the groups"):
        RULES.from_json(data)
    data = position_json(ARENA)
    data["start_groups"] = 2
    with pytest.raises(ValueError, match="start_groups must count the mover's groups"):
        RULES.from_json(data)


@pytest.mark.parametrize("data", [None, [], "state", 3, {"rows": []}])
def test_it_refuses_json_that_is_not_a_state(data: Any) -> None:
    with pytest.raises(ValueError, match=r"a state is a JSON object|needs"):
        RULES.from_json(data)


def test_it_draws_the_board_with_coordinates_kings_and_whose_turn_it_is() -> None:
    text = RULES.render_text(RULES.initial_state())
    lines = text.splitlines()
    assert lines[0] == lines[-2] == "    a b c d e f g h i j k l m n o p q r s"
    assert lines[1] == "19  X X . . X X . . X X X . . X X . . X X  19"
    assert lines[2] == "18  X X . . X X . . X k X . . X X . . X X  18"
    assert lines[18] == " 2  O O . . O O . . O K O . . O O . . O O  2"
    assert lines[-1] == "Turn 1: White to move, 4 moves left"
    drawn = RULES.play(position("K O X k"), "b1-c1")
    assert RULES.render_text(drawn).splitlines()[-1] == "Turn 3: a draw: both kings are stranded"
    lost = RULES.play(position(". . K O .\nk X . . ."), "d2-d3")
    assert (
        RULES.render_text(lost).splitlines()[-1] == "Turn 3: Black wins: White's king is stranded"
    )
