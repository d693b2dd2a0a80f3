"""Diffusion (2x6) and Four-rank Diffusion (4x8): RULES.md sections 1 and 2, boards drawn out.

Every expected board here is worked out by hand from RULES.md and the seed's figures.
Boards are written top row first, as South sees them: 2x6 rows are F E D C B A over
G H I J K L; 4x8 rows are rank 4 down to rank 1, files a to h. Stores are (left, right).
"""

from __future__ import annotations

from typing import Any

import pytest

from games.rules import IllegalMove, InvalidOptions, get_rules

DIFFUSION = get_rules("diffusion")
FOUR_RANK = get_rules("four-rank-diffusion")


def board(rules: Any, text: str, stores: tuple[int, int] = (0, 0), to_move: int = 1) -> Any:
    """A state from rows written "n n n / n n n" (top row first)."""
    rows = [[int(n) for n in line.split()] for line in text.strip().split("/")]
    return rules.from_json({"rows": rows, "stores": list(stores), "to_move": to_move})


def drawn(rules: Any, state: Any) -> tuple[str, tuple[int, int]]:
    """The state written as board() reads it, and its stores."""
    data = rules.to_json(state)
    return " / ".join(" ".join(map(str, row)) for row in data["rows"]), tuple(data["stores"])


# --- RULES.md section 1: the worked examples (seed 000, figures 3-5) ----------------------


@pytest.mark.parametrize(
    ("start", "stores", "move", "result", "result_stores"),
    [
        # Figure 3: I sows E, NE, N, NW = J, C, D, E.
        ("4 4 4 4 4 4 / 4 4 4 4 4 4", (0, 0), "I", "4 5 5 5 4 4 / 4 4 0 5 4 4", (0, 0)),
        # Figure 4: corner F sows W, SW (both the left store), then S = G.
        ("3 0 2 0 0 2 / 0 0 0 0 1 0", (20, 20), "F", "0 0 2 0 0 2 / 1 0 0 0 1 0", (22, 20)),
        # Figure 5: C sows D, then I and J are full (5) and overflow right, then K.
        ("2 0 1 4 0 1 / 0 0 5 5 0 0", (20, 10), "C", "2 0 2 0 0 1 / 0 0 5 5 1 0", (20, 12)),
    ],
)
def test_it_reproduces_the_worked_examples_of_the_2x6_rules(
    start: str, stores: tuple[int, int], move: str, result: str, result_stores: tuple[int, int]
) -> None:
    state = board(DIFFUSION, start, stores)
    after = DIFFUSION.play(state, move)
    assert drawn(DIFFUSION, after) == (result, result_stores)
    assert DIFFUSION.to_move(after) == 2
    assert DIFFUSION.outcome(after) is None


# --- the distribution order of every pit ---------------------------------------------------
# Written out by hand from RULES.md's compass orders. "<" is the left store, ">" the right.
# 2x6 top row: W SW S SE E; bottom row: E NE N NW W.

ORDER_2X6 = [
    ("F", "< < G H E"),
    ("E", "F G H I D"),
    ("D", "E H I J C"),
    ("C", "D I J K B"),
    ("B", "C J K L A"),
    ("A", "B K L > >"),
    ("G", "H E F < <"),
    ("H", "I D E F G"),
    ("I", "J C D E H"),
    ("J", "K B C D I"),
    ("K", "L A B C J"),
    ("L", "> > A B K"),
]

