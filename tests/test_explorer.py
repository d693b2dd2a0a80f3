"""The opening explorer (analysis/explorer.py, exploring.py, explorer_lookup.py): finished games
are counted once each, transpositions merge, a lookup sums the moves from a position for the
bands and speeds asked, and bad lookups are refused with `bad_message` naming the parameter."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from accounts.models import User
from analysis import explorer, exploring
from analysis.models import ExplorerMove
from games import services
from games.models import Game, PlayedMoves
from games.rules import get_rules
from games.rules.notation import position_text
from ratings.models import Rating
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def played(
    moves: list[str],
    *,
    loser: int,
    slug: str = "diffusion",
    options: dict[str, Any] | None = None,
    players: tuple[User, User] | None = None,
    control: str = "",
) -> Game:
    """A game played through the services, `moves` then the resignation of `loser`."""
    first, second = players or (_user("alice"), _user("bob"))
    game = services.create_game(
        slug=slug, options=options or {}, player1=first, player2=second, time_control=control
    )
    for ply, move in enumerate(moves):
        services.play_move(game_id=game.pk, user=(first, second)[ply % 2], move=move, ply=ply)
    services.resign(game_id=game.pk, user=(first, second)[loser - 1])
    game.refresh_from_db()
    return game


def _user(name: str) -> User:
    return User.objects.filter(username=name).first() or make_user(name)


def look(**params: Any) -> tuple[int, dict[str, Any]]:
    response = Client().get("/api/explorer", params)
    return response.status_code, response.json()


def rows() -> list[tuple[Any, ...]]:
    return sorted(
        ExplorerMove.objects.values_list(
            "position", "band", "speed", "move", "games", "wins", "draws", "losses", "rating_sum"
        )
    )


def _transposed() -> tuple[list[str], list[str]]:
    """Two move orders of Diffusion that reach the same position."""
    rules = get_rules("diffusion")
    reached: dict[bytes, list[str]] = {}
    start = rules.initial_state()
    for a in rules.legal_moves(start):
        one = rules.play(start, a)
        for b in rules.legal_moves(one):
            two = rules.play(one, b)
            for c in rules.legal_moves(two):
                line = [a, b, c]
                key = rules.position_key(rules.play(two, c))
                if key in reached and reached[key] != line:
                    return reached[key], line
                reached.setdefault(key, line)
    raise AssertionError("no transposition in three moves")


def test_a_finished_game_keeps_its_moves_and_is_counted_once() -> None:
    game = played(["A", "H", "C"], loser=2)
    assert PlayedMoves.objects.get(game=game).moves == "A H C"
    done = exploring.count_pending()
    assert (done.games, done.rows) == (1, 3)
    again = exploring.count_pending()
    assert again.games == 0
    assert sum(row[4] for row in rows()) == 3  # three moves, each counted once
    assert PlayedMoves.objects.get(game=game).explored


def test_the_start_shows_each_first_move_with_how_it_went_for_its_player() -> None:
    played(["A", "H"], loser=2)  # South played A and won
    played(["A", "I"], loser=1)  # South played A and lost
    played(["B", "G"], loser=2)  # South played B and won
    exploring.count_all()
    status, answer = look(game="diffusion")
    assert status == 200
    rules = get_rules("diffusion")
    start = rules.initial_state()
    assert answer["position"] == position_text(rules, start)
    assert answer["to_move"] == 1 and answer["games"] == 3
    by_move = {move["move"]: move for move in answer["moves"]}
    assert [move["move"] for move in answer["moves"]] == ["A", "B"]  # the most played first
    assert {k: by_move["A"][k] for k in ("games", "wins", "draws", "losses", "rating")} == {
        "games": 2,
        "wins": 1,
        "draws": 0,
        "losses": 1,
        "rating": 1500,
    }
    assert by_move["A"]["position"] == position_text(rules, rules.play(start, "A"))
    assert by_move["B"]["wins"] == 1
    # One move on: North's replies, scored for North.
    status, after_a = look(game="diffusion", position=by_move["A"]["position"])
    replies = {move["move"]: move for move in after_a["moves"]}
    assert after_a["to_move"] == 2
    assert (replies["H"]["wins"], replies["H"]["losses"]) == (0, 1)
    assert (replies["I"]["wins"], replies["I"]["losses"]) == (1, 0)


def test_two_move_orders_to_one_position_are_one_position() -> None:
    one, two = _transposed()
    played([*one, "A"], loser=1)
    played([*two, "A"], loser=2)
    exploring.count_all()
    rules = get_rules("diffusion")
    state = rules.initial_state()
    for move in one:
        state = rules.play(state, move)
    _, answer = look(game="diffusion", position=position_text(rules, state))
    assert answer["moves"][0]["move"] == "A" and answer["moves"][0]["games"] == 2


def test_bands_and_speeds_narrow_a_lookup() -> None:
    strong = (_user("carol"), _user("dave"))
    for user in strong:
        Rating.objects.create(
            user=user, slug="diffusion", speed="untimed", rating=1850, deviation=60, volatility=0.06
        )
    played(["A", "H"], loser=2, players=strong)  # untimed, mean 1850: band 1800
    played(["B", "G"], loser=2)  # untimed, 1500: band 1400
    played(["C", "G"], loser=2, control="5+3")  # real time, 1500
    exploring.count_all()
    moves = lambda **filters: [m["move"] for m in look(game="diffusion", **filters)[1]["moves"]]  # noqa: E731
    assert sorted(moves()) == ["A", "B", "C"]
    assert moves(ratings="1800") == ["A"]
    assert sorted(moves(ratings="1400")) == ["B", "C"]
    assert moves(speeds="realtime") == ["C"]
    assert moves(speeds="untimed", ratings="1400") == ["B"]
    _, answer = look(game="diffusion", ratings="1800")
    assert answer["moves"][0]["rating"] == 1850 and answer["ratings"] == [1800]


def test_a_finished_games_position_is_looked_up_by_its_number_and_ply() -> None:
    game = played(["A", "H", "C"], loser=2)
    played(["A", "H", "D"], loser=1)
    exploring.count_all()
    status, answer = look(game_id=game.pk, ply=2)
    assert status == 200
    assert sorted(move["move"] for move in answer["moves"]) == ["C", "D"]
    assert answer["slug"] == "diffusion" and answer["to_move"] == 1


def test_zigzag_counts_under_its_whole_option_set() -> None:
    options = {"pits": 4, "seeds": 3}
    rules = get_rules("zigzag", **options)
    move = next(iter(rules.legal_moves(rules.initial_state())))
    played([move], loser=2, slug="zigzag", options=options)
    exploring.count_all()
    _, answer = look(game="zigzag", options="seeds=3,pits=4")
    assert answer["variant"] == "zigzag:pits=4,seeds=3"
    assert [m["move"] for m in answer["moves"]] == [move]
    _, other = look(game="zigzag")  # the default board is another game
    assert other["moves"] == []


def test_a_batch_that_fails_half_way_counts_nothing_and_is_counted_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    played(["A", "H"], loser=2)
    real = exploring._add

    def dies_after_writing(counts: Any) -> None:
        real(counts)
        raise RuntimeError("the process died here")

    monkeypatch.setattr(exploring, "_add", dies_after_writing)
    with pytest.raises(RuntimeError):
        exploring.count_pending()
    assert rows() == [] and not PlayedMoves.objects.get().explored
    monkeypatch.setattr(exploring, "_add", real)
    assert exploring.count_pending().games == 1
    assert sum(row[4] for row in rows()) == 2


def test_a_rebuild_counts_every_game_again_to_the_same_sums() -> None:
    played(["A", "H", "C"], loser=2)
    played(["B", "G"], loser=1)
    exploring.count_all()
    before = rows()
    exploring.start_again()
    assert ExplorerMove.objects.count() == 0
    assert exploring.count_all().games == 2
    assert rows() == before


def test_a_line_the_rules_refuse_is_counted_up_to_the_refused_move() -> None:
    game = played(["A", "H"], loser=2)
    PlayedMoves.objects.filter(game=game).update(moves="A Z H")
    done = exploring.count_pending()
    assert done.cut_short == 1 and sum(row[4] for row in rows()) == 1


@pytest.mark.parametrize(
    ("params", "code", "names"),
    [
        ({}, "bad_message", "game="),
        ({"game": "chess"}, "bad_message", "chess"),
        ({"game": "zigzag", "options": "pits=5"}, "bad_message", "pits"),
        ({"game": "zigzag", "options": "pits"}, "bad_message", "name=value"),
        ({"game": "diffusion", "position": "not a position"}, "bad_message", ""),
        ({"game": "diffusion", "ratings": "1500"}, "bad_message", "1200"),
        ({"game": "diffusion", "ratings": "x"}, "bad_message", "ratings"),
        ({"game": "diffusion", "speeds": "blitz"}, "bad_message", "realtime"),
        ({"game": "diffusion", "colour": "white"}, "bad_message", "colour"),
        ({"game": "diffusion", "ply": "3"}, "bad_message", "game_id"),
        ({"game_id": "x"}, "bad_message", "game_id"),
        ({"game_id": "999999"}, "no_such_game", "999999"),
        ({"game_id": "1", "game": "diffusion"}, "bad_message", "game_id"),
    ],
)
def test_a_bad_lookup_is_refused_saying_what_is_wrong(
    params: dict[str, str], code: str, names: str
) -> None:
    status, answer = look(**params)
    assert status == (404 if code == "no_such_game" else 400)
    assert answer["error"]["code"] == code and names in answer["error"]["message"]


def test_a_game_still_going_is_not_explored_and_a_ply_beyond_its_moves_is_refused() -> None:
    going = services.create_game(
        slug="diffusion", options={}, player1=_user("alice"), player2=_user("bob")
    )
    status, answer = look(game_id=going.pk)
    assert (status, answer["error"]["code"]) == (409, "game_not_over")
    done = played(["A"], loser=2)
    status, answer = look(game_id=done.pk, ply=5)
    assert status == 400 and "0 to 1" in answer["error"]["message"]


def test_the_sweeper_counts_the_games_that_ended() -> None:
    from games import lifecycle

    played(["A", "H"], loser=2)
    lifecycle.sweep()
    assert not PlayedMoves.objects.filter(explored=False).exists()
    assert sum(row[4] for row in rows()) == 2


@pytest.mark.postgres(
    reason="SKIP LOCKED and row locks between connections are the server database's"
)
@pytest.mark.django_db(transaction=True)
def test_two_processes_counting_at_once_count_each_game_once() -> None:
    for index in range(40):
        played(["A", "H", "C"], loser=1 + index % 2)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            while exploring.count_pending(3).games:
                pass
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(row[4] for row in rows()) == 40 * 3
    _, answer = look(game="diffusion")
    assert answer["moves"] == [
        {**answer["moves"][0], "move": "A", "games": 40, "wins": 20, "losses": 20}
    ]
    assert explorer.PLIES == 50


@pytest.mark.postgres(reason="the generated games go in with PostgreSQL's COPY")
@pytest.mark.django_db(transaction=True)
def test_a_builder_killed_mid_way_loses_and_doubles_nothing(tmp_path: Any) -> None:
    """`manage.py explorer` killed (SIGKILL) while it counts; counting again ends with the
    sums an independent recount of every line gives."""
    import signal
    import subprocess
    import sys
    import time
    from collections import Counter

    from devtools import gamesdb
    from games.engine import rules_for
    from games.models import PlayedGame
    from tests.servers import ROOT, shared_test_env

    players = gamesdb.make_players(30)
    pool = gamesdb.line_pool(40, seed=7, processes=1)
    for _done in gamesdb.generate(1200, players, seed=7, batch=1200, pool=pool):
        pass
    env = {k: v for k, v in {**os.environ, **shared_test_env("explorer-kill")}.items() if v}
    builder = subprocess.Popen(
        [sys.executable, "manage.py", "explorer", "--batch", "10"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while PlayedMoves.objects.filter(explored=True).count() < 100:
        assert builder.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    counted = PlayedMoves.objects.filter(explored=True).count()
    assert 100 <= counted < 1200  # killed mid-way
    exploring.count_all()

    # The independent recount: every line replayed by the rules, each move counted once.
    expected: Counter[tuple[str, str, int]] = Counter()
    games = {row.game_id: row for row in PlayedGame.objects.filter(seat=1)}
    for game, moves in PlayedMoves.objects.values_list("game_id", "moves"):
        row = games[game]
        options = explorer.options_of(row.options)
        rules = rules_for(row.slug, options)
        state = rules.initial_state()
        for move in moves.split()[: explorer.PLIES]:
            key = rules.position_key(state).hex()
            expected[row.slug + row.options, key, move] += 1
            state = rules.play(state, move)
    assert sum(expected.values()) == sum(row[4] for row in rows())
    assert len(expected) == len({(position, move) for position, _band, _speed, move, *_ in rows()})
