"""Diffusion (2x6) and Four-rank Diffusion (4x8): RULES.md sections 1 and 2, boards drawn out.

Boards are written top row first, as South sees them: 2x6 rows are F E D C B A over
G H I J K L; 4x8 rows are rank 4 down to rank 1, files a to h.
"""

from __future__ import annotations

import pytest

from games.rules import IllegalMove, InvalidOptions, get_rules

DIFFUSION = get_rules("diffusion")
FOUR_RANK = get_rules("four-rank-diffusion")


def board(rules, text: str, stores: tuple[int, int] = (0, 0), to_move: int = 1):
    rows = [[int(n) for n in line.split()] for line in text.strip().split("/")]
    return rules.from_json({"rows": rows, "stores": list(stores), "to_move": to_move})


def drawn(rules, state) -> tuple[str, tuple[int, int]]:
    data = rules.to_json(state)
    return " / ".join(" ".join(map(str, row)) for row in data["rows"]), tuple(data["stores"])


# --- RULES.md section 1: the worked examples (seed 000, figures 3-5) ----------------------


@pytest.mark.parametrize(
    ("start", "stores", "move", "result", "result_stores"),
    [
        ("4 4 4 4 4 4 / 4 4 4 4 4 4", (0, 0), "I", "4 5 5 5 4 4 / 4 4 0 5 4 4", (0, 0)),
        ("3 0 2 0 0 2 / 0 0 0 0 1 0", (20, 20), "F", "0 0 2 0 0 2 / 1 0 0 0 1 0", (22, 20)),
        ("2 0 1 4 0 1 / 0 0 5 5 0 0", (20, 10), "C", "2 0 2 0 0 1 / 0 0 5 5 1 0", (20, 12)),
    ],
)
def test_the_worked_examples_of_the_2x6_rules(start, stores, move, result, result_stores) -> None:
    state = board(DIFFUSION, start, stores)
    after = DIFFUSION.play(state, move)
    assert drawn(DIFFUSION, after) == (result, result_stores)
    assert DIFFUSION.to_move(after) == 2


# --- the distribution order of every pit ---------------------------------------------------
# "<" is the left store, ">" the right store. 2x6 top row: W SW S SE E; bottom row: E NE N NW W.

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


def pit_names(rules) -> list[list[str]]:
    if rules is DIFFUSION:
        return [list("FEDCBA"), list("GHIJKL")]
    return [[f"{file}{rank}" for file in "abcdefgh"] for rank in (4, 3, 2, 1)]


def scoop(rules, pit: str, stones: int) -> tuple[dict[str, int], dict[str, int]]:
    """Scoop `pit` holding `stones` on an otherwise empty board: counts before and after.

    "<" and ">" are the stores. One stone in each block keeps the game in progress.
    """
    names = pit_names(rules)
    half = len(names[0]) // 2
    before = {name: 0 for row in names for name in row}
    before[pit] = stones
    for block in (slice(0, half), slice(half, None)):
        keeper = next(name for row in names for name in row[block] if name != pit)
        before[keeper] = 1
    before["<"] = rules.total - sum(before.values())
    before[">"] = 0
    rows = [[before[name] for name in row] for row in names]
    state = rules.from_json({"rows": rows, "stores": [before["<"], 0], "to_move": 1})
    data = rules.to_json(rules.play(state, pit))
    flat = [name for row in names for name in row]
    after = dict(zip(flat, [n for row in data["rows"] for n in row], strict=True))
    after["<"], after[">"] = data["stores"]
    return before, after


def landing_order(rules, pit: str, positions: int) -> list[str]:
    """Where the 1st, 2nd, ... stone of a scoop lands: what k stones add over k - 1."""
    order: list[str] = []
    gained = dict.fromkeys(scoop(rules, pit, 1)[0], 0)
    for stones in range(1, positions + 1):
        before, after = scoop(rules, pit, stones)
        now = {name: after[name] - before[name] for name in after if name != pit}
        grown = [name for name in now if now[name] > gained[name]]
        assert len(grown) == 1, (pit, stones, grown)
        order.append(grown[0])
        gained = now
    return order