# 4x8: rank 4 W SW S SE E; rank 3 NE N NW SW S SE; rank 2 SW S SE NE N NW; rank 1 E NE N NW W.
ORDER_4X8 = [
    ("a4", "< < a3 b3 b4"),
    ("b4", "a4 a3 b3 c3 c4"),
    ("c4", "b4 b3 c3 d3 d4"),
    ("d4", "c4 c3 d3 e3 e4"),
    ("e4", "d4 d3 e3 f3 f4"),
    ("f4", "e4 e3 f3 g3 g4"),
    ("g4", "f4 f3 g3 h3 h4"),
    ("h4", "g4 g3 h3 > >"),
    ("a3", "b4 a4 < < a2 b2"),
    ("b3", "c4 b4 a4 a2 b2 c2"),
    ("c3", "d4 c4 b4 b2 c2 d2"),
    ("d3", "e4 d4 c4 c2 d2 e2"),
    ("e3", "f4 e4 d4 d2 e2 f2"),
    ("f3", "g4 f4 e4 e2 f2 g2"),
    ("g3", "h4 g4 f4 f2 g2 h2"),
    ("h3", "> h4 g4 g2 h2 >"),
    ("a2", "< a1 b1 b3 a3 <"),
    ("b2", "a1 b1 c1 c3 b3 a3"),
    ("c2", "b1 c1 d1 d3 c3 b3"),
    ("d2", "c1 d1 e1 e3 d3 c3"),
    ("e2", "d1 e1 f1 f3 e3 d3"),
    ("f2", "e1 f1 g1 g3 f3 e3"),
    ("g2", "f1 g1 h1 h3 g3 f3"),
    ("h2", "g1 h1 > > h3 g3"),
    ("a1", "b1 b2 a2 < <"),
    ("b1", "c1 c2 b2 a2 a1"),
    ("c1", "d1 d2 c2 b2 b1"),
    ("d1", "e1 e2 d2 c2 c1"),
    ("e1", "f1 f2 e2 d2 d1"),
    ("f1", "g1 g2 f2 e2 e1"),
    ("g1", "h1 h2 g2 f2 f1"),
    ("h1", "> > h2 g2 g1"),
]

NAMES_2X6 = [list("FEDCBA"), list("GHIJKL")]
NAMES_4X8 = [[f"{file}{rank}" for file in "abcdefgh"] for rank in "4321"]


def scoop(rules: Any, names: list[list[str]], pit: str, stones: int) -> dict[str, int]:
    """What scooping `pit` (holding `stones`) adds to every pit and store ("<", ">").

    The board is otherwise empty but for one stone in each block, away from `pit`'s
    reach where possible, which keeps the game going; the rest waits in the left store.
    """
    half = len(names[0]) // 2
    before = {name: 0 for row in names for name in row}
    before[pit] = stones
    for block in (slice(0, half), slice(half, None)):
        keeper = next(name for row in names for name in row[block] if name != pit)
        before[keeper] = 1
    total = 48 if rules is DIFFUSION else 144
    rows = [[before[name] for name in row] for row in names]
    state = rules.from_json(
        {"rows": rows, "stores": [total - sum(before.values()), 0], "to_move": 1}
    )
    data = rules.to_json(rules.play(state, pit))
    flat = [name for row in names for name in row]
    after = dict(zip(flat, [n for row in data["rows"] for n in row], strict=True))
    gained = {name: after[name] - before[name] for name in flat if name != pit}
    gained["<"] = data["stores"][0] - (total - sum(before.values()))
    gained[">"] = data["stores"][1]
    return gained


def landing_order(rules: Any, names: list[list[str]], pit: str, positions: int) -> list[str]:
    """Where the 1st, 2nd, ... stone of a scoop lands: what k stones add over k - 1."""
    order: list[str] = []
    previous: dict[str, int] = {}
    for stones in range(1, positions + 1):
        gained = scoop(rules, names, pit, stones)
        grown = [name for name in gained if gained[name] > previous.get(name, 0)]
        assert len(grown) == 1, (pit, stones, grown)
        assert sum(gained.values()) == stones  # every stone lands somewhere, once
        order.append(grown[0])
        previous = gained
    return order


@pytest.mark.parametrize(("pit", "order"), ORDER_2X6)
def test_it_distributes_every_2x6_pit_in_the_rule_order(pit: str, order: str) -> None:
    assert landing_order(DIFFUSION, NAMES_2X6, pit, 5) == order.split()


@pytest.mark.parametrize(("pit", "order"), ORDER_4X8)
def test_it_distributes_every_4x8_pit_in_the_rule_order(pit: str, order: str) -> None:
    positions = 6 if pit[1] in "23" else 5
    assert landing_order(FOUR_RANK, NAMES_4X8, pit, positions) == order.split()


