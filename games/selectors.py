"""Reads: snapshots, missed events, listings and the pbmserv-style text of a game."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from games import clocks
from games.clocks import now_ms
from games.engine import client_moves, rules_for
from games.models import Game, GameEvent
from games.rules import available_games

# A client further behind than this gets one fresh snapshot instead of the events: a frame
# per event would let a cheap `sync` pull a whole game's history out of the server.
MAX_REPLAY = 20


def player_info(user: Any) -> dict[str, Any]:
    return {"username": user.username, "is_guest": user.is_guest}


def snapshot(game: Game) -> dict[str, Any]:
    """Everything a client needs to draw the game from scratch."""
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    moves = [{"player": player, "notation": notation} for player, notation in played(game)]
    return {
        "id": game.pk,
        "slug": game.slug,
        "options": game.options,
        "players": {"1": player_info(game.player1), "2": player_info(game.player2)},
        "status": game.status,
        "result": game.result(),
        "ply": game.ply,
        "state": game.state,
        # How to draw it: the client keeps no per-game tables.
        "board": rules.board(),
        "to_move": rules.to_move(state),
        "legal_moves": client_moves(rules, state) if game.status == Game.Status.ACTIVE else [],
        "moves": moves,
        "abortable": game.abortable,
        "rematch_offers": game.rematch_offers,
        "rematch_id": game.rematch_id,
        "created_at": game.created_at.isoformat(),
        "time_control": game.time_control.describe(),
        "clock": clocks.view(game.clock, now_ms()),
        # Real-time players away from the game: when their opponent may claim the win.
        "away": {seat: at + clocks.ABANDON_MS for seat, at in game.away.items()},
    }


def move_events(game: Game) -> QuerySet[GameEvent]:
    """The game's move events in order: each is the record of one move (moves taken back
    are not part of the game any more)."""
    return GameEvent.objects.filter(game=game, ply__isnull=False, undone=False).order_by("ply")


def played(game: Game) -> list[tuple[int, str]]:
    """(player, move as played) for every move so far."""
    return list(move_events(game).values_list("payload__player", "payload__move"))


def load_game(game_id: int) -> Game | None:
    return Game.objects.select_related("player1", "player2").filter(pk=game_id).first()


def events_since(game_id: int, version: int, latest: int) -> list[dict[str, Any]] | None:
    """The events after `version` in order, or None when a snapshot is the better answer."""
    if version >= latest:
        return []
    if version < 0 or latest - version > MAX_REPLAY:
        return None
    payloads = list(
        GameEvent.objects.filter(game_id=game_id, version__gt=version, version__lte=latest)
        .order_by("version")
        .values_list("payload", flat=True)
    )
    if len(payloads) != latest - version:
        return None
    return payloads


def games_with_status(status: str, limit: int = 100) -> QuerySet[Game]:
    return (
        Game.objects.filter(status=status)
        .select_related("player1", "player2")
        .order_by("-updated_at")[:limit]
    )


def game_text(game: Game) -> str:
    """pbmserv-style: a header, the board, and the numbered move list."""
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    lines = [
        f"{game.slug} game {game.pk}: {game.player1.username} (1) vs {game.player2.username} (2)",
    ]
    if game.options:
        lines.append("options: " + " ".join(f"-{k}={v}" for k, v in sorted(game.options.items())))
    lines += ["", rules.render_text(state).rstrip("\n"), ""]
    result = game.result()
    if result is None:
        lines.append(f"Player {rules.to_move(state)} to move.")
    elif result["winner"] is None:
        lines.append(f"Game over: {result['reason']} (no winner).")
    else:
        winner = game.player1 if result["winner"] == 1 else game.player2
        lines.append(f"Game over: {winner.username} wins ({result['reason']}).")
    lines.append("")
    for number, (player, notation) in enumerate(played(game), start=1):
        lines.append(f"{number:4d}. ({player}) {notation}")
    return "\n".join(lines) + "\n"


def positions(game: Game) -> list[dict[str, Any]]:
    rules = rules_for(game.slug, game.options)
    states = list(move_events(game).values_list("payload__state", flat=True))
    return [rules.to_json(rules.initial_state()), *states]


def title(game: Game) -> str:
    """The game's display name and options, and who plays."""
    name = title_for(game.slug, game.options)
    return f"{name}: {game.player1.username} vs {game.player2.username}"


def title_for(slug: str, options: dict[str, Any]) -> str:
    """A game's display name with its options (ZigZag (pits 8, seeds 7))."""
    names = {g["slug"]: g.get("name", g["slug"]) for g in available_games()}
    name = names.get(slug, slug)
    if options:
        name += " (" + ", ".join(f"{k} {v}" for k, v in sorted(options.items())) + ")"
    return name