@pytest.mark.parametrize(("pit", "order"), ORDER_2X6)
def test_every_2x6_pit_distributes_in_the_rule_order(pit: str, order: str) -> None:
    assert landing_order(DIFFUSION, pit, 5) == order.split()


@pytest.mark.parametrize(("pit", "order"), ORDER_4X8)
def test_every_4x8_pit_distributes_in_the_rule_order(pit: str, order: str) -> None:
    positions = 6 if pit[1] in "23" else 5
    assert landing_order(FOUR_RANK, pit, positions) == order.split()


# --- overflow, winning, notation ----------------------------------------------------------


def test_an_inner_4x8_pit_overflows_at_six_to_the_store_on_the_emptied_pits_side() -> None:
    # c2 (5 stones): b1 c1 d1 d3 c3. d3 and c3 already hold 6, the inner maximum.
    rows = [
        [4, 4, 4, 4, 4, 4, 4, 4],
        [5, 5, 6, 6, 5, 5, 5, 5],
        [4, 4, 5, 5, 5, 5, 5, 5],
        [4, 4, 4, 4, 4, 4, 4, 4],
    ]
    state = FOUR_RANK.from_json({"rows": rows, "stores": [0, 0], "to_move": 1})
    after = FOUR_RANK.to_json(FOUR_RANK.play(state, "c2"))
    assert after["rows"] == [
        [4, 4, 4, 4, 4, 4, 4, 4],
        [5, 5, 6, 6, 5, 5, 5, 5],  # c3 and d3 stay at 6
        [4, 4, 0, 5, 5, 5, 5, 5],
        [4, 5, 5, 5, 4, 4, 4, 4],  # b1 c1 d1 get one each
    ]
    assert after["stores"] == [2, 0]  # c is on the left: both overflow stones go left


def test_an_outer_4x8_pit_overflows_at_five() -> None:
    rows = [
        [4, 4, 4, 4, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5, 5, 5],
        [5, 5, 5, 5, 5, 5, 5, 5],
        [3, 4, 4, 4, 4, 5, 4, 4],  # f1 full
    ]
    state = FOUR_RANK.from_json({"rows": rows, "stores": [0, 0], "to_move": 2})
    # g2 holds 5: f1 g1 h1 h3 g3 (the sixth position, f3, gets nothing)
    after = FOUR_RANK.to_json(FOUR_RANK.play(state, "g2"))
    assert after["rows"][3] == [3, 4, 4, 4, 4, 5, 5, 5]
    assert after["rows"][1] == [5, 5, 5, 5, 5, 5, 6, 6]
    assert after["rows"][2][6] == 0
    assert after["stores"] == [0, 1]  # f1's overflow goes right: g2 is on the right


@pytest.mark.parametrize(
    ("start", "move", "winner", "reason"),
    [
        # I holds block A's last stones and sows them to J and C: block A's owner, South,
        # wins, whoever moved (either player may scoop any pit).
        ("0 0 0 4 4 4 / 0 0 2 4 4 4", "I", 1, "block A is empty"),
        # C sows its two stones to D and I: block B empties and North wins.
        ("4 4 4 2 0 0 / 4 4 4 0 0 0", "C", 2, "block B is empty"),
    ],
)
def test_the_owner_of_an_emptied_block_wins(start, move, winner, reason) -> None:
    total = sum(int(n) for n in start.replace("/", " ").split())
    for to_move in (1, 2):
        state = board(DIFFUSION, start, (48 - total, 0), to_move)
        after = DIFFUSION.play(state, move)
        outcome = DIFFUSION.outcome(after)
        assert outcome is not None
        assert (outcome.winner, outcome.reason) == (winner, reason)
        assert DIFFUSION.legal_moves(after) == []
        with pytest.raises(IllegalMove, match="the game is over"):
            DIFFUSION.play(after, "A")


def test_a_move_that_leaves_both_blocks_stocked_does_not_end_the_game() -> None:
    state = board(DIFFUSION, "0 0 0 4 4 4 / 0 0 2 4 4 4", (22, 0))
    assert DIFFUSION.outcome(DIFFUSION.play(state, "K")) is None