# --- overflow: full pits send their stone to the store on the emptied pit's side -----------


@pytest.mark.parametrize(
    ("start", "stores", "move", "result", "result_stores"),
    [
        # D (left half) sows E H I J C; E and H hold 5 and overflow to the LEFT store.
        ("1 5 5 1 3 3 / 2 5 2 0 3 3", (10, 5), "D", "1 5 0 2 3 3 / 2 5 3 1 3 3", (12, 5)),
        # D's sowing reaches J and C in the right half; full, they still overflow LEFT,
        # to the store on the emptied pit's side, not the side of the full pit.
        ("2 2 5 5 2 2 / 2 2 2 5 2 2", (5, 10), "D", "2 3 0 5 2 2 / 2 3 3 5 2 2", (7, 10)),
        # Corner A sows B K L > >; L is full: its stone and the two off-board ones go right.
        ("4 4 4 4 0 5 / 4 4 4 4 1 5", (3, 2), "A", "4 4 4 4 1 0 / 4 4 4 4 2 5", (3, 5)),
        # Corner G sows H E F < <; H is full: all three store stones go left.
        ("1 1 1 1 1 1 / 5 5 1 1 1 1", (20, 8), "G", "2 2 1 1 1 1 / 0 5 1 1 1 1", (23, 8)),
    ],
)
def test_it_sends_overflow_to_the_store_on_the_emptied_pits_side(
    start: str, stores: tuple[int, int], move: str, result: str, result_stores: tuple[int, int]
) -> None:
    state = board(DIFFUSION, start, stores)
    assert drawn(DIFFUSION, DIFFUSION.play(state, move)) == (result, result_stores)


FOUR_RANK_START = """
    4 4 4 4 4 4 4 4 /
    5 5 5 5 5 5 5 5 /
    5 5 5 5 5 5 5 5 /
    4 4 4 4 4 4 4 4"""


def test_it_plays_a_4x8_opening_that_fills_inner_pits_to_six_and_then_overflows() -> None:
    state = FOUR_RANK.initial_state()
    assert drawn(FOUR_RANK, state) == drawn(FOUR_RANK, board(FOUR_RANK, FOUR_RANK_START))
    # South c2 (5 stones): b1 c1 d1 (4 -> 5), then d3 and c3 (5 -> 6: inner pits hold six).
    state = FOUR_RANK.play(state, "c2")
    assert drawn(FOUR_RANK, state) == (
        "4 4 4 4 4 4 4 4 / 5 5 6 6 5 5 5 5 / 5 5 0 5 5 5 5 5 / 4 5 5 5 4 4 4 4",
        (0, 0),
    )
    # North c3 (6 stones): d4 c4 b4 (4 -> 5), b2 (5 -> 6), c2 (0 -> 1), d2 (5 -> 6).
    assert FOUR_RANK.to_move(state) == 2
    state = FOUR_RANK.play(state, "c3")
    assert drawn(FOUR_RANK, state) == (
        "4 5 5 5 4 4 4 4 / 5 5 0 6 5 5 5 5 / 5 6 1 6 5 5 5 5 / 4 5 5 5 4 4 4 4",
        (0, 0),
    )
    # South b1 (5 stones): c1 is full at 5 (outer) -> left store, c2 1 -> 2, b2 is full at 6
    # (inner) -> left store, a2 5 -> 6, a1 4 -> 5.
    assert FOUR_RANK.to_move(state) == 1
    state = FOUR_RANK.play(state, "b1")
    assert drawn(FOUR_RANK, state) == (
        "4 5 5 5 4 4 4 4 / 5 5 0 6 5 5 5 5 / 6 6 2 6 5 5 5 5 / 5 0 5 5 4 4 4 4",
        (2, 0),
    )
    assert FOUR_RANK.to_move(state) == 2


