"""Conditional moves (pbmserv's `queue`): "if they play X, answer Y", played by the server."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from accounts.models import User
from games import selectors, services
from games.engine import rules_for
from games.models import Game
from realtime.errors import ServiceError
from tests.games_helpers import make_user, next_of_type, open_socket

pytestmark = pytest.mark.django_db


def game_of(time_control: str = "3d") -> Game:
    alice, bob = make_user("alice"), make_user("bob")
    return services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control=time_control
    )


def users() -> tuple[User, User]:
    return User.objects.get(username="alice"), User.objects.get(username="bob")


def play(game: Game, user: User, move: str) -> None:
    game.refresh_from_db()
    services.play_move(game_id=game.pk, user=user, move=move, ply=game.ply)


def legal_after(game: Game, *moves: str) -> list[str]:
    """The legal moves after `moves` from the game's position (what a player would read
    off the board before queueing)."""
    game.refresh_from_db()
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    for move in moves:
        state = rules.play(state, move)
    return sorted(rules.legal_moves(state))


def test_a_queued_answer_is_played_the_moment_the_expected_move_comes() -> None:
    game = game_of()
    alice, bob = users()
    play(game, alice, "I")
    # Worked example of RULES.md: after I, North has every pit; Alice expects A.
    assert "A" in legal_after(game)
    answer = legal_after(game, "A")[0]
    assert services.set_queue(game_id=game.pk, user=alice, moves=["a", answer]) == ["A", answer]
    play(game, bob, "A")
    game.refresh_from_db()
    assert game.ply == 3
    assert selectors.played(game)[-2:] == [(2, "A"), (1, answer)]
    assert game.queues == {}
    # The answer was a normal move: Bob is to move again.
    assert selectors.snapshot(game)["to_move"] == 2


def test_an_unexpected_move_drops_the_queue_and_nothing_is_answered() -> None:
    game = game_of("")
    alice, bob = users()
    play(game, alice, "I")
    expected, other = legal_after(game)[:2]
    services.set_queue(
        game_id=game.pk, user=alice, moves=[expected, legal_after(game, expected)[0]]
    )
    play(game, bob, other)
    game.refresh_from_db()
    assert (game.ply, game.queues) == (2, {})
    assert selectors.snapshot(game)["to_move"] == 1


def test_a_queue_of_two_pairs_answers_twice() -> None:
    game = game_of()
    alice, bob = users()
    play(game, alice, "I")
    x = legal_after(game)[0]
    y = legal_after(game, x)[0]
    z = legal_after(game, x, y)[0]
    w = legal_after(game, x, y, z)[0]
    services.set_queue(game_id=game.pk, user=alice, moves=[x, y, z, w])
    play(game, bob, x)
    game.refresh_from_db()
    assert game.queues == {"1": [z, w]}
    play(game, bob, z)
    game.refresh_from_db()
    assert game.ply == 5 and game.queues == {}
    assert [move for _, move in selectors.played(game)] == ["I", x, y, z, w]


@pytest.mark.parametrize(
    ("time_control", "moves", "says"),
    [
        ("3d", ["A"], "pairs"),
        ("3d", ["A", "B"] * 11, "pairs"),
        ("3d", ["Q", "B"], "Q"),
        ("3d", ["I", "B"], "I"),  # I is empty after Alice's I
        ("5+3", ["A", "B"], "correspondence"),
    ],
)
def test_a_bad_queue_is_refused_and_changes_nothing(
    time_control: str, moves: list[str], says: str
) -> None:
    game = game_of(time_control)
    alice, _ = users()
    play(game, alice, "I")
    with pytest.raises(ServiceError) as caught:
        services.set_queue(game_id=game.pk, user=alice, moves=moves)
    assert caught.value.code == "bad_queue" and says in caught.value.message
    game.refresh_from_db()
    assert game.queues == {}


def test_no_queue_on_your_own_move_and_none_for_spectators() -> None:
    game = game_of()
    alice, _ = users()
    with pytest.raises(ServiceError) as caught:
        services.set_queue(game_id=game.pk, user=alice, moves=["A", "B"])
    assert caught.value.code == "bad_queue" and "your move" in caught.value.message
    with pytest.raises(ServiceError) as caught:
        services.set_queue(game_id=game.pk, user=make_user("carol"), moves=["A", "B"])
    assert caught.value.code == "not_a_player"


def test_an_empty_queue_clears_it_and_a_takeback_drops_it() -> None:
    game = game_of()
    alice, bob = users()
    play(game, alice, "I")
    x = legal_after(game)[0]
    services.set_queue(game_id=game.pk, user=alice, moves=[x, legal_after(game, x)[0]])
    assert services.set_queue(game_id=game.pk, user=alice, moves=[]) == []
    game.refresh_from_db()
    assert game.queues == {}
    services.set_queue(game_id=game.pk, user=alice, moves=[x, legal_after(game, x)[0]])
    services.offer_takeback(game_id=game.pk, user=alice)
    services.answer_takeback(game_id=game.pk, user=bob, accept=True)
    game.refresh_from_db()
    assert game.queues == {}


@pytest.mark.django_db(transaction=True)
async def test_the_queue_is_told_to_its_owner_only_and_fires_for_everyone() -> None:
    db = database_sync_to_async
    game = await db(game_of)()
    alice, bob = await db(users)()
    await db(play)(game, alice, "I")
    x = (await db(legal_after)(game))[0]
    y = (await db(legal_after)(game, x))[0]
    mine, snapshot = await open_socket(game.pk, alice)
    assert snapshot["queue"] == []
    theirs, their_snapshot = await open_socket(game.pk, bob)
    watcher, watched = await open_socket(game.pk)
    assert their_snapshot["queue"] == [] and "queue" not in watched
    await mine.send_json_to({"type": "queue", "moves": [x, y], "id": "q"})
    told = await next_of_type(mine, "queue")
    assert told == {"type": "queue", "moves": [x, y], "id": "q"}
    await theirs.send_json_to({"type": "move", "move": x, "ply": 1})
    for client in (mine, theirs, watcher):
        first = await next_of_type(client, "move")
        second = await next_of_type(client, "move")
        assert (first["move"], second["move"]) == (x, y)
        assert (second["player"], second["ply"]) == (1, 3)
    again, snapshot = await open_socket(game.pk, alice)
    assert snapshot["queue"] == []
    for client in (mine, theirs, watcher, again):
        await client.disconnect()
