"""The only code that changes a game.

Every action follows one pattern (Zulip's check_/do_): lock the game row, check the request
against the game and the engine, write, bump the version, store the event, and broadcast it
after commit. Two processes can never both apply a move: the row lock orders them and the
unique (game, ply) constraint backs it up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.core.mail import send_mail
from django.db import models, transaction
from django.utils import timezone

from accounts.models import User
from games import clocks, lifecycle, presence, selectors, store
from games.clocks import now_ms
from games.engine import (
    MAX_MOVE_LENGTH,
    canonical_move,
    client_moves,
    rules_for,
    sowing_path,
)
from games.models import ChatLine, Game, GameConnection, GameEvent, MoveNotice, Vacation
from games.rules import IllegalMove, InvalidOptions, game_info
from realtime.db import run_soon
from realtime.errors import ServiceError
from realtime.protocol import encode

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Applied:
    """What a service did: the event it broadcast, or None when nothing changed."""

    game: Game
    event: dict[str, Any] | None
    duplicate: bool = False


def broadcast(game_id: int, event: dict[str, Any], text: str | None = None) -> None:
    """Send a stored event to every socket on the game, as the JSON text the sockets send
    on (encoded once, not once per socket), with the version and clock they act on."""
    layer = get_channel_layer()
    if layer is None:
        return
    message: dict[str, Any] = {
        "type": "game.event",
        "v": event["v"],
        "text": encode(event) if text is None else text,
    }
    if "clock" in event:
        message["clock"] = event["clock"]

    async def send() -> None:
        try:
            await layer.group_send(presence.game_group(game_id), message)
        except Exception:
            # The move is committed; sockets that miss it resync by version.
            logger.exception("broadcast of game %s v%s failed", game_id, event.get("v"))

    run_soon(send)


def _emit(game: Game, event: dict[str, Any], *, ply: int | None = None) -> dict[str, Any]:
    """Give the event the game's next version, store it, and send it after commit. A move
    event passes the move's `ply`: its row is also the move's record."""
    game.version += 1
    event = {**event, "v": game.version, "game_id": game.pk}
    text = encode(event)
    store.insert_event(game.pk, game.version, ply, text)
    transaction.on_commit(lambda: broadcast(game.pk, event, text))
    return event


def _locked(game_id: int) -> Game:
    game = store.lock_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", f"There is no game {game_id}.")
    return game


def _player(game: Game, user: Any) -> int:
    number = game.player_number(user)
    if number is None:
        raise ServiceError("not_a_player", "Only the two players of this game can do that.")
    return number


def _finish(
    game: Game, *, winner: int | None, termination: str, reason: str, now: int | None = None
) -> dict[str, Any]:
    now = now_ms() if now is None else now
    game.status = (
        Game.Status.ABORTED if termination == Game.Termination.ABORT else (Game.Status.FINISHED)
    )
    game.winner = winner
    game.termination = termination
    game.reason = reason
    game.clock = clocks.stopped(game.clock, now)
    game.deadline = None
    game.offers = {}
    event = _emit(
        game,
        {
            "type": "end",
            "status": game.status,
            "result": game.result(),
            "clock": clocks.view(game.clock, now),
        },
    )
    lifecycle.ended(game)
    return event


# --- time ----------------------------------------------------------------------------------


def _excused(game: Game, now: int) -> int:
    """Time the running player does not spend while their opponent is away (the
    abandonment countdown): at most ABANDON_MS, real-time games only."""
    clock = game.clock
    if not clock or not clock.get("running") or not game.time_control.realtime:
        return 0
    left_at = game.away.get(str(3 - clock["running"]))
    if left_at is None:
        return 0
    return min(clocks.ABANDON_MS, max(0, now - max(clock["since"], left_at)))


def _set_deadline(game: Game) -> None:
    due = clocks.due(game.clock)
    if due is None or game.status != Game.Status.ACTIVE:
        game.deadline = None
        return
    at = due.at
    if not due.abort and str(3 - due.player) in game.away:
        at += clocks.ABANDON_MS  # an upper bound: check_clock looks again then
    game.deadline = datetime.fromtimestamp(at / 1000, tz=UTC)


def _overdue(game: Game, now: int) -> clocks.Due | None:
    due = clocks.due(game.clock)
    if due is None:
        return None
    excused = 0 if due.abort else _excused(game, now)
    return due if due.at + excused <= now else None


def _end_by_clock(game: Game, due: clocks.Due, now: int) -> dict[str, Any]:
    user = game.player1 if due.player == 1 else game.player2
    if due.abort:
        return _finish(
            game,
            winner=None,
            termination=Game.Termination.ABORT,
            reason=f"{user.username} did not make a first move within "
            f"{clocks.FIRST_MOVE_MS // 1000} seconds",
            now=now,
        )
    return _finish(
        game,
        winner=3 - due.player,
        termination=Game.Termination.TIME,
        reason=f"{user.username} ran out of time",
        now=now,
    )


def check_clock(*, game_id: int) -> Applied:
    """End the game if the running side is out of time (or never made a first move).

    Idempotent: connected consumers and the sweeper may all call it at the deadline; the
    row lock orders them and only the first finds the game still active.
    """
    with transaction.atomic():
        game = _locked(game_id)
        if game.status != Game.Status.ACTIVE or game.clock is None:
            return Applied(game=game, event=None)
        now = now_ms()
        due = _overdue(game, now)
        if due is None:
            before = game.deadline
            _set_deadline(game)
            if game.deadline != before:
                game.save(update_fields=["deadline"])
            return Applied(game=game, event=None)
        event = _end_by_clock(game, due, now)
        game.save()
    return Applied(game=game, event=event)


def overdue_games(limit: int = 500) -> list[int]:
    """Active games whose deadline has passed (the sweeper's work list)."""
    now = datetime.fromtimestamp(now_ms() / 1000, tz=UTC)
    return list(
        Game.objects.filter(status=Game.Status.ACTIVE, deadline__lte=now)
        .order_by("deadline")
        .values_list("pk", flat=True)[:limit]
    )


def next_deadline() -> datetime | None:
    return (
        Game.objects.filter(status=Game.Status.ACTIVE, deadline__isnull=False)
        .order_by("deadline")
        .values_list("deadline", flat=True)
        .first()
    )


# --- creating games ----------------------------------------------------------------------


def new_game(
    *,
    slug: str,
    options: dict[str, Any],
    player1: User,
    player2: User,
    time_control: str | clocks.TimeControl = "",
    rated: bool = False,
) -> Game:
    """An unsaved active game; the engine validates the slug and options, clocks.parse the
    time control. A timed game's clock starts now, with player 1 to move. Only a game
    between two registered players can be rated."""
    if player1.pk == player2.pk:
        raise ServiceError("same_player", "A game needs two different players.")
    if rated and (player1.is_guest or player2.is_guest):
        raise ServiceError(
            "guests_play_casual", "Guests play casual games only: log in to play rated."
        )
    if rated and (player1.is_bot or player2.is_bot):
        raise ServiceError("bots_play_casual", "Games against the computer are never rated.")
    try:
        rules = rules_for(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", str(error)) from None
    try:
        control = (
            time_control
            if isinstance(time_control, clocks.TimeControl)
            else clocks.parse(time_control)
        )
    except clocks.BadTimeControl as error:
        raise ServiceError("invalid_time_control", str(error)) from None
    game = Game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        state=rules.to_json(rules.initial_state()),
        time_control=control,
        clock=clocks.start(control, now_ms()),
        rated=rated,
        moved_at=timezone.now(),
    )
    _set_deadline(game)
    return game


def create_game(
    *,
    slug: str,
    options: dict[str, Any],
    player1: User,
    player2: User,
    time_control: str | clocks.TimeControl = "",
    rated: bool = False,
) -> Game:
    """A new active game; the engine validates the slug and options."""
    game = new_game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        time_control=time_control,
        rated=rated,
    )
    game.save()
    lifecycle.started([game])
    return game


