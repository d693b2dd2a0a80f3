"""ZigZag's endgame databases (docs/ENDGAMES.md, "ZigZag"): the compiled moves and the half
turn against the engine, values worked out by hand from RULES.md, the cycle value, the
retrograde solver against an independent forward search on every position of small option
sets, and the product's probe and GET /api/endgame reading a database built here."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test import Client

from bots.search import think
from devtools.endgames import zigzag_solve as Z
from devtools.endgames import zigzag_verify as V
from devtools.endgames.zigzag_arrays import sow, tables
from devtools.endgames.zigzag_forward import Forward
from games import endgames
from games.rules.notation import position_text
from games.rules.zigzag import NORTH, SOUTH, ZigZagRules, ZigZagState

SIX = Z.rules_of(6, 5)


@pytest.fixture(scope="module")
def six() -> Z.Database:
    """The default board, every position with at most 4 seeds on it."""
    return Z.build(6, 5, 4)


@pytest.fixture(scope="module")
def small() -> Z.Database:
    """2 pits x 3 seeds, solved whole (12 seeds)."""
    return Z.build(2, 3, 12)


def random_state(rules: ZigZagRules, rng: random.Random, seeds: int, to_move: int) -> ZigZagState:
    pits = [0] * rules.size
    for _ in range(seeds):
        pits[rng.randrange(rules.size)] += 1
    last = rng.choice([SOUTH, NORTH])
    captured = (rules.total - seeds, 0) if last == SOUTH else (0, rules.total - seeds)
    return ZigZagState(rules.pack(pits), captured, to_move, -1, last)


@pytest.mark.parametrize("options", [(6, 5), (4, 3), (2, 7)])
def test_the_compiled_moves_are_the_engines(options: tuple[int, int]) -> None:
    rules = Z.rules_of(*options)
    arrays = tables(rules)
    rng = random.Random(3)
    out = np.zeros(rules.size, dtype=np.int64)
    for _ in range(300):
        state = random_state(rules, rng, rng.randint(1, 40), SOUTH)
        counts = np.array(rules.unpack(state.board), dtype=np.int64)
        for pit in rules.rows[SOUTH]:
            if not counts[pit]:
                continue
            child = rules._sow(state.board, pit, SOUTH)
            taken, no_return = sow(
                counts, pit, arrays.columns, arrays.order, arrays.where, arrays.step,
                arrays.across, arrays.first, out,
            )  # fmt: skip
            assert (rules.pack([int(c) for c in out]), taken, no_return) == (
                child.board,
                child.taken,
                child.no_return,
            )


@pytest.mark.parametrize("options", [(6, 5), (4, 3), (2, 7)])
def test_north_to_move_is_south_to_move_on_the_board_turned_half_round(
    options: tuple[int, int],
) -> None:
    """Pit p -> 2 * pits - 1 - p: every move, capture, forbidden pit and end of the game is
    the same through the engine (so the databases store South to move only)."""
    rules = Z.rules_of(*options)
    size, n = rules.size, rules.columns
    rng = random.Random(8)

    def turned(board: int) -> int:
        return rules.pack(list(reversed(rules.unpack(board))))

    for _ in range(300):
        south = random_state(rules, rng, rng.randint(1, 20), SOUTH)
        north = south._replace(board=turned(south.board), to_move=NORTH)
        north = north._replace(captured=south.captured[::-1], last_capturer=3 - south.last_capturer)
        for move in rules.legal_moves(south):
            mirror = rules.names[size - 1 - rules.names.index(move)]
            assert mirror in rules.legal_moves(north)
            a, b = rules.play(south, move), rules.play(north, mirror)
            assert turned(a.board) == b.board and a.captured == b.captured[::-1]
            assert a.no_return == (size - 1 - b.no_return if b.no_return >= 0 else -1)
            assert a.end == b.end
        assert len(rules.legal_moves(south)) == len(rules.legal_moves(north))
    assert n == size // 2


# Positions of the 6x5 board by hand (RULES.md): pits top row A..F (North's), bottom a..f
# (South's, to move); "capturer" 0 the mover captured last, 1 the opponent.
HAND = [
    # a and b hold one seed each: a's seed (left half: rightward, to the other row) lands
    # in the empty B and captures b's seed; the seed left can never capture again (a capture
    # takes seeds from the mover's pit across, and there are none), so the game ends and
    # the mover, last capturer, gets it: +2 in 1 move, whoever captured before.
    ({"a": 1, "b": 1}, 0, (2, 1)),
    ({"a": 1, "b": 1}, 1, (2, 1)),
    # One seed: no capture can ever happen (RULES.md's end-of-game example); it goes to the
    # last capturer at once: the cycle value, distance 0.
    ({"a": 1}, 0, (1, 0)),
    ({"a": 1}, 1, (-1, 0)),
    ({"C": 1}, 1, (-1, 0)),  # the mover has no seed: no legal move, the game is over
]


@pytest.mark.parametrize(("pits", "capturer", "value"), HAND)
def test_small_positions_worked_out_by_hand(
    six: Z.Database, pits: dict[str, int], capturer: int, value: tuple[int, int]
) -> None:
    counts = tuple(pits.get(name, 0) for name in SIX.names)
    assert six.value(counts, 0, capturer) == value
    # The engine agrees: the forward search on its moves, and its own end of the game.
    board, _pit, last = Z.engine_position(six, counts, 0, capturer, SOUTH)
    state = Forward(SIX).state(board, SOUTH, -1, last)
    if state.end:
        outcome = SIX.outcome(state)
        assert outcome is not None and value[1] == 0
        mine, theirs = state.captured
        assert (
            mine - theirs - (SIX.total - sum(counts)) * (1 if last == SOUTH else -1) == (value[0])
        )
    else:
        assert Forward(SIX).margin(state) == value[0]


def test_the_cycle_value(small: Z.Database) -> None:
    """Where neither side will leave the layer, a position is worth the seeds left to the
    last capturer: +k for the mover, -k for the opponent, 0 for nobody (at distance 0), also
    where a capture could still happen; and every position the engine says is over (no
    capture can occur any more, or no legal move) is worth exactly that, as its `outcome`
    scores it."""
    rules = Z.rules_of(2, 3)
    start = rules.initial_state()
    assert rules.capture_possible(start)
    # 2x3 from the start: a capture could happen, but neither side can force a gain, so
    # play goes round; nobody has captured, so the value is 0 and no capture follows.
    assert small.value(tuple(rules.unpack(start.board)), 0, 0) == (0, 0)
    forward = Forward(rules)
    kept = ended = 0
    for index in range(len(small.values)):
        found = Z.position_at(small, index)
        if found is None:
            continue
        pits, forbidden, capturer = found
        k = sum(pits)
        cycle = 0 if k == rules.total else k if capturer == 0 else -k
        board, pit, last = Z.engine_position(small, pits, forbidden, capturer, SOUTH)
        state = forward.state(board, SOUTH, pit, last)
        margin, distance = small.value(*found)
        if state.end:
            outcome = rules.outcome(state)
            assert outcome is not None
            assert (margin, distance) == (cycle, 0)
            before = (rules.total - k) * (1 if last == SOUTH else -1)
            assert state.captured[0] - state.captured[1] - before == cycle
            ended += 1
        elif margin == cycle and distance == 0 and cycle and rules.capture_possible(state):
            kept += 1  # a capture could happen, but the mover keeps what it has
    assert ended > 100 and kept > 100


def test_the_solver_agrees_with_the_forward_search_on_every_position(small: Z.Database) -> None:
    """Every position of 2 pits x 3 seeds and of 2 x 5 up to 12 seeds, for both sides (South
    to move, and North to move on the board turned half round), against the forward search
    on the pure engine, which reads nothing of the database."""
    for database in (small, Z.build(2, 5, 12)):
        rules = Z.rules_of(database.columns, database.seeds)
        forward = Forward(rules)
        checked = 0
        for index in range(len(database.values)):
            found = Z.position_at(database, index)
            if found is None:
                continue
            for to_move in (SOUTH, NORTH):
                board, pit, last = Z.engine_position(database, *found, to_move)
                state = forward.state(board, to_move, pit, last)
                if state.end:
                    continue
                assert forward.margin(state) == database.value(*found)[0], (found, to_move)
                checked += 1
        assert checked > 4000


def test_every_value_is_what_its_moves_make_it(small: Z.Database, six: Z.Database) -> None:
    """Margin and distance, through the engine's moves (`expected`), on every position of
    2x3 and a sample of 6x5's; and a changed value is caught."""
    rules = Z.rules_of(2, 3)
    forward = Forward(rules)
    for index in range(len(small.values)):
        found = Z.position_at(small, index)
        if found is None:
            continue
        board, pit, last = Z.engine_position(small, *found, SOUTH)
        state = forward.state(board, SOUTH, pit, last)
        if not state.end:
            assert V.expected(small, rules, state) == small.value(*found), found
    assert not V.local(six, 2000).wrong
    assert not V.forward(six, 500).wrong
    # A changed value is caught: a and b holding a seed each is +2 in 1 (HAND), not +3.
    broken = Z.Database(six.columns, six.seeds, six.most, six.offsets, six.values.copy(), six.ways)
    counts = tuple({"a": 1, "b": 1}.get(name, 0) for name in SIX.names)
    broken.values[broken.place(counts, 0, 0), 0] += 1
    board, _pit, last = Z.engine_position(broken, counts, 0, 0, SOUTH)
    state = Forward(SIX).state(board, SOUTH, -1, last)
    assert V.expected(broken, SIX, state) == (2, 1) != broken.value(counts, 0, 0)


