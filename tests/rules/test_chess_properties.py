"""Property tests for Diffusion Chess (hypothesis): random games checked against RULES.md.

Games are played with `random_move`, since listing every path of a big group is out of
reach. Each move is compared with a plain model of RULES.md written on cell names (walk,
swap, echo); destinations offered to the client are compared with a literal search of
every self-avoiding path.
"""

from __future__ import annotations

import copy
import json
import random
from itertools import islice, pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games.rules.chess  # noqa: F401  (registers the game)
from games.rules import IllegalMove, get_rules
from tests.rules.test_chess import groups

RULES: Any = get_rules("diffusion-chess")
FILES = "abcdefghijklmnopqrs"
MAX_MOVES = 2000  # random games end after a few dozen moves; only a broken engine gets here
COLOURS = {1: ("white", "black"), 2: ("black", "white")}


def xy(cell: str) -> tuple[int, int]:
    return FILES.index(cell[0]), int(cell[1:]) - 1


def shifted(cell: str, dx: int, dy: int) -> str | None:
    x, y = xy(cell)
    if 0 <= x + dx < 19 and 0 <= y + dy < 19:
        return f"{FILES[x + dx]}{y + dy + 1}"
    return None


def neighbours(cell: str) -> list[str]:
    return [n for d in ((0, 1), (1, 0), (0, -1), (-1, 0)) if (n := shifted(cell, *d))]


def stranded(stones: set[str], king: str) -> bool:
    return not any(n in stones for n in neighbours(king))


def model_move(data: dict[str, Any], move: str) -> dict[str, Any]:
    """RULES.md's move on the JSON: where every stone, crown and size is afterwards."""
    mover, other = COLOURS[data["to_move"]]
    own, opp = set(data[mover]), set(data[other])
    sizes, kings = dict(data["sizes"]), dict(data["kings"])
    if move == "echo":
        # Repeat the directions of the last normal move from where its stone now stands.
        path = data["last_move"].split("-")
        start = end = before = path[-1]
        captured = False
        for a, b in pairwise(path):
            (ax, ay), (bx, by) = xy(a), xy(b)
            n = shifted(end, bx - ax, by - ay)
            if n is None or n in own or (n in opp and sizes[n] < sizes[start]):
                break
            before, end = end, n
            if n in opp:
                captured = True
                break
    else:
        path = move.split("-")
        start, end, before = path[0], path[-1], path[-2]
        captured = end in opp
    assert end != start, "a move makes a step"
    size = sizes.pop(start)
    own.remove(start)
    own.add(end)
    if captured:
        sizes[before] = sizes.pop(end)
        opp.remove(end)
        opp.add(before)
        if kings[other] == end:
            kings[other] = before
    sizes[end] = size
    if kings[mover] == start:
        kings[mover] = end
    return {mover: sorted(own), other: sorted(opp), "kings": kings, "sizes": sizes}


def model_reach(data: dict[str, Any], stone: str) -> dict[str, int]:
    """Every destination of `stone` and its fewest steps, by trying every simple path."""
    mover, other = COLOURS[data["to_move"]]
    own, opp, sizes = set(data[mover]), set(data[other]), data["sizes"]
    size = sizes[stone]
    best: dict[str, int] = {}

    def walk(cell: str, visited: set[str], steps: int) -> None:
        for n in neighbours(cell):
            if n in visited or n in own:
                continue
            if n in opp:
                if sizes[n] >= size:
                    best[n] = min(best.get(n, steps + 1), steps + 1)
                continue
            best[n] = min(best.get(n, steps + 1), steps + 1)
            if steps + 1 < size - 1:
                walk(n, visited | {n}, steps + 1)

    walk(stone, {stone}, 0)
    return best


def crowded_start(rng: random.Random) -> Any:
    """A random position packed into the a1-h8 corner, so that stones meet at once.

    Captures, echo captures, draws and players left without a move are rare in random
    games from the opening, where the armies start seven rows apart.
    """
    while True:
        white, black = set(), set()
        for x in range(8):
            for y in range(8):
                roll = rng.random()
                if roll < 0.3:
                    white.add(f"{FILES[x]}{y + 1}")
                elif roll < 0.6:
                    black.add(f"{FILES[x]}{y + 1}")
        white_groups, black_groups = groups(white), groups(black)
        crowns = [
            sorted(c for g in found if len(g) > 1 for c in g)
            for found in (white_groups, black_groups)
        ]
        if not crowns[0] or not crowns[1]:
            continue
        to_move = rng.choice([1, 2])
        turn = rng.choice([1, 3]) if to_move == 1 else 2
        data = {
            "white": sorted(white),
            "black": sorted(black),
            "kings": {"white": rng.choice(crowns[0]), "black": rng.choice(crowns[1])},
            "to_move": to_move,
            "turn": turn,
            "moves_left": 4 if turn == 1 else 5,
            "moved": [],
            "sizes": {c: len(g) for g in white_groups + black_groups for c in g},
            "start_groups": len(white_groups if to_move == 1 else black_groups),
            "last_move": None,
            "result": None,
        }
        try:
            return RULES.from_json(data)
        except ValueError:
            continue  # the player to move has no move: not a game in progress


