"""Takebacks and draws by consent (pbmserv's undo, propose draw/accept/reject): services.

Every refusal leaves the game as it was: same version, same position, same offers.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from accounts.models import User
from games import selectors, services
from games.engine import client_moves, pick_client_move, rules_for
from games.models import Game, GameEvent
from realtime.errors import ServiceError
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db


def players() -> tuple[User, User]:
    return User.objects.get(username="alice"), User.objects.get(username="bob")


def play(game: Game, user: User, move: str) -> None:
    game.refresh_from_db()
    services.play_move(game_id=game.pk, user=user, move=move, ply=game.ply)


def look(game: Game) -> tuple[int, int, dict[str, Any], dict[str, int], str]:
    game.refresh_from_db()
    return game.version, game.ply, game.state, game.offers, game.status


def refused(code: str, call: Any, **kwargs: Any) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        call(**kwargs)
    assert caught.value.code == code, caught.value.message
    assert caught.value.message
    return caught.value


# --- takebacks -----------------------------------------------------------------------------


def test_an_accepted_takeback_restores_the_position_and_keeps_the_history() -> None:
    game = new_game()
    alice, bob = players()
    play(game, alice, "I")
    services.offer_takeback(game_id=game.pk, user=alice)
    applied = services.answer_takeback(game_id=game.pk, user=bob, accept=True)

    event = applied.event
    assert event is not None
    assert event["type"] == "takeback" and event["by"] == 2
    assert (event["ply"], event["undone"], event["to_move"]) == (0, 1, 1)
    assert event["state"]["rows"] == [[4] * 6, [4] * 6]
    assert sorted(event["legal_moves"]) == list("ABCDEFGHIJKL")
    version, ply, state, offers, status = look(game)
    assert (version, ply, offers, status) == (3, 0, {}, "active")
    assert state == event["state"]
    # History is not rewritten: move, offer, takeback are events 1-3; the move is undone.
    kinds = list(
        GameEvent.objects.filter(game=game).order_by("version").values_list("payload__type")
    )
    assert kinds == [("move",), ("takeback_offer",), ("takeback",)]
    assert GameEvent.objects.get(game=game, version=1).undone is True
    assert selectors.played(game) == []
    assert selectors.takebacks(game) == [{"ply": 0, "undone": 1}]

    # The ply is free again: another move is played and recorded in its place.
    play(game, alice, "B")
    assert selectors.played(game) == [(1, "B")]
    assert selectors.snapshot(game)["moves"] == [{"player": 1, "notation": "B"}]


def test_a_takeback_in_diffusion_chess_takes_back_the_whole_turn() -> None:
    game = new_game("diffusion-chess")
    alice, _ = players()
    rules = rules_for(game.slug, game.options)
    rng = random.Random(3)
    turn = 0
    while True:
        game.refresh_from_db()
        state = rules.from_json(game.state)
        if rules.to_move(state) != 1:
            break
        play(game, alice, pick_client_move(client_moves(rules, state), rng))
        turn += 1
    assert turn >= 1
    bob = User.objects.get(username="bob")
    services.offer_takeback(game_id=game.pk, user=alice)
    event = services.answer_takeback(game_id=game.pk, user=bob, accept=True).event
    assert event is not None and event["undone"] == turn
    game.refresh_from_db()
    assert game.ply == 0 and game.state == rules.to_json(rules.initial_state())


def test_a_takeback_keeps_the_time_spent_and_starts_the_askers_clock() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="5+3"
    )
    play(game, alice, "I")
    play(game, bob, "A")
    play(game, alice, "J")
    game.refresh_from_db()
    before = list(game.clock["remaining"])
    services.offer_takeback(game_id=game.pk, user=alice)
    event = services.answer_takeback(game_id=game.pk, user=bob, accept=True).event
    assert event is not None
    clock = event["clock"]
    assert clock["running"] == 1
    # Bob's clock ran while he considered the request: no time came back to anyone.
    assert clock["remaining"][0] == before[0]
    assert clock["remaining"][1] <= before[1]
    game.refresh_from_db()
    assert game.deadline is not None and game.ply == 2


@pytest.mark.parametrize(
    ("moves", "asker", "code"),
    [
        ([], "alice", "nothing_to_take_back"),  # no move yet
        (["I", "A"], "alice", "nothing_to_take_back"),  # the opponent has answered
        (["I"], "bob", "nothing_to_take_back"),  # bob has no last move of his own
    ],
)
def test_a_takeback_is_refused_once_the_opponent_has_moved(
    moves: list[str], asker: str, code: str
) -> None:
    game = new_game()
    alice, bob = players()
    for number, move in enumerate(moves):
        play(game, alice if number % 2 == 0 else bob, move)
    before = look(game)
    refused(code, services.offer_takeback, game_id=game.pk, user=players()[asker == "bob"])
    assert look(game) == before


def test_a_declined_takeback_changes_only_the_offers() -> None:
    game = new_game()
    alice, bob = players()
    play(game, alice, "I")
    services.offer_takeback(game_id=game.pk, user=alice)
    assert look(game)[3] == {"takeback": 1}
    event = services.answer_takeback(game_id=game.pk, user=bob, accept=False).event
    assert event is not None and event["type"] == "takeback_declined" and event["by"] == 2
    version, ply, _, offers, _ = look(game)
    assert (version, ply, offers) == (3, 1, {})
    refused("no_offer", services.answer_takeback, game_id=game.pk, user=bob, accept=True)


def test_a_move_withdraws_a_pending_offer() -> None:
    game = new_game("zigzag")
    alice, bob = players()
    rules = rules_for(game.slug, game.options)
    play(game, alice, sorted(client_moves(rules, rules.initial_state()))[0])
    services.offer_takeback(game_id=game.pk, user=alice)
    services.offer_draw(game_id=game.pk, user=alice)
    assert look(game)[3] == {"takeback": 1, "draw": 1}
    game.refresh_from_db()
    play(game, bob, sorted(client_moves(rules, rules.from_json(game.state)))[0])
    assert look(game)[3] == {}
    refused("no_offer", services.answer_takeback, game_id=game.pk, user=bob, accept=True)
    refused("no_offer", services.answer_draw, game_id=game.pk, user=bob, accept=True)


def test_only_the_players_may_ask_or_answer() -> None:
    game = new_game()
    alice, _ = players()
    carol = make_user("carol")
    play(game, alice, "I")
    services.offer_takeback(game_id=game.pk, user=alice)
    before = look(game)
    refused("not_a_player", services.offer_takeback, game_id=game.pk, user=carol)
    refused("not_a_player", services.answer_takeback, game_id=game.pk, user=carol, accept=True)
    refused("no_offer", services.answer_takeback, game_id=game.pk, user=alice, accept=True)
    assert look(game) == before


# --- draws ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "draws"),
    [("diffusion", False), ("four-rank-diffusion", False), ("zigzag", True)],
)
def test_a_draw_can_be_offered_only_where_the_game_can_be_drawn(slug: str, draws: bool) -> None:
    game = new_game(slug)
    alice, _ = players()
    assert selectors.snapshot(game)["draws"] is draws
    if draws:
        event = services.offer_draw(game_id=game.pk, user=alice).event
        assert event is not None and event["type"] == "draw_offer" and event["by"] == 1
    else:
        before = look(game)
        error = refused("no_draws", services.offer_draw, game_id=game.pk, user=alice)
        assert "cannot end in a draw" in error.message
        assert look(game) == before


def test_an_accepted_draw_ends_the_game_without_a_winner() -> None:
    game = new_game("zigzag")
    alice, bob = players()
    services.offer_draw(game_id=game.pk, user=bob)
    event = services.answer_draw(game_id=game.pk, user=alice, accept=True).event
    assert event is not None and event["type"] == "end"
    assert event["result"] == {
        "winner": None,
        "termination": "agreement",
        "reason": "drawn by agreement",
    }
    _, _, _, offers, status = look(game)
    assert (offers, status) == ({}, "finished")
    refused("game_over", services.offer_draw, game_id=game.pk, user=alice)


def test_two_draw_offers_are_an_agreement() -> None:
    game = new_game("diffusion-chess")
    alice, bob = players()
    services.offer_draw(game_id=game.pk, user=alice)
    again = services.offer_draw(game_id=game.pk, user=alice)
    assert again.event is None and again.duplicate
    event = services.offer_draw(game_id=game.pk, user=bob).event
    assert event is not None and event["result"]["termination"] == "agreement"


def test_a_declined_draw_lets_the_game_go_on() -> None:
    game = new_game("zigzag")
    alice, bob = players()
    services.offer_draw(game_id=game.pk, user=alice)
    event = services.answer_draw(game_id=game.pk, user=bob, accept=False).event
    assert event is not None and event["type"] == "draw_declined"
    _, _, _, offers, status = look(game)
    assert (offers, status) == ({}, "active")