# --- the product ---------------------------------------------------------------------------

OPTIONS = {"pits": 2, "seeds": 3}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Z.Database]:
    """2x3 solved whole, and 6x5 up to 4 seeds, as the build command writes them."""
    directory = tmp_path_factory.mktemp("zigzag")
    path = directory / endgames.zigzag_file(2, 3)
    database = Z.build(2, 3, 12, into=path)
    Z.save(database, path)
    six = directory / endgames.zigzag_file(6, 5)
    Z.save(Z.build(6, 5, 4, into=six), six)
    return directory, database


@pytest.fixture
def covered(built: tuple[Path, Z.Database], settings: Any) -> Iterator[Z.Database]:
    settings.ENDGAMES_DIR = built[0]
    endgames.open_zigzag.cache_clear()
    yield built[1]
    endgames.open_zigzag.cache_clear()


def played(rules: ZigZagRules, rng: random.Random) -> Iterator[ZigZagState]:
    """The positions of a random game, to its end."""
    state = rules.initial_state()
    while not state.end:
        yield state
        state = rules.play(state, rng.choice(rules.legal_moves(state)))


def test_the_probe_reads_what_the_builder_wrote(covered: Z.Database) -> None:
    rules = Z.rules_of(2, 3)
    table = endgames.zigzag_table(OPTIONS)
    assert table is not None and table.most == 12
    rng = random.Random(5)
    search = Forward(rules)
    probed = 0
    for _ in range(10):
        for state in played(rules, rng):
            verdict = endgames.probe("zigzag", OPTIONS, state)
            if verdict is None:  # a position met twice already since the last capture
                continue
            assert verdict.margin is not None
            final = search.margin(state._replace(history=()))
            mine, theirs = state.captured if state.to_move == SOUTH else state.captured[::-1]
            assert verdict.margin == mine - theirs + final
            assert verdict.result == ("win" if verdict.margin > 0 else
                                      "loss" if verdict.margin < 0 else "draw")  # fmt: skip
            best = endgames.best_move(table, rules, state)
            assert best is not None and best in rules.legal_moves(state)
            kept = endgames.zigzag_move(table, rules, state, best)
            assert kept is not None and kept.margin == verdict.margin
            probed += 1
    assert probed > 100
    # Not covered: other options, or the default board past its 4 seeds.
    assert (
        endgames.probe("zigzag", {"pits": 4, "seeds": 3}, Z.rules_of(4, 3).initial_state()) is None
    )
    assert endgames.probe("zigzag", {}, SIX.initial_state()) is None
    assert endgames.probe("diffusion", {}, SIX.initial_state()) is None