def random_game(seed: int, crowded: bool = False) -> list[tuple[Any, str]]:
    """(state, move played from it) for every move of one random game, then (last, "")."""
    rng = random.Random(seed)
    state = crowded_start(rng) if crowded else RULES.initial_state()
    played = []
    for _ in range(MAX_MOVES):
        if RULES.outcome(state) is not None:
            played.append((state, ""))
            return played
        move = RULES.random_move(state, rng)
        played.append((state, move))
        state = RULES.play(state, move)
    raise AssertionError(f"no result after {MAX_MOVES} moves")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), crowded=st.booleans())
def test_random_games_keep_the_stones_the_kings_and_the_json(seed: int, crowded: bool) -> None:
    game = random_game(seed, crowded)
    counts = {len(RULES.to_json(game[0][0])[colour]) for colour in ("white", "black")}
    if not crowded:
        assert counts == {41}
    for state, _ in game:
        data = RULES.to_json(state)
        assert json.loads(json.dumps(data)) == data
        assert RULES.from_json(copy.deepcopy(data)) == state
        assert {len(data["white"]), len(data["black"])} == counts  # stones never leave
        assert not set(data["white"]) & set(data["black"])
        assert data["kings"]["white"] in data["white"]
        assert data["kings"]["black"] in data["black"]
        assert data["to_move"] == 2 - data["turn"] % 2
        assert isinstance(RULES.render_text(state), str)
        over = RULES.outcome(state) is not None
        moves = RULES.client_moves(state)
        assert over == (next(iter(RULES.legal_moves(state)), None) is None)
        assert over == (not moves["destinations"] and not moves["echo"])
        white, black = set(data["white"]), set(data["black"])
        kings_alone = (
            stranded(white, data["kings"]["white"]),
            stranded(black, data["kings"]["black"]),
        )
        if any(kings_alone):
            outcome = RULES.outcome(state)
            assert outcome is not None
            assert (
                outcome.winner
                == {(True, True): None, (True, False): 2, (False, True): 1}[kings_alone]
            )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), crowded=st.booleans())
def test_every_move_does_what_the_rules_say_and_changes_nothing_it_was_given(
    seed: int, crowded: bool
) -> None:
    game = random_game(seed, crowded)
    for (state, move), (after, _) in pairwise(game):
        before = RULES.to_json(state)
        frozen = copy.deepcopy(before)
        assert RULES.is_legal(state, move)
        assert RULES.canonical_move(state, move) == move
        assert RULES.play(state, move) == after
        assert RULES.to_json(state) == frozen  # play made a new state
        data = RULES.to_json(after)
        expected = model_move(before, move)
        for key in ("white", "black", "kings"):
            assert data[key] == expected[key], (move, key)
        if data["turn"] == before["turn"]:
            # The same turn goes on (or the game ended within it): sizes go with stones.
            assert data["sizes"] == expected["sizes"]
            assert data["moves_left"] == before["moves_left"] - 1
            assert data["to_move"] == before["to_move"]
        else:
            # A new turn: the last one added a group; sizes and groups are counted afresh.
            mover, other = COLOURS[before["to_move"]]
            assert len(groups(set(data[mover]))) >= before["start_groups"] + 1
            assert data["to_move"] == 3 - before["to_move"]
            assert data["turn"] == before["turn"] + 1
            assert data["moves_left"] == 5 and data["moved"] == []
            assert data["start_groups"] == len(groups(set(data[other])))
            fresh = {c: len(g) for g in groups(set(data["white"])) for c in g}
            fresh |= {c: len(g) for g in groups(set(data["black"])) for c in g}
            assert data["sizes"] == fresh
    last, _ = game[-1]
    outcome = RULES.outcome(last)
    assert outcome is not None and outcome.reason
    if RULES.to_json(last)["result"] == "no-new-group":
        mover, _ = COLOURS[RULES.to_move(last)]
        data = RULES.to_json(last)
        assert len(groups(set(data[mover]))) < data["start_groups"] + 1
        assert outcome.winner == 3 - RULES.to_move(last)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), crowded=st.booleans())
