"""The only code that changes a game.

Every action follows one pattern (Zulip's check_/do_): lock the game row, check the request
against the game and the engine, write, bump the version, store the event, and broadcast it
after commit. Two processes can never both apply a move: the row lock orders them and the
unique (game, ply) constraint backs it up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer
from django.db import transaction

from config.db import run_soon
from games import presence
from games.engine import canonical_move, client_moves, rules_for
from games.models import Game, GameEvent, Move
from games.rules import IllegalMove, InvalidOptions
from lobby.models import User

logger = logging.getLogger(__name__)


class GameError(Exception):
    """A refused request; `code` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Applied:
    """What a service did: the event it broadcast, or None when nothing changed."""

    game: Game
    event: dict[str, Any] | None
    duplicate: bool = False


def result_of(game: Game) -> dict[str, Any] | None:
    if game.status == Game.Status.ACTIVE:
        return None
    return {"winner": game.winner, "termination": game.termination, "reason": game.reason}


def broadcast(game_id: int, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "game.event", "event": event}

    async def send() -> None:
        try:
            # Players first: spectators can wait the extra moment (lichess does the same).
            await layer.group_send(presence.players_group(game_id), message)
            await layer.group_send(presence.watchers_group(game_id), message)
        except Exception:
            # The move is committed; sockets that miss it resync by version.
            logger.exception("broadcast of game %s v%s failed", game_id, event.get("v"))

    run_soon(send)


def _emit(game: Game, event: dict[str, Any]) -> dict[str, Any]:
    """Give the event the game's next version, store it, and send it after commit."""
    game.version += 1
    event = {**event, "v": game.version, "game_id": game.pk}
    GameEvent.objects.create(game=game, version=game.version, payload=event)
    transaction.on_commit(lambda: broadcast(game.pk, event))
    return event


def _locked(game_id: int) -> Game:
    try:
        return Game.objects.select_for_update().get(pk=game_id)
    except Game.DoesNotExist:
        raise GameError("no_such_game", f"There is no game {game_id}.") from None


def _player(game: Game, user: Any) -> int:
    number = game.player_number(user)
    if number is None:
        raise GameError("not_a_player", "Only the two players of this game can do that.")
    return number


def _finish(game: Game, *, winner: int | None, termination: str, reason: str) -> dict[str, Any]:
    game.status = (
        Game.Status.ABORTED if termination == Game.Termination.ABORT else (Game.Status.FINISHED)
    )
    game.winner = winner
    game.termination = termination
    game.reason = reason
    return _emit(game, {"type": "end", "status": game.status, "result": result_of(game)})


# --- creating games ----------------------------------------------------------------------


def new_game(*, slug: str, options: dict[str, Any], player1: User, player2: User) -> Game:
    """An unsaved active game; the engine validates the slug and options."""
    if player1.pk == player2.pk:
        raise GameError("same_player", "A game needs two different players.")
    try:
        rules = rules_for(slug, options)
    except InvalidOptions as error:
        raise GameError("invalid_options", str(error)) from None
    return Game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        state=rules.to_json(rules.initial_state()),
    )


def create_game(*, slug: str, options: dict[str, Any], player1: User, player2: User) -> Game:
    """A new active game; the engine validates the slug and options."""
    game = new_game(slug=slug, options=options, player1=player1, player2=player2)
    game.save()
    return game


def create_games(games: list[Game]) -> list[Game]:
    """Save many new games in one statement (matchmaking pairs a burst of seeks at once)."""
    return Game.objects.bulk_create(games)


# --- moves ---------------------------------------------------------------------------------