def create_games(games: list[Game]) -> list[Game]:
    """Save many new games in one statement (matchmaking pairs a burst of seeks at once)."""
    created = Game.objects.bulk_create(games)
    lifecycle.started(created)
    return created


# --- moves ---------------------------------------------------------------------------------


def play_move(*, game_id: int, user: Any, move: str, ply: int, lag: int = 0) -> Applied:
    """Apply `move` for `user` if `ply` moves have been played; see docs/PROTOCOL.md.

    `lag` is the mover's measured one-way network delay (ms), forgiven within a quota. A
    move that arrives after the mover's time ran out ends the game on time instead.
    """
    if not isinstance(move, str) or not move.strip():
        raise ServiceError("bad_message", 'A move needs "move": the move in notation, as text.')
    if len(move) > MAX_MOVE_LENGTH:
        raise ServiceError("bad_message", f"A move has at most {MAX_MOVE_LENGTH} characters.")
    if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
        raise ServiceError(
            "bad_message", 'A move needs "ply": the number of moves already played, as an integer.'
        )
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        rules = rules_for(game.slug, game.options)

        if ply < game.ply:
            return _resent(game, rules, player=player, move=move, ply=ply)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", f"The game is over ({game.reason}).")
        if ply > game.ply:
            raise ServiceError(
                "stale_ply", f"Only {game.ply} moves have been played, not {ply}; resync."
            )
        state = rules.from_json(game.state)
        if rules.to_move(state) != player:
            raise ServiceError("not_your_turn", "It is not your turn.")
        now = now_ms()
        flagged = _overdue(game, now)
        if flagged is not None:
            _end_by_clock(game, flagged, now)
            game.save()
        else:
            event = _apply(game, rules, state, player=player, move=move, ply=ply, now=now, lag=lag)
            _answer_from_queue(game, rules, mover=player, move=event["move"], now=now)
    if flagged is not None:
        raise ServiceError("game_over", f"The game is over ({game.reason}).")
    return Applied(game=game, event=event)