def test_the_clients_destinations_are_every_reachable_cell_with_a_shortest_legal_path(
    seed: int, crowded: bool
) -> None:
    for ply, (state, _) in enumerate(random_game(seed, crowded)):
        if ply % 3:
            continue
        data = RULES.to_json(state)
        offered = RULES.client_moves(state)
        if RULES.outcome(state) is not None:
            assert offered == {"destinations": {}, "echo": False, "groups": None}
            continue
        mover, _ = COLOURS[data["to_move"]]
        for stone in set(data[mover]) - set(data["moved"]):
            destinations = offered["destinations"].get(stone, {})
            if data["sizes"][stone] > 6:  # every path of a big group is too many to try
                assert all(len(p.split("-")) <= data["sizes"][stone] for p in destinations.values())
                continue
            reach = model_reach(data, stone) if data["sizes"][stone] > 1 else {}
            assert set(destinations) == set(reach), stone
            for cell, path in destinations.items():
                cells = path.split("-")
                assert cells[0] == stone and cells[-1] == cell
                assert len(cells) - 1 == reach[cell]
        for paths in offered["destinations"].values():
            for path in paths.values():
                assert RULES.is_legal(state, path)
        assert offered["echo"] == RULES.is_legal(state, "echo")
        some = [p for paths in offered["destinations"].values() for p in paths.values()]
        for path in random.Random(ply).sample(some, min(5, len(some))):
            RULES.play(state, path)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), crowded=st.booleans())
def test_listed_moves_are_legal_canonical_and_reach_only_offered_destinations(
    seed: int, crowded: bool
) -> None:
    for ply, (state, _) in enumerate(random_game(seed, crowded)):
        if ply % 4:
            continue
        offered = RULES.client_moves(state)
        listed = list(islice(RULES.legal_moves(state), 300))
        assert len(set(listed)) == len(listed)
        for move in listed:
            assert RULES.canonical_move(state, move) == move
            assert RULES.is_legal(state, move)
            if move == "echo":
                assert offered["echo"]
            else:
                cells = move.split("-")
                assert cells[-1] in offered["destinations"][cells[0]]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    plies=st.integers(0, 30),
    move=st.one_of(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS0123456789- ", max_size=20),
        st.text(max_size=12),
        st.integers(),
        st.none(),
        st.binary(max_size=8),
        st.lists(st.text(max_size=3), max_size=3),
    ),
)
def test_it_answers_any_move_text_with_a_new_state_or_an_illegal_move(
    seed: int, plies: int, move: Any
) -> None:
    rng = random.Random(seed)
    state = RULES.initial_state()
    for _ in range(plies):
        if RULES.outcome(state) is not None:
            break
        state = RULES.play(state, RULES.random_move(state, rng))
    try:
        RULES.play(state, move)
    except IllegalMove as error:
        assert str(error)
        assert not RULES.is_legal(state, move)
    else:
        assert RULES.is_legal(state, move)
        # Only a legal move, however spelled, may pass: its end is an offered destination.
        offered = RULES.client_moves(state)
        canonical = RULES.canonical_move(state, move)
        if canonical == "echo":
            assert offered["echo"]
        else:
            cells = canonical.split("-")
            assert cells[-1] in offered["destinations"][cells[0]]


KEYS = [
    "white",
    "black",
    "kings",
    "to_move",
    "turn",
    "moves_left",
    "moved",
    "sizes",
    "start_groups",
    "last_move",
    "result",
]
ANYTHING = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 400)
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(["a1", "j2", "j18", "echo", "no-new-group", "j3-j4"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(data=st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), ANYTHING))
def test_it_refuses_garbage_json_with_a_value_error(data: Any) -> None:
    try:
        state = RULES.from_json(data)
    except ValueError as error:
        assert str(error)
    else:
        assert RULES.to_json(state) == data


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    plies=st.integers(0, 40),
    key=st.sampled_from(KEYS),
    value=ANYTHING,
    pick=st.integers(0, 1000),
)
def test_a_damaged_state_is_refused_or_still_round_trips(
    seed: int, plies: int, key: str, value: Any, pick: int
) -> None:
    rng = random.Random(seed)
    state = RULES.initial_state()
    for _ in range(plies):
        if RULES.outcome(state) is not None:
            break
        state = RULES.play(state, RULES.random_move(state, rng))
    data = RULES.to_json(state)
    # Replace a whole field, or change one entry of a list or map, as corruption might.
    field = data[key]
    if isinstance(field, list) and field and pick % 2:
        field[pick % len(field)] = value
    elif isinstance(field, dict) and field and pick % 2:
        field[sorted(field)[pick % len(field)]] = value
    else:
        data[key] = value
    try:
        loaded = RULES.from_json(data)
    except ValueError as error:
        assert str(error)
    else:
        assert RULES.to_json(loaded) == data
