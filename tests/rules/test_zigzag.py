"""ZigZag: RULES.md section 3 and seed 004, boards drawn out.

Boards are written top row (North's, A..) first, then the bottom row (South's, a..):
"5 5 5 5 5 5 / 5 5 5 5 5 5". Every expected board was worked out by hand from the rules;
the comments show the path the seeds take.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.rules import IllegalMove, InvalidOptions, get_rules

ZIGZAG = get_rules("zigzag")


def board(
    rules: Any,
    text: str,
    to_move: int = 1,
    captured: tuple[int, int] | None = None,
) -> Any:
    """A position from "top row / bottom row"; seeds not on the board are split between
    the two stores (South first) unless `captured` says otherwise, South last capturing."""
    rows = [[int(n) for n in line.split()] for line in text.strip().split("/")]
    if captured is None:
        missing = rules.total - sum(map(sum, rows))
        captured = (missing - missing // 2, missing // 2)
    return rules.from_json(
        {
            "rows": rows,
            "stores": [captured[1], captured[0]],
            "captured": list(captured),
            "to_move": to_move,
            "no_return": None,
            "last_capturer": 1 if sum(captured) else 0,
            "repetition": [],
            "end": None,
        }
    )


def drawn(rules: Any, state: Any) -> str:
    rows = rules.to_json(state)["rows"]
    return " / ".join(" ".join(map(str, row)) for row in rows)


def play(rules: Any, state: Any, moves: str) -> Any:
    for move in moves.split():
        state = rules.play(state, move)
    return state


# --- the worked examples of seed 004 (RULES.md's table) --------------------------------------


def test_it_reproduces_the_three_worked_examples_of_the_rules() -> None:
    state = ZIGZAG.initial_state()
    assert drawn(ZIGZAG, state) == "5 5 5 5 5 5 / 5 5 5 5 5 5"
    # South a, toward the centre: B c D e F.
    state = ZIGZAG.play(state, "a")
    assert drawn(ZIGZAG, state) == "5 6 5 6 5 6 / 0 5 6 5 6 5"
    assert ZIGZAG.to_move(state) == 2
    # North D, toward the centre: c B a A b C; C was full, so relay its 6: d E f F e D.
    state = ZIGZAG.play(state, "D")
    assert drawn(ZIGZAG, state) == "6 7 0 1 6 7 / 1 6 7 6 7 6"
    # South e: D c B a A b C, the last into empty C: capture c (7, plus 1 sown = 8).
    state = ZIGZAG.play(state, "e")
    assert drawn(ZIGZAG, state) == "7 8 1 2 6 7 / 2 7 0 6 0 6"
    data = ZIGZAG.to_json(state)
    assert data["captured"] == [8, 0]
    assert data["stores"] == [0, 8]  # [left, right] = [North's, South's]
    assert data["last_capturer"] == 1
    assert ZIGZAG.outcome(state) is None


def test_it_ends_the_rules_end_of_game_example_and_gives_the_last_seed_to_south() -> None:
    # South holds a and b, nothing else: not over, South a lands in empty B, captures b.
    state = board(ZIGZAG, "0 0 0 0 0 0 / 1 1 0 0 0 0", captured=(30, 28))
    assert ZIGZAG.outcome(state) is None
    assert ZIGZAG.legal_moves(state) == ["a", "b"]
    after = ZIGZAG.play(state, "a")
    data = ZIGZAG.to_json(after)
    # The seed left in B goes to South, the last capturer: 30 + 1 + 1.
    assert data["rows"] == [[0] * 6, [0] * 6]
    assert data["captured"] == [32, 28]
    assert data["end"] == "no-capture"
    outcome = ZIGZAG.outcome(after)
    assert outcome is not None and outcome.winner == 1
    assert outcome.reason == "no capture is possible any more; South 32, North 28"
    assert ZIGZAG.legal_moves(after) == []
    with pytest.raises(IllegalMove, match="the game is over"):
        ZIGZAG.play(after, "A")


# --- sowing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "to_move", "move", "result"),
    [
        # The first lap goes toward the centre line from either half. (The 7 seeds off
        # the path only keep the game from being provably over.)
        ("7 0 0 0 0 0 / 0 0 3 0 0 0", 1, "c", "7 0 0 1 0 1 / 0 0 0 0 1 0"),  # D e F
        ("0 0 0 0 0 7 / 0 0 0 3 0 0", 1, "d", "1 0 1 0 0 7 / 0 1 0 0 0 0"),  # C b A
        ("0 0 0 2 0 0 / 0 0 0 0 0 7", 2, "D", "0 1 0 0 0 0 / 0 0 1 0 0 7"),  # c B
        ("0 0 2 0 0 0 / 7 0 0 0 0 0", 2, "c", "0 0 0 0 1 0 / 7 0 0 1 0 0"),  # d E
        # Off the right edge the seed goes straight across, then leftward: D e F f.
        ("7 0 0 0 0 0 / 0 0 4 0 0 0", 1, "c", "7 0 0 1 0 1 / 0 0 0 0 1 1"),
        # Off the left edge likewise: C b A a B; B was empty: capture b (sown this move).
        ("0 0 0 0 0 7 / 0 0 0 5 0 0", 1, "d", "1 1 1 0 0 7 / 1 0 0 0 0 0"),
    ],
)
def test_it_sows_zig_zag_toward_the_centre_and_turns_at_the_edges(
    start: str, to_move: int, move: str, result: str
) -> None:
    state = board(ZIGZAG, start, to_move)
    assert drawn(ZIGZAG, ZIGZAG.play(state, move)) == result


def test_it_ends_a_move_on_an_occupied_opponent_pit_and_on_an_empty_own_pit() -> None:
    # South b (2 seeds): C, d. d is South's and was empty: the move ends.
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 2 0 0 0 1")
    after = ZIGZAG.play(state, "b")
    assert drawn(ZIGZAG, after) == "1 0 1 0 0 1 / 0 0 0 1 0 1"
    # South f (1 seed, right half: leftward) -> E, which holds a seed: the move ends.
    state = board(ZIGZAG, "1 0 0 0 1 1 / 0 0 0 0 0 1")
    after = ZIGZAG.play(state, "f")
    assert drawn(ZIGZAG, after) == "1 0 0 0 2 1 / 0 0 0 0 0 0"
    assert ZIGZAG.to_json(after)["captured"] == ZIGZAG.to_json(state)["captured"]


def test_a_relay_lap_passes_through_the_emptied_origin_pit() -> None:
    # pits=2: the path from a runs a B b A a B ...
    rules = get_rules("zigzag", pits=2, seeds=3)
    state = board(rules, "0 0 / 2 2")
    # a (2): B=1, b=3 -> relay b (3): A=1, a=1 (the emptied origin), B=2; B held 1: ends.
    assert drawn(rules, rules.play(state, "a")) == "1 2 / 1 0"
    # Ending in the emptied origin: a (2): B=1, b=2 -> relay b (2): A=1, a=1; a was empty.
    state = board(rules, "0 0 / 2 1")
    assert drawn(rules, rules.play(state, "a")) == "1 1 / 1 0"


def test_a_lift_of_more_seeds_than_pits_sows_whole_rounds_including_the_origin() -> None:
    rules = get_rules("zigzag", pits=2, seeds=49)
    # a (49) on a 4-pit cycle: 12 rounds (every pit, a included, +12), then 1 more into B.
    after = rules.play(rules.initial_state(), "a")
    assert drawn(rules, after) == "61 62 / 12 61"
    assert rules.to_move(after) == 2


def test_large_boards_sow_toward_the_centre_from_both_middle_columns() -> None:
    rules = get_rules("zigzag", pits=26, seeds=1)
    state = rules.initial_state()
    assert rules.legal_moves(state) == list("abcdefghijklmnopqrstuvwxyz")
    # m is column 13 of 26 (left half): rightward into N (full): the move ends.
    after = rules.play(state, "m")
    assert rules.to_json(after)["rows"][0][13] == 2
    assert rules.to_json(after)["rows"][1][12] == 0
    # n (right half) goes leftward into M.
    after = rules.play(state, "n")
    assert rules.to_json(after)["rows"][0][12] == 2


def test_seeds_1_and_pits_2_is_a_playable_game() -> None:
    rules = get_rules("zigzag", pits=2, seeds=1)
    state = rules.initial_state()
    assert drawn(rules, state) == "1 1 / 1 1"
    assert rules.legal_moves(state) == ["a", "b"]
    # a -> B (full): ends. North: A -> b (full? b holds 1): ends. Seeds pile up.
    state = play(rules, state, "a")
    assert drawn(rules, state) == "1 2 / 0 1"


# --- captures -----------------------------------------------------------------------------------


def test_a_capture_takes_the_movers_pit_across_and_the_capturing_seed_stays() -> None:
    # South b (1): into empty C; across is c (4): captured. C keeps the sown seed.
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 1 4 0 0 1", captured=(26, 26))
    after = ZIGZAG.play(state, "b")
    assert drawn(ZIGZAG, after) == "1 0 1 0 0 1 / 0 0 0 0 0 1"
    assert ZIGZAG.to_json(after)["captured"] == [30, 26]


def test_landing_opposite_an_empty_pit_captures_nothing_and_is_not_a_capture() -> None:
    # South b (1) -> C, empty, opposite the emptied b: a rule-3 landing taking nothing.
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 1 0 0 0 1", captured=(26, 30))
    data = ZIGZAG.to_json(state)
    data["last_capturer"] = 2  # North captured last
    state = ZIGZAG.from_json(data)
    after = ZIGZAG.play(state, "b")
    assert ZIGZAG.to_json(after)["captured"] == [26, 30]
    assert ZIGZAG.to_json(after)["last_capturer"] == 2


# --- the no-return restriction ----------------------------------------------------------------


def test_it_forbids_sowing_a_lone_seed_straight_back() -> None:
    # South c (1) -> D (empty), across d empty: nothing captured. North's D would go back
    # to c (leftward), where it lands opposite C, empty: it would capture nothing.
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 0 1 0 0 1")
    after = ZIGZAG.play(state, "c")
    assert drawn(ZIGZAG, after) == "1 0 0 1 0 1 / 0 0 0 0 0 1"
    assert ZIGZAG.to_json(after)["no_return"] == "D"
    assert ZIGZAG.legal_moves(after) == ["A", "F"]
    with pytest.raises(IllegalMove, match="its seed would go straight back to c"):
        ZIGZAG.play(after, "d")


def test_the_same_sow_back_is_allowed_when_it_captures() -> None:
    # As above, but C holds 2: D back into c captures them.
    state = board(ZIGZAG, "1 0 2 0 0 1 / 0 0 1 0 0 1")
    after = ZIGZAG.play(state, "c")
    assert ZIGZAG.to_json(after)["no_return"] is None
    assert ZIGZAG.legal_moves(after) == ["A", "C", "D", "F"]
    before = ZIGZAG.to_json(after)["captured"][1]
    back = ZIGZAG.play(after, "D")
    assert drawn(ZIGZAG, back) == "1 0 0 0 0 1 / 0 0 1 0 0 1"
    assert ZIGZAG.to_json(back)["captured"][1] == before + 2


def test_the_restriction_lapses_after_any_other_move() -> None:
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 0 1 0 0 1")
    # c (D is now forbidden to North), A -> b (nothing across), f -> E (nothing across).
    state = play(ZIGZAG, state, "c A f")
    assert drawn(ZIGZAG, state) == "0 0 0 1 1 1 / 0 1 0 0 0 0"
    assert ZIGZAG.to_json(state)["no_return"] is None
    assert "D" in ZIGZAG.legal_moves(state)
    # The very sow-back that was forbidden: D -> c, opposite an empty C, capturing nothing.
    after = ZIGZAG.play(state, "D")
    assert drawn(ZIGZAG, after) == "0 0 0 0 1 1 / 0 1 1 0 0 0"


def test_a_single_seed_that_lands_elsewhere_sets_no_restriction() -> None:
    # South b (1) -> C (empty); North's C would go rightward to d, not back to b.
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 1 0 0 0 1")
    after = ZIGZAG.play(state, "b")
    assert ZIGZAG.to_json(after)["no_return"] is None


# --- the end of the game ------------------------------------------------------------------------


def test_the_game_ends_when_no_capture_is_reachable_although_seeds_remain() -> None:
    # South b -> C (empty), capturing c's seed. Left: A and C, one seed each, far apart:
    # whatever both players do, no lone seed can ever land opposite a non-empty pit of the
    # mover in an empty pit (the engine's search proves it); the two seeds go to South.
    state = board(ZIGZAG, "1 0 0 0 0 0 / 0 1 1 0 0 0", captured=(30, 27))
    assert ZIGZAG.outcome(state) is None
    after = ZIGZAG.play(state, "b")
    data = ZIGZAG.to_json(after)
    assert data["end"] == "no-capture"
    assert data["captured"] == [33, 27]
    assert data["rows"] == [[0] * 6, [0] * 6]


def test_the_game_goes_on_with_two_seeds_when_a_capture_is_still_reachable() -> None:
    # A and a: South a -> B captures nothing (b is empty), but then North A -> b, empty,
    # captures the seed in B.
    state = board(ZIGZAG, "1 0 0 0 0 0 / 1 0 0 0 0 0", captured=(29, 29))
    assert ZIGZAG.outcome(state) is None
    after = ZIGZAG.play(state, "a")
    assert ZIGZAG.outcome(after) is None
    assert drawn(ZIGZAG, after) == "1 1 0 0 0 0 / 0 0 0 0 0 0"
    final = ZIGZAG.play(after, "A")
    data = ZIGZAG.to_json(final)
    assert data["captured"] == [29, 31]  # B's seed, then b's as the last capturer's
    assert data["end"] == "no-capture"
    assert ZIGZAG.outcome(final) is not None and ZIGZAG.outcome(final).winner == 2


def test_a_position_that_ends_the_game_cannot_be_loaded_as_going_on() -> None:
    with pytest.raises(ValueError, match="this position ends the game"):
        board(ZIGZAG, "1 0 0 0 0 0 / 0 1 0 0 0 0")  # A and b: see the test above


def test_the_third_occurrence_of_a_position_ends_the_game() -> None:
    # A, B and c: c -> D (D now forbidden), B -> c, c -> D (full: ends), D (2) -> c B:
    # back where we started, South to move, no restriction. Nobody captures on the way,
    # though a capture stays possible (North A -> b while B is full, say).
    state = board(ZIGZAG, "1 1 0 0 0 0 / 0 0 1 0 0 0", captured=(31, 26))
    start = drawn(ZIGZAG, state)
    state = play(ZIGZAG, state, "c B c D")
    assert drawn(ZIGZAG, state) == start
    assert ZIGZAG.outcome(state) is None  # the second occurrence
    state = play(ZIGZAG, state, "c B c")
    assert ZIGZAG.outcome(state) is None
    state = ZIGZAG.play(state, "D")  # the third occurrence
    data = ZIGZAG.to_json(state)
    assert data["end"] == "repetition"
    assert data["captured"] == [34, 26]  # the seeds left go to South, the last capturer
    outcome = ZIGZAG.outcome(state)
    assert outcome is not None and outcome.winner == 1
    assert outcome.reason.startswith("the position occurred for the third time")


def test_a_capture_resets_the_repetition_count() -> None:
    state = ZIGZAG.play(ZIGZAG.initial_state(), "a")
    assert len(ZIGZAG.to_json(state)["repetition"]) == 1
    state = play(ZIGZAG, state, "D e")  # e captures
    assert ZIGZAG.to_json(state)["repetition"] == []


def test_equal_captures_are_a_draw() -> None:
    # South b -> C (empty) captures c's seed: 29 + 1 each; C's seed then goes to South too.
    state = board(ZIGZAG, "0 0 0 0 0 0 / 0 1 1 0 0 0", captured=(28, 30))
    final = ZIGZAG.play(state, "b")
    data = ZIGZAG.to_json(final)
    assert data["end"] == "no-capture"
    assert data["captured"] == [30, 30]
    outcome = ZIGZAG.outcome(final)
    assert outcome is not None and outcome.winner is None
    assert outcome.reason == "no capture is possible any more; South 30, North 30"


def test_a_player_whose_only_seed_may_not_go_back_has_no_move_and_the_game_ends() -> None:
    # North D (1, leftward) -> c, empty; across it C is empty: nothing captured. South's
    # only seed is now that one, and sowing it back to D would capture nothing (d empty).
    state = board(ZIGZAG, "1 0 0 1 0 0 / 0 0 0 0 0 0", to_move=2, captured=(30, 28))
    final = ZIGZAG.play(state, "D")
    data = ZIGZAG.to_json(final)
    assert data["end"] == "no-move"
    assert data["captured"] == [32, 28]  # A's and c's seeds to South, the last capturer
    outcome = ZIGZAG.outcome(final)
    assert outcome is not None and outcome.winner == 1
    assert outcome.reason == "South has no legal move; South 32, North 28"


# --- notation, options, JSON and text ------------------------------------------------------------


def test_a_move_is_a_column_letter_in_either_case_meaning_the_movers_pit() -> None:
    state = ZIGZAG.initial_state()
    assert ZIGZAG.canonical_move(state, " A ") == "a"
    assert ZIGZAG.play(state, "A") == ZIGZAG.play(state, "a")
    north = ZIGZAG.play(state, "a")
    assert ZIGZAG.canonical_move(north, "d") == "D"
    assert ZIGZAG.legal_moves(north) == list("ABCDEF")


@pytest.mark.parametrize(
    ("move", "message"),
    [
        ("g", "no such pit: g \\(columns a-f\\)"),
        ("", "no such pit: \\(nothing\\)"),
        ("ab", "no such pit: ab"),
        (3, "a move is a column letter, not int"),
        (None, "a move is a column letter, not NoneType"),
    ],
)
def test_it_rejects_what_is_not_a_pit(move: Any, message: str) -> None:
    with pytest.raises(IllegalMove, match=message):
        ZIGZAG.play(ZIGZAG.initial_state(), move)


def test_it_rejects_an_empty_pit() -> None:
    state = ZIGZAG.play(ZIGZAG.initial_state(), "a")
    state = ZIGZAG.play(state, "A")
    with pytest.raises(IllegalMove, match="pit a is empty"):
        ZIGZAG.play(state, "a")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pits": 7}, "pits must be an even number from 2 to 26, not 7"),
        ({"pits": 28}, "pits must be an even number from 2 to 26, not 28"),
        ({"pits": 0}, "pits must be an even number from 2 to 26, not 0"),
        ({"seeds": 4}, "seeds must be an odd number from 1 to 49, not 4"),
        ({"seeds": 51}, "seeds must be an odd number from 1 to 49, not 51"),
        ({"seeds": "x"}, "seeds must be a whole number"),
        ({"holes": 3}, "ZigZag has no option holes"),
    ],
)
def test_it_rejects_bad_options_with_a_clear_message(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptions, match=message):
        get_rules("zigzag", **options)


def test_pbmserv_option_text_is_accepted() -> None:
    rules = get_rules("zigzag", pits="8", seeds="3")
    assert rules.to_json(rules.initial_state())["rows"] == [[3] * 8, [3] * 8]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rows": [[5] * 6]}, "rows must be 2 lists of 6 pits"),
        ({"captured": [1, 0]}, "stores must be \\[North's captured, South's captured\\]"),
        ({"to_move": 3}, "to_move must be 1 or 2"),
        ({"rows": [[5] * 6, [5] * 5 + [4]]}, "hold 59 seeds, not 60"),
        ({"no_return": "A"}, "no_return A is not a pit of the player to move"),
        ({"no_return": "b"}, "the no-return pit holds the single seed"),
        ({"last_capturer": 1}, "last_capturer must be 1 or 2 once someone has captured"),
        ({"end": "resigned"}, "end must be null"),
        ({"repetition": ["1:5 5/5 5:-"]}, "bad repetition entry"),
        ({"extra": 1}, "unexpected: extra"),
    ],
)
def test_it_refuses_state_json_that_does_not_add_up(change: dict[str, Any], message: str) -> None:
    data = ZIGZAG.to_json(ZIGZAG.initial_state())
    data.update(change)
    with pytest.raises(ValueError, match=message):
        ZIGZAG.from_json(data)


def test_the_state_json_round_trips_with_the_restriction_and_history() -> None:
    state = board(ZIGZAG, "1 0 0 0 0 1 / 0 0 1 0 0 1")
    after = play(ZIGZAG, state, "c A")
    data = ZIGZAG.to_json(after)
    assert data["repetition"] == ["1:1 0 0 0 0 1/0 0 1 0 0 1:-", "2:1 0 0 1 0 1/0 0 0 0 0 1:D"]
    assert ZIGZAG.from_json(data) == after


def test_it_draws_the_board_as_the_seed_does() -> None:
    state = play(ZIGZAG, ZIGZAG.initial_state(), "a D e")
    assert ZIGZAG.render_text(state, names=("sue", "fred")) == (
        "      fred                    [0]\n"
        "      A    B    C    D    E    F\n"
        "   +----+----+----+----+----+----+\n"
        "   |  7 |  8 |  1 |  2 |  6 |  7 |\n"
        "   +----+----+----+----+----+----+\n"
        "   |  2 |  7 |  0 |  6 |  0 |  6 |\n"
        "   +----+----+----+----+----+----+\n"
        "      a    b    c    d    e    f\n"
        "      sue                     [8]\n"
    )
    assert ZIGZAG.render_text(state).startswith("      North")
