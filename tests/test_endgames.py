"""The endgame tooling's compiled Diffusion (devtools/endgames/): the same moves as the engine,
the half-turn symmetry it rests on, and the counts of the spaces (docs/ENDGAMES.md)."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from devtools.endgames import consistency, spaces
from devtools.endgames import diffusion_arrays as arrays
from devtools.endgames import diffusion_solve as S
from games.rules import get_rules
from games.rules.diffusion import DiffusionState

pytestmark = pytest.mark.sqlite(reason="pure code: no database")

RULES = get_rules("diffusion")
TABLES = arrays.tables()


def canonical(pits: tuple[int, ...], to_move: int) -> tuple[int, ...]:
    """The board as South sees it to move: North's turned half round."""
    return pits if to_move == 1 else tuple(reversed(pits))


def compiled_move(pits: tuple[int, ...], pit: int) -> tuple[int, int]:
    """(result, successor's index) of South scooping `pit`, in compiled code."""
    out = np.zeros(arrays.SIZE, dtype=np.int8)
    result = arrays.play(
        np.array(pits, dtype=np.int8),
        pit,
        TABLES.targets,
        TABLES.maximum,
        TABLES.block_of,
        TABLES.block_pits,
        out,
    )
    return result, arrays.turned(out)


def test_the_compiled_moves_are_the_engines_on_random_positions_for_both_sides() -> None:
    rng = random.Random(7)
    compared = 0
    while compared < 20_000:
        pits = tuple(rng.randint(0, 5) for _ in range(12))
        if not any(pits[:3] + pits[6:9]) or not any(pits[3:6] + pits[9:]):
            continue  # a block already empty: the game was over
        for to_move in (1, 2):
            state = DiffusionState(pits, (0, 0), to_move)
            for move in RULES.legal_moves(state):
                after = RULES.play(state, move)
                pit = RULES.index[move]
                result, index = compiled_move(
                    canonical(pits, to_move), pit if to_move == 1 else 11 - pit
                )
                if after.winner:
                    expected = arrays.WINS if after.winner == to_move else arrays.LOSES
                    assert result == expected, (pits, to_move, move)
                else:
                    assert result == arrays.GOES_ON, (pits, to_move, move)
                    following = canonical(after.pits, after.to_move)
                    assert index == arrays.encode(np.array(following, dtype=np.int8))
                compared += 1


@pytest.mark.parametrize(
    ("pits", "move", "rows_after"),
    [
        # RULES.md section 1, the worked examples (top row F..A, bottom row G..L).
        ((4,) * 12, "I", ([4, 5, 5, 5, 4, 4], [4, 4, 0, 5, 4, 4])),
        ((3, 0, 2, 0, 0, 2, 0, 0, 0, 0, 1, 0), "F", ([0, 0, 2, 0, 0, 2], [1, 0, 0, 0, 1, 0])),
        ((2, 0, 1, 4, 0, 1, 0, 0, 5, 5, 0, 0), "C", ([2, 0, 2, 0, 0, 1], [0, 0, 5, 5, 1, 0])),
    ],
)
def test_the_worked_examples_compiled(
    pits: tuple[int, ...], move: str, rows_after: tuple[list[int], list[int]]
) -> None:
    result, index = compiled_move(pits, RULES.index[move])
    assert result == arrays.GOES_ON
    digits = np.zeros(12, dtype=np.int8)
    arrays.decode(index, digits)
    # The successor is North's to move: turned back, it is the board as the rules print it.
    assert tuple(reversed(digits.tolist())) == (*rows_after[0], *rows_after[1])


def test_positions_by_stones_are_counted_exactly() -> None:
    assert spaces.by_stones([1, 1]) == [1, 2, 1]
    assert spaces.by_stones([2, 1]) == [1, 2, 2, 1]
    counts = spaces.by_stones([5] * 12)
    assert sum(counts) == 6**12 == arrays.SPACE
    assert counts[0] == counts[60] == 1 and counts[1] == 12
    # Boards of 2 stones: two in one pit (12) or one in each of two (66).
    assert counts[2] == 12 + 66
    assert counts == counts[::-1]  # k stones placed, or 5 - k missing from each pit