def play_move(*, game_id: int, user: Any, move: Any, ply: Any) -> Applied:
    """Apply `move` for `user` if `ply` moves have been played; see docs/PROTOCOL.md."""
    if not isinstance(move, str) or not move.strip():
        raise GameError("bad_message", 'A move needs "move": the move in notation, as text.')
    if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
        raise GameError(
            "bad_message", 'A move needs "ply": the number of moves already played, as an integer.'
        )
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        rules = rules_for(game.slug, game.options)

        if ply < game.ply:
            return _resent(game, rules, player=player, move=move, ply=ply)
        if game.status != Game.Status.ACTIVE:
            raise GameError("game_over", f"The game is over ({game.reason}).")
        if ply > game.ply:
            raise GameError(
                "stale_ply", f"Only {game.ply} moves have been played, not {ply}; resync."
            )
        state = rules.from_json(game.state)
        if rules.to_move(state) != player:
            raise GameError("not_your_turn", "It is not your turn.")
        try:
            new_state = rules.play(state, move)
        except IllegalMove as error:
            raise GameError("illegal_move", str(error)) from None
        notation = canonical_move(rules, state, move)
        state_json = rules.to_json(new_state)
        Move.objects.create(game=game, ply=ply, player=player, notation=notation, state=state_json)
        game.ply = ply + 1
        game.state = state_json
        outcome = rules.outcome(new_state)
        if outcome is not None:
            game.status = Game.Status.FINISHED
            game.winner = outcome.winner
            game.termination = Game.Termination.RULES
            game.reason = outcome.reason
        event = _emit(
            game,
            {
                "type": "move",
                "ply": game.ply,
                "player": player,
                "move": notation,
                "state": state_json,
                "to_move": rules.to_move(new_state),
                "legal_moves": client_moves(rules, new_state),
                "status": game.status,
                "result": result_of(game),
            },
        )
        if outcome is not None:
            _emit(game, {"type": "end", "status": game.status, "result": result_of(game)})
        game.save()
    return Applied(game=game, event=event)


def _resent(game: Game, rules: Any, *, player: int, move: str, ply: int) -> Applied:
    """A move for a ply already played: the same move resent is a success, else stale."""
    earlier = Move.objects.filter(game=game, ply=ply).first()
    if earlier is not None and earlier.player == player:
        previous = rules.from_json(
            Move.objects.get(game=game, ply=ply - 1).state
            if ply
            else rules.to_json(rules.initial_state())
        )
        try:
            same = canonical_move(rules, previous, move) == earlier.notation
        except IllegalMove:
            same = False
        if same:
            event = (
                GameEvent.objects.filter(game=game, payload__type="move", payload__ply=ply + 1)
                .values_list("payload", flat=True)
                .first()
            )
            return Applied(game=game, event=event, duplicate=True)
    raise GameError(
        "stale_ply", f"{game.ply} moves have been played, not {ply}; your view is out of date."
    )


# --- resign, abort, rematch ----------------------------------------------------------------


def resign(*, game_id: int, user: Any) -> Applied:
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        if game.status != Game.Status.ACTIVE:
            raise GameError("game_over", "The game is already over.")
        name = user.username
        event = _finish(
            game,
            winner=3 - player,
            termination=Game.Termination.RESIGNATION,
            reason=f"{name} resigned",
        )
        game.save()
    return Applied(game=game, event=event)


def abort(*, game_id: int, user: Any) -> Applied:
    """End a game without a result, allowed until both players have moved."""
    with transaction.atomic():
        game = _locked(game_id)
        _player(game, user)
        if game.status != Game.Status.ACTIVE:
            raise GameError("game_over", "The game is already over.")
        movers = set(Move.objects.filter(game=game).values_list("player", flat=True).distinct())
        if movers >= {1, 2}:
            raise GameError(
                "too_late_to_abort", "Both players have moved: resign instead of aborting."
            )
        event = _finish(
            game,
            winner=None,
            termination=Game.Termination.ABORT,
            reason=f"aborted by {user.username}",
        )
        game.save()
    return Applied(game=game, event=event)


def offer_rematch(*, game_id: int, user: Any) -> Applied:
    """Ask for a rematch; when both have asked, ONE new game starts with sides swapped."""
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        if game.status == Game.Status.ACTIVE:
            raise GameError("game_not_over", "A rematch can be offered once the game is over.")
        if game.rematch_id is not None:
            return Applied(game=game, event=None, duplicate=True)
        offers = set(game.rematch_offers)
        if player in offers:
            return Applied(game=game, event=None, duplicate=True)
        offers.add(player)
        game.rematch_offers = sorted(offers)
        if offers == {1, 2}:
            rematch = create_game(
                slug=game.slug, options=game.options, player1=game.player2, player2=game.player1
            )
            game.rematch = rematch
            event = _emit(game, {"type": "rematch", "new_game_id": rematch.pk})
        else:
            event = _emit(game, {"type": "rematch_offer", "by": player})
        game.save()
    return Applied(game=game, event=event)