def test_it_sends_4x8_overflow_from_the_right_half_to_the_right_store() -> None:
    # e3 (4 stones) sows f4 e4 d4 d2: d4 (5, outer) and d2 (6, inner) are full, and although
    # they are in the left half their stones go to the RIGHT store, e3's side.
    start = "4 4 4 5 4 4 4 4 / 5 5 5 5 4 5 5 5 / 5 5 5 6 5 5 5 5 / 3 4 4 4 4 4 4 4"
    state = board(FOUR_RANK, start)
    assert drawn(FOUR_RANK, FOUR_RANK.play(state, "e3")) == (
        "4 4 4 5 5 5 4 4 / 5 5 5 5 0 5 5 5 / 5 5 5 6 5 5 5 5 / 3 4 4 4 4 4 4 4",
        (0, 2),
    )


def test_it_lets_an_outer_4x8_pit_fill_only_to_five() -> None:
    # g2 (5 stones) sows f1 g1 h1 h3 g3. f1 holds 5 (full); h3 and g3 are inner and take a
    # sixth stone. f1's stone goes to the right store (g2 is on the right).
    start = "4 4 4 4 4 4 4 4 / 5 5 5 5 5 5 5 5 / 5 5 5 5 5 5 5 5 / 3 4 4 4 4 5 4 4"
    state = board(FOUR_RANK, start, to_move=2)
    assert drawn(FOUR_RANK, FOUR_RANK.play(state, "g2")) == (
        "4 4 4 4 4 4 4 4 / 5 5 5 5 5 5 6 6 / 5 5 5 5 5 5 0 5 / 3 4 4 4 4 5 5 5",
        (0, 1),
    )


# --- winning --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "start", "stores", "move", "winner", "reason"),
    [
        # I holds block A's last stones and sows them to J and C: block A's owner, South,
        # wins, whoever moved (either player may scoop any pit).
        (DIFFUSION, "0 0 0 4 4 4 / 0 0 2 4 4 4", (22, 0), "I", 1, "block A is empty"),
        # C sows its two stones to D and I: block B empties and North wins.
        (DIFFUSION, "4 4 4 2 0 0 / 4 4 4 0 0 0", (0, 22), "C", 2, "block B is empty"),
        # Corner F sends its two stones into the left store: block A is empty.
        (DIFFUSION, "2 0 0 4 4 4 / 0 0 0 4 4 4", (20, 2), "F", 1, "block A is empty"),
        # a4 sends two stones off the board into the left store: files a-d are empty.
        (FOUR_RANK, "2 0 0 0 4 4 4 4 / 0 0 0 0 5 5 5 5 / 0 0 0 0 5 5 5 5 / 0 0 0 0 4 4 4 4",
         (70, 0), "a4", 1, "block a-d is empty"),
        # e2's single stone goes to d1, across the middle: files e-h are empty.
        (FOUR_RANK, "4 4 4 4 0 0 0 0 / 5 5 5 5 0 0 0 0 / 5 5 5 5 1 0 0 0 / 4 4 4 4 0 0 0 0",
         (0, 71), "e2", 2, "block e-h is empty"),
    ],
)  # fmt: skip
def test_it_declares_the_owner_of_an_emptied_block_the_winner(
    rules: Any,
    start: str,
    stores: tuple[int, int],
    move: str,
    winner: int,
    reason: str,
) -> None:
    for to_move in (1, 2):
        state = board(rules, start, stores, to_move)
        assert rules.outcome(state) is None
        after = rules.play(state, move)
        outcome = rules.outcome(after)
        assert outcome is not None
        assert (outcome.winner, outcome.reason) == (winner, reason)
        assert rules.legal_moves(after) == []
        with pytest.raises(IllegalMove, match="the game is over"):
            rules.play(after, rules.legal_moves(state)[0])


def test_it_goes_on_while_both_blocks_hold_stones() -> None:
    state = board(DIFFUSION, "0 0 0 4 4 4 / 0 0 2 4 4 4", (22, 0))
    after = DIFFUSION.play(state, "K")
    assert DIFFUSION.outcome(after) is None
    assert DIFFUSION.legal_moves(after)