def test_the_compiled_search_reaches_what_the_engine_reaches_from_a_small_position() -> None:
    """From a position of 7 stones, every position the engine's moves lead to (turned to
    South's view, counted once), against the compiled search's count by stones."""
    start = (1, 0, 2, 0, 0, 1, 0, 1, 0, 1, 1, 0)
    seen = {start}
    todo = deque([start])
    expected = [0] * 61
    while todo:
        pits = todo.popleft()
        expected[sum(pits)] += 1
        for move in RULES.legal_moves(DiffusionState(pits, (0, 0), 1)):
            after = RULES.play(DiffusionState(pits, (0, 0), 1), move)
            if after.winner:
                continue
            following = canonical(after.pits, after.to_move)
            if following not in seen:
                seen.add(following)
                todo.append(following)
    found = np.zeros(61, dtype=np.int64)
    ends = np.zeros(2, dtype=np.int64)
    expanded = spaces._reach(
        arrays.encode(np.array(start, dtype=np.int8)),
        np.zeros(arrays.SPACE // 8 + 1, dtype=np.uint8),
        np.empty(1 << 16, dtype=np.uint32),
        TABLES.targets,
        TABLES.maximum,
        TABLES.block_of,
        TABLES.block_pits,
        found,
        ends,
    )
    assert expanded == len(seen) > 10
    assert found.tolist() == expected
    assert ends[0] > 0 and ends[1] > 0


def boards_in_play(most: int, pits: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Every board of at most `most` stones where both blocks hold some."""
    if len(pits) == 12:
        return [pits] if any(pits[:3] + pits[6:9]) and any(pits[3:6] + pits[9:]) else []
    return [
        board
        for stones in range(min(5, most - sum(pits)) + 1)
        for board in boards_in_play(most, (*pits, stones))
    ]


def engine_values(most: int) -> dict[tuple[int, ...], int]:
    """Every position in play with at most `most` stones, South to move, its code by plain
    value iteration on the engine's own moves (no layers, no ranks, no compiled code):
    round d finds the wins in d and the losses in d from the results of rounds before."""
    boards = boards_in_play(most)
    moves = {}
    for pits in boards:
        state = DiffusionState(tuple(pits), (0, 0), 1)
        outcomes = []
        for move in RULES.legal_moves(state):
            after = RULES.play(state, move)
            if after.winner:
                outcomes.append("win" if after.winner == 1 else "loss")
            else:
                outcomes.append(canonical(after.pits, after.to_move))
        moves[tuple(pits)] = outcomes
    known: dict[tuple[int, ...], int] = {}
    for distance in range(1, 400):
        found = {}
        for pits, outcomes in moves.items():
            if pits in known:
                continue
            if any(
                (o == "win" and distance == 1)
                or (o not in ("win", "loss") and known.get(o, 0) == S.LOSS + distance - 1)
                for o in outcomes
            ):
                found[pits] = distance
                continue
            longest = 0
            for o in outcomes:
                if o == "loss":
                    longest = max(longest, 1)
                elif o == "win" or not 0 < known.get(o, 0) < S.LOSS:
                    break
                else:
                    longest = max(longest, known[o] + 1)
            else:
                if longest == distance:
                    found[pits] = S.LOSS + distance
        known.update(found)
    return known


def test_the_database_is_what_plain_value_iteration_finds_on_small_positions() -> None:
    database = S.build(5)
    expected = engine_values(5)
    assert len(expected) > 3_000
    for pits, code in expected.items():
        assert database.code(pits) == code, pits
    # Every position value iteration leaves undecided is a draw in the database.
    draws = [pits for pits in boards_in_play(5) if pits not in expected]
    assert all(database.code(pits) == 0 for pits in draws)


@pytest.fixture(scope="module")
def nine() -> S.Database:
    """Every position of at most 9 stones (built once for the tests that read it)."""
    return S.build(9)


def test_every_position_checked_through_the_engine_agrees_with_the_database(
    nine: S.Database,
) -> None:
    database = S.Database(nine.most, nine.offsets, nine.codes.copy(), nine.ways)
    checked, wrong = S.verify(database, 3_000, seed=3)
    assert checked == 3_000 and wrong == []
    # A code changed is found.
    pits = (1, 0, 2, 0, 0, 1, 0, 1, 0, 1, 1, 0)
    right = database.code(pits)
    assert S.expected_code(database, RULES, pits) == right
    where = int(database.offsets[7]) + S.rank(np.array(pits, dtype=np.int8), 7, database.ways)
    database.codes[where] = right + 1
    assert S.expected_code(database, RULES, pits) != database.code(pits)


def test_a_build_stopped_half_way_goes_on_from_its_last_layer(tmp_path: Path) -> None:
    whole = S.build(8).codes.copy()
    out = tmp_path / "diffusion-8.bin"
    said: list[str] = []
    S.build(8, into=out)
    # As if stopped after layer 4: the header says 5 layers are done, the rest is lost.
    (tmp_path / "diffusion-8.bin.json").write_text('{"most": 8, "done": 5}\n')
    codes = np.memmap(out, dtype="<u2", mode="r+")
    start = int(S.build(4).offsets[-1])
    codes[start:] = 0
    codes.flush()
    database = S.build(8, said.append, into=out)
    assert said[0] == "  layers 0 to 4 were built before: going on from 5"
    assert len(said) == 1 + 4  # layers 5 to 8 built again, not the others
    assert np.array_equal(np.asarray(database.codes), whole)
    digest = S.save(database, out)
    assert np.array_equal(np.asarray(S.load(out).codes), whole)
    assert len(digest) == 64


def test_four_rank_diffusion_is_solved_the_same_way() -> None:
    """Four-rank's board (32 pits, inner pits hold 6) through the same builder: every
    position of at most 3 stones against plain value iteration on its engine, and a sample
    of 5 stones against its moves through the engine."""
    rules = get_rules("four-rank-diffusion")
    database = S.build(5, game="four-rank-diffusion")
    south = [pit for pit in range(32) if rules.block_of[pit] == 0]
    north = [pit for pit in range(32) if rules.block_of[pit] == 1]

    def boards(most: int, pits: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
        if len(pits) == 32:
            in_play = any(pits[p] for p in south) and any(pits[p] for p in north)
            return [pits] if in_play else []
        room = min(rules.maximum[len(pits)], most - sum(pits))
        return [b for n in range(room + 1) for b in boards(most, (*pits, n))]

    known: dict[tuple[int, ...], int] = {}
    outcomes = {}
    for pits in boards(3):
        state = DiffusionState(pits, (0, 0), 1)
        outcomes[pits] = [
            ("win" if after.winner == 1 else "loss")
            if after.winner
            else tuple(reversed(after.pits))
            for after in (rules.play(state, move) for move in rules.legal_moves(state))
        ]
    for distance in range(1, 100):
        found = {}
        for pits, results in outcomes.items():
            if pits in known:
                continue
            if any(
                (o == "win" and distance == 1) or known.get(o) == S.LOSS + distance - 1
                for o in results
            ):
                found[pits] = distance
            elif all(o == "loss" or 0 < known.get(o, 0) < S.LOSS for o in results) and (
                max(1 if o == "loss" else known[o] + 1 for o in results) == distance
            ):
                found[pits] = S.LOSS + distance
        known.update(found)
    assert len(outcomes) > 4_000 and len(known) == len(outcomes)  # no draws
    for pits, code in known.items():
        assert database.code(pits) == code, pits
    checked, wrong = S.verify(database, 2_000, seed=8)
    assert checked == 2_000 and wrong == []


def test_every_position_of_a_database_is_consistent_with_its_moves_and_a_change_is_found(
    nine: S.Database,
) -> None:
    database = S.Database(nine.most, nine.offsets, nine.codes.copy(), nine.ways)
    layers = range(database.most + 1)
    checked, wrong, first = consistency.check(
        database.codes, database.offsets, database.ways, TABLES, layers
    )
    in_play = sum(1 for code in database.codes if code)  # no draws: every code in play is set
    assert (checked, wrong, first) == (in_play, 0, -1)
    # One position's distance changed by one is found, where it is.
    pits = (1, 0, 2, 0, 0, 1, 0, 1, 0, 1, 1, 0)
    where = int(database.offsets[7]) + S.rank(np.array(pits, dtype=np.int8), 7, database.ways)
    database.codes[where] += 1
    _, wrong, first = consistency.check(
        database.codes, database.offsets, database.ways, TABLES, layers
    )
    # The position itself, and the positions whose value read it, disagree now.
    assert wrong >= 1 and 0 <= first <= where


def test_the_verify_command_checks_every_position_with_all(tmp_path: Path) -> None:
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "diffusion-6.bin"
    S.save(S.build(6, into=path), path)
    out = StringIO()
    call_command("endgames", "verify", "--db", str(path), "--samples", "200", "--all", stdout=out)
    said = out.getvalue()
    in_play = sum(1 for code in S.load(path).codes if code)
    assert f"every position: {in_play:,} checked, 0 disagreements" in said


def test_a_saved_database_whose_array_was_changed_is_refused_on_load(tmp_path: Path) -> None:
    out = tmp_path / "diffusion-4.bin"
    database = S.build(4)
    S.save(database, out)
    assert np.array_equal(np.asarray(S.load(out).codes), np.asarray(database.codes))
    codes = np.memmap(out, dtype="<u2", mode="r+")
    codes[7] ^= 1  # one bit of one position
    codes.flush()
    with pytest.raises(ValueError, match="does not match its checksum"):
        S.load(out)


def test_marked_positions_are_valued_as_the_database_reads_each_one() -> None:
    database = S.build(6)
    rng = random.Random(5)
    seen = np.zeros(arrays.BASE**7 // 8 + 1, dtype=np.uint8)  # pits 0 to 6 only
    marked: set[tuple[int, ...]] = set()
    while len(marked) < 300:
        pits = [0] * arrays.SIZE
        for _ in range(rng.randint(1, 6)):
            pits[rng.randrange(7)] += 1
        if max(pits) < arrays.BASE:
            marked.add(tuple(pits))
    marked.add((5, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))  # nine stones: beyond the database
    for pits in marked:
        index = arrays.encode(np.array(pits, dtype=np.int8))
        seen[index >> 3] |= 1 << (index & 7)
    values = S.values_of(database, seen)
    codes = [database.code(pits) for pits in marked if sum(pits) <= 6]
    assert sum(values.drawn) == sum(1 for code in codes if code == 0)
    assert sum(values.won) == sum(1 for code in codes if 0 < code < S.LOSS)
    assert sum(values.lost) == sum(1 for code in codes if code > S.LOSS)
    assert values.beyond == 1
    assert values.longest_win == max(code for code in codes if 0 < code < S.LOSS)
    for k in range(1, 7):
        assert values.won[k] + values.lost[k] + values.drawn[k] == sum(
            1 for pits in marked if sum(pits) == k
        )