def _apply(
    game: Game, rules: Any, state: Any, *, player: int, move: str, ply: int, now: int, lag: int
) -> dict[str, Any]:
    """Play the move on the locked game: engine, move row, clock, events."""
    try:
        new_state = rules.play(state, move)
    except IllegalMove as error:
        raise ServiceError("illegal_move", str(error)) from None
    notation = canonical_move(rules, state, move)
    path = sowing_path(rules, state, move)
    state_json = rules.to_json(new_state)
    game.ply = ply + 1
    game.state = state_json
    game.both_moved = game.both_moved or player == 2
    game.moved_at = timezone.now()
    # An offer was made for the position before this move: the move withdraws it.
    game.offers = {}
    outcome = rules.outcome(new_state)
    turn_over = outcome is not None or rules.to_move(new_state) != player
    if game.clock:
        game.clock = clocks.after_move(
            game.clock,
            player=player,
            turn_over=turn_over,
            game_over=outcome is not None,
            now=now,
            lag=lag,
            excused=_excused(game, now),
        )
    if outcome is not None:
        game.status = Game.Status.FINISHED
        game.winner = outcome.winner
        game.termination = Game.Termination.RULES
        game.reason = outcome.reason
    _set_deadline(game)
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
            "result": game.result(),
            "abortable": game.abortable,
            "clock": clocks.view(game.clock, now),
            **({"path": path} if path is not None else {}),
        },
        ply=ply,
    )
    if outcome is not None:
        _emit(
            game,
            {
                "type": "end",
                "status": game.status,
                "result": game.result(),
                "clock": clocks.view(game.clock, now),
            },
        )
    elif turn_over and game.time_control.correspondence:
        MoveNotice.objects.get_or_create(game=game, player=3 - player)
    store.update_game(game, MOVE_COLUMNS)
    if outcome is not None:
        lifecycle.ended(game)
    return event


# What a move changes on the game row (store.update_game writes only these).
MOVE_COLUMNS = (
    "ply",
    "state",
    "both_moved",
    "clock",
    "deadline",
    "status",
    "winner",
    "termination",
    "reason",
    "version",
    "moved_at",
    "offers",
    "queues",
)


def _resent(game: Game, rules: Any, *, player: int, move: str, ply: int) -> Applied:
    """A move for a ply already played: the same move resent is a success, else stale."""
    records = {
        row.ply: row.payload
        for row in selectors.move_events(game).filter(ply__in=[ply - 1, ply]).only("ply", "payload")
    }
    earlier = records.get(ply)
    if earlier is not None and earlier["player"] == player:
        previous = rules.from_json(
            records[ply - 1]["state"] if ply else rules.to_json(rules.initial_state())
        )
        try:
            same = canonical_move(rules, previous, move) == earlier["move"]
        except IllegalMove:
            same = False
        if same:
            return Applied(game=game, event=earlier, duplicate=True)
    raise ServiceError(
        "stale_ply", f"{game.ply} moves have been played, not {ply}; your view is out of date."
    )


# --- conditional moves (pbmserv's queue) ---------------------------------------------------

# Moves in a queue at most: ten "if they play X, answer Y" pairs.
QUEUE_MAX = 20


def set_queue(*, game_id: int, user: Any, moves: list[str]) -> list[str]:
    """Queue conditional moves while the opponent is to move: [X, Y, Z, W] means "if they
    play X, answer Y; if they then play Z, answer W". Every move is checked now by playing
    the line out; an empty list clears the queue. Returns the queue as stored (canonical)."""
    if not isinstance(moves, list) or not all(isinstance(move, str) for move in moves):
        raise ServiceError("bad_message", 'A queue needs "moves": a list of moves in notation.')
    with transaction.atomic():
        game, player = _active_player(game_id, user)
        if game.time_control.realtime:
            raise ServiceError(
                "bad_queue", "Conditional moves are for correspondence and untimed games."
            )
        if len(moves) % 2 or len(moves) > QUEUE_MAX:
            raise ServiceError(
                "bad_queue",
                f"A queue is pairs of moves (their move, then your answer), at most {QUEUE_MAX}.",
            )
        queue = _checked_queue(game, player, moves) if moves else []
        queues = {seat: line for seat, line in game.queues.items() if seat != str(player)}
        game.queues = {**queues, str(player): queue} if queue else queues
        game.save(update_fields=["queues", "updated_at"])
    return queue


