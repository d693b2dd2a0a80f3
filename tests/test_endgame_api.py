"""Diffusion's endgame database in the product: the probe reads what the tooling built
(games/endgames.py), and GET /api/endgame answers a position's exact result and each move's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from devtools.endgames import diffusion_solve as S
from games import endgames
from games.rules import get_rules
from games.rules.diffusion import DiffusionState
from games.rules.notation import position_text

RULES: Any = get_rules("diffusion")
MOST = 8


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, S.Database]:
    """A database of every position with at most 8 stones, as `make endgames` writes one."""
    directory = tmp_path_factory.mktemp("endgames")
    database = S.build(MOST, into=directory / endgames.FILE)
    S.save(database, directory / endgames.FILE)
    four = directory / endgames.FILES["four-rank-diffusion"]
    S.save(S.build(4, into=four, game="four-rank-diffusion"), four)
    return directory, database


@pytest.fixture
def covered(built: tuple[Path, S.Database], settings: Any) -> Iterator[S.Database]:
    settings.ENDGAMES_DIR = built[0]
    endgames.open_at.cache_clear()
    yield built[1]
    endgames.open_at.cache_clear()


def position(pits: tuple[int, ...], to_move: int) -> str:
    stores = (48 - sum(pits), 0)
    return str(position_text(RULES, DiffusionState(pits, stores, to_move)))


def random_pits(rng: random.Random, stones: int) -> tuple[int, ...]:
    while True:
        pits = [0] * 12
        for _ in range(stones):
            pits[rng.randrange(12)] += 1
        if max(pits) <= 5 and any(pits[:3] + pits[6:9]) and any(pits[3:6] + pits[9:]):
            return tuple(pits)


@pytest.mark.django_db
def test_the_probe_reads_what_the_builder_wrote_for_both_sides(covered: S.Database) -> None:
    rng = random.Random(5)
    table = endgames.table()
    assert table is not None and table.most == MOST
    for _ in range(500):
        pits = random_pits(rng, rng.randint(2, MOST))
        assert endgames.probe("diffusion", {}, DiffusionState(pits, (0, 0), 1)) == (
            endgames.Verdict.of(covered.code(pits))
        )
        turned = tuple(reversed(pits))  # North to move sees the board turned half round
        assert table.probe(pits, 2) == endgames.Verdict.of(covered.code(turned))
    assert table.code((5, 5) + (0,) * 10) is None  # 10 stones: not covered


@pytest.mark.django_db
def test_the_api_gives_the_result_and_every_moves_result(covered: S.Database) -> None:
    rng = random.Random(9)
    for _ in range(40):
        pits = random_pits(rng, rng.randint(3, MOST))
        to_move = rng.choice([1, 2])
        answer = Client().get(
            "/api/endgame", {"game": "diffusion", "position": position(pits, to_move)}
        )
        assert answer.status_code == 200, answer.content
        data = answer.json()
        verdict = endgames.Verdict.of(covered.code(pits if to_move == 1 else tuple(reversed(pits))))
        assert (data["covered"], data["most"], data["to_move"]) == (True, MOST, to_move)
        assert (data["result"], data["distance"]) == (verdict.result, verdict.moves)
        assert len(data["moves"]) == sum(1 for count in pits if count)
        best = data["moves"][0]
        # The best move keeps the result: a win in d is a move that wins in d.
        assert best["result"] == data["result"]
        assert best["distance"] == data["distance"]
        if data["result"] == "loss":
            assert all(move["result"] == "loss" for move in data["moves"])


@pytest.mark.django_db
def test_what_the_database_does_not_cover_is_said_so(covered: S.Database) -> None:
    start = Client().get("/api/endgame", {"game": "diffusion"}).json()
    assert (start["covered"], start["most"], start["result"], start["moves"]) == (
        False,
        MOST,
        None,
        [],
    )
    other = Client().get("/api/endgame", {"game": "zigzag"}).json()
    assert (other["covered"], other["most"]) == (False, None)


@pytest.mark.django_db
def test_with_no_database_nothing_is_covered(settings: Any, tmp_path: Path) -> None:
    settings.ENDGAMES_DIR = tmp_path
    endgames.open_at.cache_clear()
    answer = Client().get(
        "/api/endgame", {"game": "diffusion", "position": position((1, 0, 0, 1) + (0,) * 8, 1)}
    )
    assert answer.json()["covered"] is False and answer.json()["most"] is None
    endgames.open_at.cache_clear()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params",
    [
        {"game": "chess"},
        {"game": "diffusion", "colour": "white"},
        {},
        {"game": "diffusion", "position": "not a position"},
        {"game": "zigzag", "options": "pits"},
    ],
)
def test_bad_requests_are_refused_saying_why(params: dict[str, str]) -> None:
    answer = Client().get("/api/endgame", params)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_message" and answer.json()["error"]["message"]


def test_level_5_plays_perfectly_where_the_database_covers_the_position(
    built: tuple[Path, S.Database],
) -> None:
    """Its move keeps the position's result at its distance; from won positions it wins every
    game against level 3, and from lost ones it holds out as long as the database says."""
    from bots.search import think

    directory, _database = built
    table = endgames.open_at(str(directory))
    assert table is not None
    rng = random.Random(11)
    won = 0
    for game in range(30):
        pits = random_pits(rng, rng.randint(4, MOST))
        state = DiffusionState(pits, (48 - sum(pits), 0), 1)
        verdict = table.probe(pits, 1)
        assert verdict is not None
        choice = think(RULES, state, level=5, seed=game, endgames_dir=str(directory))
        assert choice.playouts == 0  # read, not searched
        after = RULES.play(state, choice.move)
        if after.winner:
            assert after.winner == 1 and verdict.result == "win" and verdict.moves == 1
        else:
            reply = table.probe(after.pits, after.to_move)
            assert reply is not None and reply.moves is not None
            flipped = {"win": "loss", "loss": "win"}[reply.result]
            assert (flipped, reply.moves + 1) == (verdict.result, verdict.moves)
        if verdict.result != "win":
            continue
        # Played out against level 3 (which searches, without the database): won every time.
        moves = 0
        while not state.winner:
            level = 5 if state.to_move == 1 else 3
            move = think(
                RULES, state, level=level, seed=game * 100 + moves, endgames_dir=str(directory)
            )
            state = RULES.play(state, move.move)
            moves += 1
        assert state.winner == 1 and moves <= verdict.moves
        won += 1
    assert won >= 10


@pytest.mark.django_db
def test_a_finished_games_positions_are_named_by_game_and_ply(covered: S.Database) -> None:
    """The replay asks with game_id and ply: the same answer as the position's text; a game
    in progress is not looked up (no help while it is played)."""
    from games import services
    from tests.games_helpers import new_game

    game = new_game("diffusion")
    client = Client()
    refused = client.get("/api/endgame", {"game_id": game.pk, "ply": 0})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "game_not_over"
    rng = random.Random(2)
    state = RULES.initial_state()
    while not state.winner:
        move = rng.choice(RULES.legal_moves(state))
        game.refresh_from_db()
        user = game.player1 if state.to_move == 1 else game.player2
        services.play_move(game_id=game.pk, user=user, move=move, ply=game.ply)
        state = RULES.play(state, move)
    game.refresh_from_db()
    assert game.status == "finished"
    for ply in range(max(0, game.ply - 6), game.ply + 1):
        by_game = client.get("/api/endgame", {"game_id": game.pk, "ply": ply})
        assert by_game.status_code == 200, by_game.content
        text = by_game.json()["position"]
        by_text = client.get("/api/endgame", {"game": "diffusion", "position": text})
        assert by_game.json() == by_text.json()
    mixed = client.get("/api/endgame", {"game_id": game.pk, "position": "x"})
    assert mixed.status_code == 400 and mixed.json()["error"]["code"] == "bad_message"


def test_a_forward_search_without_the_database_finds_what_it_says(
    built: tuple[Path, S.Database],
) -> None:
    """The puzzle finder's exact prover (devtools/puzzles/prover.py: an AND-OR search on the
    engine, reading nothing of the database) against the database, on covered positions: the
    fewest own moves to a forced win agree, for either side; and the prover asked with the
    database as its exact answers agrees with itself without it."""
    from devtools.puzzles.finder import endgame_oracle
    from devtools.puzzles.prover import Prover

    directory, _database = built
    table = endgames.open_at(str(directory))
    assert table is not None

    def exact(state: DiffusionState) -> tuple[str, int | None] | None:
        verdict = None if state.winner else table.probe(state.pits, state.to_move)
        return None if verdict is None else (verdict.result, verdict.moves)

    rng = random.Random(4)
    compared = 0
    while compared < 60:
        pits = random_pits(rng, rng.randint(2, 6))
        state = DiffusionState(pits, (48 - sum(pits), 0), rng.choice([1, 2]))
        verdict = table.probe(pits, state.to_move)
        assert verdict is not None and verdict.moves is not None
        me = state.to_move if verdict.result == "win" else 3 - state.to_move
        own = (verdict.moves + 1) // 2 if me == state.to_move else verdict.moves // 2
        searched = Prover(RULES, me, nodes=2_000_000).distance(state, own + 1)
        if searched is None:
            continue  # out of the prover's budget: not a disagreement, not a comparison
        assert searched == own, (pits, state.to_move, verdict)
        assert Prover(RULES, me, exact=exact).distance(state, own + 1) == own
        compared += 1
    assert endgame_oracle("zigzag") is None


@pytest.mark.django_db
def test_four_rank_positions_are_answered_from_their_own_database(covered: S.Database) -> None:
    """Four-rank's database beside Diffusion's: the API and level 5 read it the same way."""
    from django.conf import settings

    from bots.search import think

    directory = str(settings.ENDGAMES_DIR)
    rules: Any = get_rules("four-rank-diffusion")
    database = S.build(4, game="four-rank-diffusion")
    rng = random.Random(6)
    south = [pit for pit in range(32) if rules.block_of[pit] == 0]
    north = [pit for pit in range(32) if rules.block_of[pit] == 1]
    asked = 0
    while asked < 20:
        pits = [0] * 32
        for _ in range(rng.randint(2, 4)):
            pits[rng.randrange(32)] += 1
        if not any(pits[p] for p in south) or not any(pits[p] for p in north):
            continue
        state = DiffusionState(tuple(pits), (144 - sum(pits), 0), 1)
        text = str(position_text(rules, state))
        answer = Client().get("/api/endgame", {"game": "four-rank-diffusion", "position": text})
        data = answer.json()
        verdict = endgames.Verdict.of(database.code(tuple(pits)))
        assert (data["covered"], data["most"]) == (True, 4)
        assert (data["result"], data["distance"]) == (verdict.result, verdict.moves)
        # Level 5 reads its move, and the move keeps the result (the best the API lists).
        choice = think(rules, state, level=5, seed=asked, endgames_dir=directory)
        assert choice.playouts == 0
        best = {move["move"]: move for move in data["moves"]}[choice.move]
        assert (best["result"], best["distance"]) == (verdict.result, verdict.moves)
        asked += 1


@pytest.mark.django_db
def test_diffusion_answers_carry_no_margin(covered: S.Database) -> None:
    """The margin is ZigZag's (tests/test_zigzag_endgames.py): null for Diffusion."""
    pits = (1, 0, 0, 1) + (0,) * 8
    data = Client().get("/api/endgame", {"game": "diffusion", "position": position(pits, 1)}).json()
    assert data["covered"] is True and data["margin"] is None
    assert data["moves"] and all(move["margin"] is None for move in data["moves"])