def test_it_treats_a_loaded_position_with_an_empty_block_as_won() -> None:
    state = board(DIFFUSION, "0 0 0 4 4 4 / 0 0 0 4 4 4", (24, 0), to_move=2)
    outcome = DIFFUSION.outcome(state)
    assert outcome is not None and outcome.winner == 1
    assert DIFFUSION.legal_moves(state) == []


# --- moves: notation and errors -------------------------------------------------------------


def test_it_starts_with_south_to_move_and_every_pit_playable() -> None:
    assert DIFFUSION.to_move(DIFFUSION.initial_state()) == 1
    assert DIFFUSION.legal_moves(DIFFUSION.initial_state()) == list("FEDCBAGHIJKL")
    state = FOUR_RANK.initial_state()
    assert FOUR_RANK.to_move(state) == 1
    assert sorted(FOUR_RANK.legal_moves(state)) == sorted(
        f"{file}{rank}" for file in "abcdefgh" for rank in "1234"
    )
    assert FOUR_RANK.to_move(FOUR_RANK.play(state, "a1")) == 2


def test_it_lists_only_pits_that_hold_stones() -> None:
    state = board(DIFFUSION, "3 0 2 0 0 2 / 0 0 0 0 1 0", (20, 20))
    assert sorted(DIFFUSION.legal_moves(state)) == ["A", "D", "F", "K"]


@pytest.mark.parametrize(
    ("rules", "written", "canonical"),
    [
        (DIFFUSION, "i", "I"),
        (DIFFUSION, " L\n", "L"),
        (DIFFUSION, "\tf ", "F"),
        (FOUR_RANK, "C2", "c2"),
        (FOUR_RANK, " h4 ", "h4"),
    ],
)
def test_it_reads_moves_leniently_and_names_them_canonically(
    rules: Any, written: str, canonical: str
) -> None:
    state = rules.initial_state()
    assert rules.canonical_move(state, written) == canonical
    assert rules.play(state, written) == rules.play(state, canonical)
    assert canonical in rules.legal_moves(state)


@pytest.mark.parametrize(
    ("rules", "move", "message"),
    [
        (DIFFUSION, "Q", "no such pit: Q"),
        (DIFFUSION, "", r"no such pit: \(nothing\)"),
        (DIFFUSION, "   ", r"no such pit: \(nothing\)"),
        (DIFFUSION, "AB", "no such pit: AB"),
        (DIFFUSION, "a1", "no such pit: a1"),
        (DIFFUSION, None, "not NoneType"),
        (DIFFUSION, 3, "not int"),
        (DIFFUSION, ["A"], "not list"),
        (DIFFUSION, b"A", "not bytes"),
        (FOUR_RANK, "i1", "no such pit: i1"),
        (FOUR_RANK, "a5", "no such pit: a5"),
        (FOUR_RANK, "a 1", "no such pit: a 1"),
        (FOUR_RANK, "A", "no such pit: A"),
    ],
)
def test_it_rejects_a_malformed_move_saying_why(rules: Any, move: Any, message: str) -> None:
    with pytest.raises(IllegalMove, match=message):
        rules.play(rules.initial_state(), move)


def test_it_rejects_scooping_an_empty_pit() -> None:
    state = DIFFUSION.play(DIFFUSION.initial_state(), "I")
    with pytest.raises(IllegalMove, match="pit I is empty"):
        DIFFUSION.play(state, "i")
    assert "I" not in DIFFUSION.legal_moves(state)


def test_it_raises_errors_that_are_value_errors() -> None:
    assert issubclass(IllegalMove, ValueError)
    assert issubclass(InvalidOptions, ValueError)


def test_it_never_changes_the_state_it_plays_from() -> None:
    state = FOUR_RANK.initial_state()
    before = FOUR_RANK.to_json(state)
    FOUR_RANK.play(state, "c2")
    assert FOUR_RANK.to_json(state) == before
    assert state == FOUR_RANK.initial_state()


# --- JSON -------------------------------------------------------------------------------------


def test_it_writes_the_2x6_state_as_rows_stores_and_turn() -> None:
    state = DIFFUSION.play(DIFFUSION.initial_state(), "I")
    assert DIFFUSION.to_json(state) == {
        "rows": [[4, 5, 5, 5, 4, 4], [4, 4, 0, 5, 4, 4]],
        "stores": [0, 0],
        "to_move": 2,
    }
    assert DIFFUSION.from_json(DIFFUSION.to_json(state)) == state