def _checked_queue(game: Game, player: int, moves: list[str]) -> list[str]:
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    names = {1: game.player1.username, 2: game.player2.username}
    if rules.to_move(state) == player:
        raise ServiceError(
            "bad_queue", "It is your move: play it. A queue answers your opponent's moves."
        )
    queue: list[str] = []
    for number, move in enumerate(moves):
        mover = 3 - player if number % 2 == 0 else player
        if rules.outcome(state) is not None:
            raise ServiceError("bad_queue", f"The game would be over before {move}.")
        if rules.to_move(state) != mover:
            raise ServiceError(
                "bad_queue",
                f"After {queue[-1]} it is {names[rules.to_move(state)]}'s move, "
                f"not {names[mover]}'s: a queue holds whole turns of one move.",
            )
        try:
            canonical = canonical_move(rules, state, move)
            state = rules.play(state, move)
        except IllegalMove as error:
            raise ServiceError("bad_queue", f"{move.strip()[:20]}: {error}") from None
        queue.append(canonical)
    return queue


def _answer_from_queue(game: Game, rules: Any, *, mover: int, move: str, now: int) -> None:
    """After `mover` played `move`: the opponent's queue answers it if it expected it, and
    is dropped if it did not (the line it was written for is gone)."""
    owner = 3 - mover
    queue = game.queues.get(str(owner))
    if not queue:
        return
    state = rules.from_json(game.state)
    if game.status == Game.Status.ACTIVE and rules.to_move(state) == mover:
        return  # the mover's turn goes on (a Diffusion Chess turn): wait for its end
    rest = {seat: line for seat, line in game.queues.items() if seat != str(owner)}
    expected, answer, *later = queue
    game.queues = {**rest, str(owner): later} if later else rest
    if game.status == Game.Status.ACTIVE and expected == move:
        try:
            _apply(game, rules, state, player=owner, move=answer, ply=game.ply, now=now, lag=0)
            return
        except ServiceError:
            # Checked when queued along this very line, so it cannot happen; if it ever
            # did, the opponent's move must still stand: only the queue goes.
            logger.exception("queued answer %s in game %s refused", answer, game.pk)
    store.update_game(game, ("queues",))


# --- vacations: the clocks of a player's correspondence games stand still -------------------


def start_vacation(*, user: Any, days: Any) -> Vacation:
    """Go on vacation for `days`: every correspondence game of the user stops its clocks
    (both sides) until then. At most VACATION_DAYS days in any 365."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", "Log in to take a vacation.")
    allowance = settings.VACATION_DAYS
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= allowance:
        raise ServiceError("bad_message", f"days is a whole number from 1 to {allowance}.")
    with transaction.atomic():
        # One vacation change per user at a time: their row orders concurrent requests.
        User.objects.select_for_update().filter(pk=user.pk).first()
        now = timezone.now()
        running = selectors.current_vacation(user)
        if running is not None:
            raise ServiceError(
                "on_vacation", f"You are on vacation until {running.ends_at:%Y-%m-%d %H:%M} UTC."
            )
        left = allowance - selectors.vacation_days_used(user, now)
        if days > left + 1e-9:
            raise ServiceError(
                "vacation_limit",
                f"At most {allowance} days of vacation in a year: you have "
                f"{max(0, int(left))} left.",
            )
        vacation = Vacation.objects.create(
            user=user, starts_at=now, ends_at=now + timedelta(days=days)
        )
        _pause_games(user, until=int(vacation.ends_at.timestamp() * 1000))
    return vacation


def end_vacation(*, user: Any) -> Vacation:
    """Come back early: the clocks run again from now; the days not taken are not used."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", "Log in first.")
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        vacation = selectors.current_vacation(user)
        if vacation is None:
            raise ServiceError("not_on_vacation", "You are not on vacation.")
        vacation.ends_at = max(vacation.starts_at, timezone.now())
        vacation.save(update_fields=["ends_at"])
        _pause_games(user, until=now_ms())
    return vacation