@pytest.mark.parametrize(
    ("rules", "written", "canonical"),
    [
        (DIFFUSION, "i", "I"),
        (DIFFUSION, " L\n", "L"),
        (FOUR_RANK, "C2", "c2"),
        (FOUR_RANK, " h4 ", "h4"),
    ],
)
def test_moves_are_read_leniently_and_written_canonically(rules, written, canonical) -> None:
    state = rules.initial_state()
    assert rules.canonical_move(state, written) == canonical
    assert rules.play(state, written) == rules.play(state, canonical)
    assert canonical in rules.legal_moves(state)


@pytest.mark.parametrize(
    ("rules", "move", "message"),
    [
        (DIFFUSION, "Q", "no such pit: Q"),
        (DIFFUSION, "", "no such pit"),
        (DIFFUSION, "AB", "no such pit: AB"),
        (DIFFUSION, None, "not NoneType"),
        (DIFFUSION, 3, "not int"),
        (FOUR_RANK, "i1", "no such pit: i1"),
        (FOUR_RANK, "a5", "no such pit: a5"),
        (FOUR_RANK, "a 1", "no such pit: a 1"),
    ],
)
def test_a_malformed_move_is_an_illegal_move_that_says_why(rules, move, message) -> None:
    with pytest.raises(IllegalMove, match=message):
        rules.play(rules.initial_state(), move)


def test_scooping_an_empty_pit_is_illegal() -> None:
    state = DIFFUSION.play(DIFFUSION.initial_state(), "I")
    with pytest.raises(IllegalMove, match="pit I is empty"):
        DIFFUSION.play(state, "I")
    assert "I" not in DIFFUSION.legal_moves(state)


def test_south_moves_first_and_turns_alternate() -> None:
    state = FOUR_RANK.initial_state()
    assert FOUR_RANK.to_move(state) == 1
    assert FOUR_RANK.to_move(FOUR_RANK.play(state, "a1")) == 2
    assert len(FOUR_RANK.legal_moves(state)) == 32


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"rows": [[4] * 6], "stores": [0, 0], "to_move": 1}, "rows must be 2 lists of 6"),
        ({"rows": [[4] * 6, [4] * 5], "stores": [0, 0], "to_move": 1}, "rows must be"),
        ({"rows": [[6, 4, 4, 4, 4, 2], [4] * 6], "stores": [0, 0], "to_move": 1}, "more stones"),
        ({"rows": [[4] * 6, [4] * 6], "stores": [1, 0], "to_move": 1}, "holds 49 stones, not 48"),
        ({"rows": [[4] * 6, [4] * 6], "stores": [0, 0], "to_move": 3}, "to_move must be 1 or 2"),
        ({"rows": [[4] * 6, [4] * 6], "stores": [0], "to_move": 1}, "stores must be"),
        ({"rows": [["4"] * 6, [4] * 6], "stores": [0, 0], "to_move": 1}, "whole numbers"),
        ({"rows": [[0] * 6, [0] * 6], "stores": [24, 24], "to_move": 1}, "both blocks are empty"),
        ("not a dict", "a state is a JSON object"),
    ],
)
def test_a_state_that_does_not_add_up_is_refused(data, message) -> None:
    with pytest.raises(ValueError, match=message):
        DIFFUSION.from_json(data)


def test_the_games_take_no_options() -> None:
    with pytest.raises(InvalidOptions, match="Diffusion has no option pits"):
        get_rules("diffusion", pits=4)
    with pytest.raises(InvalidOptions, match="unknown game 'go'"):
        get_rules("go")


def test_the_text_board_looks_like_pbmserv() -> None:
    text = DIFFUSION.render_text(DIFFUSION.play(DIFFUSION.initial_state(), "I"))
    assert text.splitlines() == [
        "        F   E   D   C   B   A",
        "        4   5   5   5   4   4",
        "[ 0]                          [ 0]",
        "        4   4   0   5   4   4",
        "        G   H   I   J   K   L",
        "Player 2 (North) to move.",
    ]