def test_it_writes_the_4x8_state_rank_4_first() -> None:
    state = FOUR_RANK.play(FOUR_RANK.initial_state(), "a1")  # b1, b2, a2, then two off-board
    assert FOUR_RANK.to_json(state) == {
        "rows": [[4] * 8, [5] * 8, [6, 6, 5, 5, 5, 5, 5, 5], [0, 5, 4, 4, 4, 4, 4, 4]],
        "stores": [1, 0],
        "to_move": 2,
    }


START = [[4] * 6, [4] * 6]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"rows": [[4] * 6], "stores": [0, 0], "to_move": 1}, "rows must be 2 lists of 6"),
        ({"rows": [[4] * 6, [4] * 5], "stores": [0, 0], "to_move": 1}, "rows must be"),
        ({"rows": "444444444444", "stores": [0, 0], "to_move": 1}, "rows must be"),
        ({"rows": ["444444", "444444"], "stores": [0, 0], "to_move": 1}, "rows must be"),
        ({"stores": [0, 0], "to_move": 1}, "rows must be"),
        ({"rows": [[6, 4, 4, 4, 4, 2], [4] * 6], "stores": [0, 0], "to_move": 1}, "pit F holds 6"),
        ({"rows": [[5, 4, 4, 4, 4, 4], [4] * 6], "stores": [-1, 0], "to_move": 1}, "at least 0"),
        ({"rows": START, "stores": [1, 0], "to_move": 1}, "holds 49 stones, not 48"),
        ({"rows": START, "stores": [0, 0], "to_move": 3}, "to_move must be 1 or 2"),
        ({"rows": START, "stores": [0, 0], "to_move": True}, "to_move must be 1 or 2"),
        ({"rows": START, "stores": [0, 0], "to_move": 1.0}, "to_move must be 1 or 2"),
        ({"rows": START, "stores": [0, 0]}, "to_move must be 1 or 2"),
        ({"rows": START, "stores": [0], "to_move": 1}, "stores must be"),
        ({"rows": START, "stores": None, "to_move": 1}, "stores must be"),
        ({"rows": [["4"] * 6, [4] * 6], "stores": [0, 0], "to_move": 1}, "whole numbers"),
        ({"rows": [[4.0] * 6, [4] * 6], "stores": [0, 0], "to_move": 1}, "whole numbers"),
        ({"rows": [[True] * 6, [4] * 6], "stores": [0, 0], "to_move": 1}, "whole numbers"),
        ({"rows": [[0] * 6, [0] * 6], "stores": [24, 24], "to_move": 1}, "both blocks are empty"),
        ({"rows": START, "stores": [0, 0], "to_move": 1, "winner": 0}, "unexpected keys"),
        ("not a dict", "a state is a JSON object"),
        (None, "a state is a JSON object"),
    ],
)
def test_it_refuses_a_state_that_does_not_add_up(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DIFFUSION.from_json(data)


def test_it_refuses_a_4x8_inner_pit_above_six_and_an_outer_pit_above_five() -> None:
    rows = [[4] * 8, [7, 5, 5, 5, 5, 5, 5, 3], [5] * 8, [4] * 8]
    with pytest.raises(ValueError, match="pit a3 holds 7"):
        FOUR_RANK.from_json({"rows": rows, "stores": [0, 0], "to_move": 1})
    rows = [[4] * 8, [5] * 8, [5] * 8, [4, 4, 4, 4, 4, 4, 4, 6]]
    with pytest.raises(ValueError, match="pit h1 holds 6"):
        FOUR_RANK.from_json({"rows": rows, "stores": [0, 0], "to_move": 1})


# --- options and text -------------------------------------------------------------------------


def test_it_rejects_options_the_diffusion_games_do_not_have() -> None:
    with pytest.raises(InvalidOptions, match="Diffusion has no option pits"):
        get_rules("diffusion", pits=4)
    with pytest.raises(InvalidOptions, match="Four-rank Diffusion has no option seeds"):
        get_rules("four-rank-diffusion", seeds=3)


def test_it_draws_the_initial_2x6_board_as_figure_1_of_the_seed() -> None:
    assert DIFFUSION.render_text(DIFFUSION.initial_state()).splitlines() == [
        "      F   E   D   C   B   A",
        ".---.---.---.---.---.---.---.---.",
        "|   | 4 | 4 | 4 | 4 | 4 | 4 |   |",
        "|   |---+---+---+---+---+---|   |",
        "|   | 4 | 4 | 4 | 4 | 4 | 4 |   |",
        "'---'---'---'---'---'---'---'---'",
        "      G   H   I   J   K   L",
    ]


def test_it_draws_the_stores_as_figure_5_of_the_seed() -> None:
    state = board(DIFFUSION, "2 0 2 0 0 1 / 0 0 5 5 1 0", (20, 12))  # figure 5c
    assert DIFFUSION.render_text(state).splitlines()[2:5] == [
        "|   | 2 | 0 | 2 | 0 | 0 | 1 |   |",
        "|20 |---+---+---+---+---+---| 12|",
        "|   | 0 | 0 | 5 | 5 | 1 | 0 |   |",
    ]
    state = board(DIFFUSION, "0 0 1 0 0 1 / 0 0 0 1 0 0", (3, 42))
    assert DIFFUSION.render_text(state).splitlines()[3] == "| 3 |---+---+---+---+---+---| 42|"


def test_it_draws_the_4x8_board_with_files_ranks_and_stores_on_the_centre_line() -> None:
    state = FOUR_RANK.play(FOUR_RANK.initial_state(), "a1")
    assert FOUR_RANK.render_text(state).splitlines() == [
        "      a   b   c   d   e   f   g   h",
        ".---.---.---.---.---.---.---.---.---.---.",
        "|   | 4 | 4 | 4 | 4 | 4 | 4 | 4 | 4 |   | 4",
        "|   |---+---+---+---+---+---+---+---|   |",
        "|   | 5 | 5 | 5 | 5 | 5 | 5 | 5 | 5 |   | 3",
        "| 1 |---+---+---+---+---+---+---+---|   |",
        "|   | 6 | 6 | 5 | 5 | 5 | 5 | 5 | 5 |   | 2",
        "|   |---+---+---+---+---+---+---+---|   |",
        "|   | 0 | 5 | 4 | 4 | 4 | 4 | 4 | 4 |   | 1",
        "'---'---'---'---'---'---'---'---'---'---'",
        "      a   b   c   d   e   f   g   h",
    ]
    rows = [[0] * 8, [0] * 8, [0, 0, 0, 1, 1, 0, 0, 0], [0] * 8]
    state = FOUR_RANK.from_json({"rows": rows, "stores": [100, 42], "to_move": 1})
    assert FOUR_RANK.render_text(state).splitlines()[5] == (
        "|100|---+---+---+---+---+---+---+---| 42|"
    )


# --- geometries: a board that is not Diffusion is refused when its tables are built ---------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"orders": (("N", "SW", "S", "SE", "E"), ("E", "NE", "N", "NW", "W"))}, "leaves"),
        ({"orders": (("S", "S", "SW", "SE", "E"), ("E", "NE", "N", "NW", "W"))}, "twice"),
        ({"maxima": (6, 6)}, "more stones than it has positions"),
        ({"start": (4,)}, "every row needs"),
        ({"columns": 5}, "every row needs"),
        ({"names": (tuple("FEDCBA"), tuple("GHIJKf"))}, "names clash"),
    ],
)
def test_it_refuses_a_geometry_that_breaks_the_diffusion_rules(
    changes: dict[str, Any], message: str
) -> None:
    from dataclasses import replace

    from games.rules.diffusion import DIFFUSION as GEOMETRY
    from games.rules.diffusion import DiffusionRules

    with pytest.raises(ValueError, match=message):
        DiffusionRules("broken", replace(GEOMETRY, **changes))