def _pause_games(user: Any, *, until: int) -> None:
    """Hold the clocks of the user's active correspondence games until `until`, and tell
    each game's sockets (a versioned `vacation` event carries the new clock)."""
    ids = (
        Game.objects.filter(status=Game.Status.ACTIVE)
        .filter(models.Q(player1=user) | models.Q(player2=user))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for game_id in ids:
        game = _locked(game_id)
        if game.status != Game.Status.ACTIVE or not game.time_control.correspondence:
            continue
        now = now_ms()
        game.clock = clocks.paused(game.clock, now, until)
        _set_deadline(game)
        _emit(
            game,
            {
                "type": "vacation",
                "player": game.player_number(user),
                "until": until,
                "clock": clocks.view(game.clock, now),
            },
        )
        game.save(update_fields=["clock", "deadline", "version", "updated_at"])


# --- resign, abort, rematch ----------------------------------------------------------------


def resign(*, game_id: int, user: Any) -> Applied:
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", "The game is already over.")
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
            raise ServiceError("game_over", "The game is already over.")
        if game.both_moved:
            raise ServiceError(
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
            raise ServiceError("game_not_over", "A rematch can be offered once the game is over.")
        if game.rematch_id is not None:
            return Applied(game=game, event=None, duplicate=True)
        offers = set(game.rematch_offers)
        if player in offers:
            return Applied(game=game, event=None, duplicate=True)
        offers.add(player)
        game.rematch_offers = sorted(offers)
        if offers == {1, 2}:
            rematch = create_game(
                slug=game.slug,
                options=game.options,
                player1=game.player2,
                player2=game.player1,
                time_control=game.time_control,
                rated=game.rated,
            )
            game.rematch = rematch
            event = _emit(game, {"type": "rematch", "new_game_id": rematch.pk})
        else:
            event = _emit(game, {"type": "rematch_offer", "by": player})
        game.save()
    return Applied(game=game, event=event)


# --- takebacks and draws by consent (pbmserv's undo and propose draw) ----------------------


def _active_player(game_id: int, user: Any) -> tuple[Game, int]:
    game = _locked(game_id)
    player = _player(game, user)
    if game.status != Game.Status.ACTIVE:
        raise ServiceError("game_over", "The game is already over.")
    return game, player


# Two turns at most are taken back, and no turn has more than five moves (Diffusion Chess).
_LATEST_MOVES = 12


def _trailing_moves(game: Game, player: int) -> list[GameEvent]:
    """The moves at the end of the game made by `player` (their last turn, all of it in
    Diffusion Chess), newest first; empty when the opponent moved since.

    Against the computer, which answers at once, its answer goes with the asker's turn:
    the computer's last turn and the asker's turn before it are taken back together.
    """
    latest = selectors.move_events(game).order_by("-ply").only("pk", "ply", "payload")
    turns: list[list[GameEvent]] = []
    for event in latest[:_LATEST_MOVES]:
        if turns and turns[-1][0].payload["player"] == event.payload["player"]:
            turns[-1].append(event)
        else:
            turns.append([event])
    if turns and turns[0][0].payload["player"] == player:
        return turns[0]
    opponent = game.player2 if player == 1 else game.player1
    if opponent.is_bot and len(turns) >= 2:
        return turns[0] + turns[1]
    return []


def offer_takeback(*, game_id: int, user: Any) -> Applied:
    """Ask the opponent to take back the asker's last move (or last turn)."""
    with transaction.atomic():
        game, player = _active_player(game_id, user)
        if not _trailing_moves(game, player):
            raise ServiceError(
                "nothing_to_take_back",
                "You can take back only your own last move, before your opponent answers it.",
            )
        if game.offers.get("takeback") == player:
            return Applied(game=game, event=None, duplicate=True)
        game.offers = {**game.offers, "takeback": player}
        event = _emit(game, {"type": "takeback_offer", "by": player})
        game.save(update_fields=["offers", "version", "updated_at"])
    return Applied(game=game, event=event)


def answer_takeback(*, game_id: int, user: Any, accept: bool) -> Applied:
    """Accept or decline the opponent's takeback request. Accepted, their last moves are
    undone: the position goes back, the clocks keep the time already spent and the
    asker's clock runs; the moves' events stay stored, marked undone."""
    with transaction.atomic():
        game, player = _active_player(game_id, user)
        asker = 3 - player
        if game.offers.get("takeback") != asker:
            raise ServiceError("no_offer", "Your opponent has not asked to take a move back.")
        offers = {kind: by for kind, by in game.offers.items() if kind != "takeback"}
        if not accept:
            game.offers = offers
            event = _emit(game, {"type": "takeback_declined", "by": player})
            game.save(update_fields=["offers", "version", "updated_at"])
            return Applied(game=game, event=event)
        undone = _trailing_moves(game, asker)
        if not undone:  # cannot happen while moves withdraw offers; refuse rather than guess
            raise ServiceError("nothing_to_take_back", "There is no move to take back.")
        rules = rules_for(game.slug, game.options)
        first = undone[-1].ply or 0
        before = selectors.move_events(game).filter(ply=first - 1).values_list("payload", flat=True)
        state_json = before[0]["state"] if first else rules.to_json(rules.initial_state())
        state = rules.from_json(state_json)
        GameEvent.objects.filter(pk__in=[event.pk for event in undone]).update(undone=True)
        now = now_ms()
        game.ply = first
        game.state = state_json
        game.both_moved = selectors.move_events(game).filter(payload__player=2).exists()
        game.offers = {}
        game.queues = {}  # written for a line that is no longer on the board
        game.moved_at = timezone.now()
        if game.clock:
            clock = clocks.stopped(game.clock, now) or {}
            game.clock = {**clock, "running": rules.to_move(state), "since": now}
        _set_deadline(game)
        event = _emit(
            game,
            {
                "type": "takeback",
                "by": player,
                "ply": game.ply,
                "undone": len(undone),
                "state": state_json,
                "to_move": rules.to_move(state),
                "legal_moves": client_moves(rules, state),
                "abortable": game.abortable,
                "clock": clocks.view(game.clock, now),
            },
        )
        game.save()
    return Applied(game=game, event=event)


def offer_draw(*, game_id: int, user: Any) -> Applied:
    """Propose a draw; if the opponent proposed one already, the game is drawn."""
    with transaction.atomic():
        game, player = _active_player(game_id, user)
        info = game_info(game.slug)
        if not info.draws:
            raise ServiceError("no_draws", info.no_draws)
        if game.offers.get("draw") == player:
            return Applied(game=game, event=None, duplicate=True)
        if game.offers.get("draw") == 3 - player:
            event = _draw_agreed(game)
        else:
            game.offers = {**game.offers, "draw": player}
            event = _emit(game, {"type": "draw_offer", "by": player})
        game.save()
    return Applied(game=game, event=event)


def answer_draw(*, game_id: int, user: Any, accept: bool) -> Applied:
    """Accept (the game is drawn) or decline the opponent's draw offer."""
    with transaction.atomic():
        game, player = _active_player(game_id, user)
        if game.offers.get("draw") != 3 - player:
            raise ServiceError("no_offer", "Your opponent has not offered a draw.")
        if accept:
            event = _draw_agreed(game)
        else:
            game.offers = {kind: by for kind, by in game.offers.items() if kind != "draw"}
            event = _emit(game, {"type": "draw_declined", "by": player})
        game.save()
    return Applied(game=game, event=event)


def _draw_agreed(game: Game) -> dict[str, Any]:
    return _finish(
        game,
        winner=None,
        termination=Game.Termination.AGREEMENT,
        reason="drawn by agreement",
    )


# --- chat ----------------------------------------------------------------------------------

CHAT_MAX = 140
# At most CHAT_BURST lines in CHAT_WINDOW seconds from one user in one game.
CHAT_BURST = 5
CHAT_WINDOW = 10


def post_chat(*, game_id: int, user: Any, room: str, text: str) -> dict[str, Any]:
    """Store a chat line and send it to its room; returns the line as clients see it."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", "Log in (or play as a guest) to chat.")
    text = " ".join(str(text).split())
    if not text:
        raise ServiceError("bad_message", "A chat line needs some text.")
    if len(text) > CHAT_MAX:
        raise ServiceError("chat_too_long", f"A chat line has at most {CHAT_MAX} characters.")
    if room not in ChatLine.Room.values:
        raise ServiceError("bad_message", 'room is "players" or "spectators".')
    game = selectors.load_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", f"There is no game {game_id}.")
    player = game.player_number(user)
    if room == ChatLine.Room.PLAYERS and player is None:
        raise ServiceError("not_a_player", "Only the two players talk in the players' room.")
    if room == ChatLine.Room.SPECTATORS and player is not None:
        raise ServiceError(
            "not_a_spectator", "Players talk to each other in the players' room, not here."
        )
    since = timezone.now() - timedelta(seconds=CHAT_WINDOW)
    recent = ChatLine.objects.filter(game=game, user=user, created_at__gte=since).count()
    if recent >= CHAT_BURST:
        raise ServiceError(
            "chat_too_fast", f"At most {CHAT_BURST} lines in {CHAT_WINDOW} seconds: slow down."
        )
    line = ChatLine.objects.create(game=game, room=room, user=user, text=text)
    frame = {"type": "chat", "room": room, "line": selectors.chat_line(line)}
    hidden = selectors.chat_hidden_from(game, user.pk, room)
    transaction.on_commit(lambda: _send_chat(game.pk, frame, hidden))
    return frame


def _send_chat(game_id: int, frame: dict[str, Any], hidden: list[int]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {
        "type": "game.chat",
        "room": frame["room"],
        "line_id": frame["line"]["id"],
        "hidden_from": hidden,
        "text": encode(frame),
    }

    async def send() -> None:
        try:
            await layer.group_send(presence.game_group(game_id), message)
        except Exception:
            # The line is stored: a client's next sync (with `chat`) brings it.
            logger.exception("chat of game %s not sent", game_id)

    run_soon(send)


def mute_chat(*, game_id: int, user: Any, mute: bool) -> Applied:
    """A player hides (or shows again) their opponent's chat in this game."""
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        muted = set(game.chat_muted)
        muted = muted | {player} if mute else muted - {player}
        game.chat_muted = sorted(muted)
        game.save(update_fields=["chat_muted", "updated_at"])
    return Applied(game=game, event=None)


# --- abandonment -----------------------------------------------------------------------------


def _realtime_and_active(game: Game) -> bool:
    return game.status == Game.Status.ACTIVE and game.time_control.realtime


def player_left(*, game_id: int, player: int) -> Applied:
    """A player's socket closed: if it was their last on a real-time game, the countdown
    to a claimable win starts (the opponent is told)."""
    with transaction.atomic():
        game = _locked(game_id)
        still_here = GameConnection.objects.filter(game=game, player=player).exists()
        if still_here or not _realtime_and_active(game) or str(player) in game.away:
            return Applied(game=game, event=None)
        now = now_ms()
        game.away = {**game.away, str(player): now}
        _set_deadline(game)
        event = _emit(game, {"type": "away", "player": player, "claim_at": now + clocks.ABANDON_MS})
        game.save()
    return Applied(game=game, event=event)


def player_returned(*, game_id: int, player: int) -> Applied:
    """A player is back: the countdown stops; the time their opponent did not spend
    waiting on them is given back."""
    with transaction.atomic():
        game = _locked(game_id)
        if str(player) not in game.away:
            return Applied(game=game, event=None)
        now = now_ms()
        if game.status == Game.Status.ACTIVE and game.clock:
            excused = _excused(game, now)
            if excused:
                running = game.clock["running"]
                remaining = list(game.clock["remaining"])
                remaining[running - 1] += excused
                game.clock = {**game.clock, "remaining": remaining}
        game.away = {seat: at for seat, at in game.away.items() if seat != str(player)}
        _set_deadline(game)
        event = _emit(
            game, {"type": "back", "player": player, "clock": clocks.view(game.clock, now)}
        )
        game.save()
    return Applied(game=game, event=event)


def claim_victory(*, game_id: int, user: Any) -> Applied:
    """The opponent of a real-time player away for ABANDON_MS may claim the win."""
    with transaction.atomic():
        game = _locked(game_id)
        player = _player(game, user)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", "The game is already over.")
        opponent = 3 - player
        left_at = game.away.get(str(opponent))
        now = now_ms()
        if left_at is None or GameConnection.objects.filter(game=game, player=opponent).exists():
            raise ServiceError("opponent_here", "Your opponent is connected: the game goes on.")
        wait = left_at + clocks.ABANDON_MS - now
        if wait > 0:
            raise ServiceError(
                "too_early",
                f"Your opponent may still come back: you can claim in {-(-wait // 1000)} s.",
            )
        gone = game.player1 if opponent == 1 else game.player2
        event = _finish(
            game,
            winner=player,
            termination=Game.Termination.ABANDON,
            reason=f"{gone.username} left the game",
            now=now,
        )
        game.save()
    return Applied(game=game, event=event)


def connections_reaped(rows: list[GameConnection]) -> None:
    """Sockets of a dead server process are gone: their players count as having left (the
    abandonment countdown starts) and every crowd is told."""
    _players_changed(rows, player_left)


def connections_revived(rows: list[GameConnection]) -> None:
    """Sockets wrongly taken for dead (their process stalled) are back."""
    _players_changed(rows, player_returned)


def _players_changed(rows: list[GameConnection], change: Any) -> None:
    for game_id, player in sorted({(row.game_id, row.player) for row in rows if row.player}):
        try:
            change(game_id=game_id, player=player)
        except Exception:
            logger.exception("presence of player %s in game %s not recorded", player, game_id)
    for game_id in sorted({row.game_id for row in rows}):
        presence.send_crowd(game_id)


# --- long correspondence: reminders and forfeits (pbmserv's 7 and 21 days) -----------------


def _stalled_since(game: Game) -> datetime:
    return game.moved_at or game.created_at


def _waiting_player(game: Game) -> int:
    rules = rules_for(game.slug, game.options)
    return int(rules.to_move(rules.from_json(game.state)))


def stalled_games(days: float, now: datetime | None = None) -> list[int]:
    """Active correspondence and untimed games whose last move is `days` old or more."""
    now = now or timezone.now()
    rows = Game.objects.filter(
        status=Game.Status.ACTIVE, moved_at__lte=now - timedelta(days=days)
    ).only("pk", "time_control")
    return [game.pk for game in rows if not game.time_control.realtime]


def _stall(game: Game, player: int, now: datetime) -> timedelta:
    """How long the player to move has not moved, their days on vacation not counted (a
    vacation stops this countdown too: untimed games have no clock to pause)."""
    start = _stalled_since(game)
    user_id = game.player1_id if player == 1 else game.player2_id
    away = timedelta()
    for vacation in Vacation.objects.filter(user_id=user_id, ends_at__gt=start, starts_at__lt=now):
        away += min(vacation.ends_at, now) - max(vacation.starts_at, start)
    return now - start - away


def remind_stalled(now: datetime | None = None) -> int:
    """E-mail each player who has not moved for REMINDER_DAYS, once per stall; how many."""
    now = now or timezone.now()
    sent = 0
    for game_id in stalled_games(settings.REMINDER_DAYS, now):
        with transaction.atomic():
            game = _locked(game_id)
            if game.status != Game.Status.ACTIVE or (
                game.reminded_at is not None and game.reminded_at > _stalled_since(game)
            ):
                continue
            player = _waiting_player(game)
            if _stall(game, player, now) < timedelta(days=settings.REMINDER_DAYS):
                continue
            game.reminded_at = now
            game.save(update_fields=["reminded_at"])
        sent += _remind(game, player)
    return sent


def _remind(game: Game, player: int) -> int:
    user = game.player1 if player == 1 else game.player2
    opponent = game.player2 if player == 1 else game.player1
    if not user.email or not user.email_on_move:
        return 0
    name = selectors.title_for(game.slug, game.options)
    link = f"{settings.SITE_URL.rstrip('/')}/games/{game.pk}/"
    days = settings.FORFEIT_DAYS
    try:
        send_mail(
            subject=f"Reminder: your move in {name} #{game.pk} against {opponent.username}",
            message=(
                f"You have not moved in {name} #{game.pk} against {opponent.username} for "
                f"{settings.REMINDER_DAYS:g} days. After {days:g} days without a move the game "
                f"is lost by forfeit.\n\n{link}\n\nGoing away? Take a vacation on your "
                f"profile: {settings.SITE_URL.rstrip('/')}/@{user.username}/\n"
            ),
            from_email=None,
            recipient_list=[user.email],
        )
    except OSError:
        logger.exception("could not remind %s about game %s", user.username, game.pk)
        return 0
    return 1


def forfeit_stalled(now: datetime | None = None) -> int:
    """End by forfeit every game whose player to move has not moved for FORFEIT_DAYS
    (their days of vacation not counted); how many."""
    now = now or timezone.now()
    ended = 0
    for game_id in stalled_games(settings.FORFEIT_DAYS, now):
        with transaction.atomic():
            game = _locked(game_id)
            if game.status != Game.Status.ACTIVE:
                continue
            player = _waiting_player(game)
            if _stall(game, player, now) < timedelta(days=settings.FORFEIT_DAYS):
                continue
            user = game.player1 if player == 1 else game.player2
            _finish(
                game,
                winner=3 - player,
                termination=Game.Termination.FORFEIT,
                reason=f"{user.username} did not move for {settings.FORFEIT_DAYS:g} days",
            )
            game.save()
            ended += 1
    return ended


# --- correspondence e-mail -------------------------------------------------------------------


def send_move_notices(limit: int = 100) -> int:
    """Send the pending "your move" e-mails (the sweeper calls this every pass); how many
    were sent. Each notice is taken by one sender only, even with several sweepers."""
    with transaction.atomic():
        pending = list(
            MoveNotice.objects.select_for_update(skip_locked=True).order_by("pk")[:limit]
        )
        MoveNotice.objects.filter(pk__in=[notice.pk for notice in pending]).delete()
    return sum(notify_move(notice.game_id, notice.player) for notice in pending)


def notify_move(game_id: int, player: int) -> bool:
    """E-mail `player` that it is their move, unless a socket of theirs is on the game (they
    see it already), they have no address, or they turned these e-mails off."""
    game = Game.objects.select_related("player1", "player2").filter(pk=game_id).first()
    if game is None or game.status != Game.Status.ACTIVE:
        return False
    if GameConnection.objects.filter(game=game, player=player).exists():
        return False
    user = game.player1 if player == 1 else game.player2
    opponent = game.player2 if player == 1 else game.player1
    if not user.email or not user.email_on_move:
        return False
    name = selectors.title_for(game.slug, game.options)
    link = f"{settings.SITE_URL.rstrip('/')}/games/{game.pk}/"
    try:
        send_mail(
            subject=f"Your move in {name} #{game.pk} against {opponent.username}",
            message=(
                f"{opponent.username} has moved in {name} #{game.pk}. It is your move:\n\n"
                f"{link}\n\nYou have {game.time_control.label}.\n"
                f"Turn these e-mails off on your profile: "
                f"{settings.SITE_URL.rstrip('/')}/@{user.username}/\n"
            ),
            from_email=None,
            recipient_list=[user.email],
        )
    except OSError:
        logger.exception("could not e-mail %s about game %s", user.username, game.pk)
        return False
    return True