@pytest.mark.django_db
def test_the_api_answers_a_zigzag_position_with_its_margin(covered: Z.Database) -> None:
    rules = Z.rules_of(2, 3)
    rng = random.Random(9)
    asked = 0
    for state in played(rules, rng):
        text = str(position_text(rules, state))
        answer = Client().get(
            "/api/endgame", {"game": "zigzag", "options": "pits=2,seeds=3", "position": text}
        )
        assert answer.status_code == 200, answer.content
        data = answer.json()
        verdict = endgames.probe("zigzag", OPTIONS, state)
        assert verdict is not None
        assert (data["covered"], data["most"], data["margin"], data["distance"]) == (
            True,
            12,
            verdict.margin,
            verdict.moves,
        )
        # The best move first, and it keeps the margin.
        assert data["moves"][0]["margin"] == data["margin"]
        assert len(data["moves"]) == len(rules.legal_moves(state))
        asked += 1
    assert asked >= 2
    other = Client().get("/api/endgame", {"game": "zigzag"}).json()
    assert (other["covered"], other["most"], other["margin"]) == (False, 4, None)


@pytest.mark.django_db
def test_a_finished_zigzag_game_is_answered_by_game_and_ply(covered: Z.Database) -> None:
    from games import services
    from tests.games_helpers import new_game

    rules = Z.rules_of(2, 3)
    game = new_game("zigzag", OPTIONS)
    rng = random.Random(2)
    state = rules.initial_state()
    while not state.end:
        move = rng.choice(rules.legal_moves(state))
        game.refresh_from_db()
        user = game.player1 if state.to_move == SOUTH else game.player2
        services.play_move(game_id=game.pk, user=user, move=move, ply=game.ply)
        state = rules.play(state, move)
    game.refresh_from_db()
    assert game.status == "finished"
    client = Client()
    answered = 0
    for ply in range(0, game.ply):
        by_game = client.get("/api/endgame", {"game_id": game.pk, "ply": ply}).json()
        text = by_game["position"]
        by_text = client.get(
            "/api/endgame", {"game": "zigzag", "options": "pits=2,seeds=3", "position": text}
        ).json()
        assert by_game == by_text
        answered += by_game["covered"]
    assert answered >= 1


def test_level_five_plays_the_database_s_best_move_where_it_covers_the_position(
    built: tuple[Path, Z.Database],
) -> None:
    directory = str(built[0])
    rules = Z.rules_of(2, 3)
    table = endgames.open_zigzag(directory, 2, 3)
    assert table is not None
    rng = random.Random(11)
    for state in list(played(rules, rng))[:12]:
        best = endgames.best_move(table, rules, state)
        if best is None:  # met twice already: not covered, the search decides
            continue
        chosen = think(rules, state, 5, seed=1, endgames_dir=directory)
        assert (chosen.move, chosen.playouts) == (best, 0)
        # Never a worse margin than the position's own.
        verdict = endgames.zigzag_move(table, rules, state, chosen.move)
        probed = table.probe_state(state)
        assert verdict is not None and probed is not None and verdict.margin == probed.margin
    # Level 4 does not read it: it searches.
    assert think(rules, rules.initial_state(), 4, seed=1, endgames_dir=directory).playouts > 0
