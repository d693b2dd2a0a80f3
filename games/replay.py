"""Every game played again from its stored moves, and compared with what its row says.

A game's row keeps its position (`state`), `ply`, status and result; its move events keep
every move (the player, the move as played and the position it produced). The row is what
the site shows; the moves are the record. After a restore (docs/BACKUPS.md), or a migration,
both must still agree: each game's moves, played from the initial position through its rules
engine, must arrive at the stored position move by move, and its end must be the one the
row and its `end` event record. `python manage.py replaygames` runs this over every game.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max

from games.engine import rules_for
from games.models import Game, GameEvent
from games.rules import IllegalMove, InvalidOptions

# Games read per batch: their moves come in one query.
BATCH = 200

# How a finished game may have ended besides the rules, and who may have won it.
_WON = {
    Game.Termination.RESIGNATION,
    Game.Termination.TIME,
    Game.Termination.ABANDON,
    Game.Termination.FORFEIT,
}


@dataclass
class Replayed:
    """What the replay found: games and moves per game kind, and every difference."""

    games: Counter[str] = field(default_factory=Counter)
    running: Counter[str] = field(default_factory=Counter)
    moves: Counter[str] = field(default_factory=Counter)
    differences: list[str] = field(default_factory=list)

    @property
    def total_games(self) -> int:
        return sum(self.games.values())

    @property
    def total_moves(self) -> int:
        return sum(self.moves.values())


def replay_all() -> Replayed:
    """Every game replayed and compared (see the module's docstring)."""
    found = Replayed()
    for games in _batches():
        ids = [game.pk for game in games]
        moves: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for game_id, ply, payload in (
            GameEvent.objects.filter(game_id__in=ids, ply__isnull=False, undone=False)
            .order_by("game_id", "ply")
            .values_list("game_id", "ply", "payload")
        ):
            moves[game_id].append((ply, payload))
        ends: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for game_id, payload in GameEvent.objects.filter(
            game_id__in=ids, payload__type="end"
        ).values_list("game_id", "payload"):
            ends[game_id].append(payload)
        versions = {
            row["game_id"]: (row["events"], row["top"])
            for row in GameEvent.objects.filter(game_id__in=ids)
            .values("game_id")
            .annotate(events=Count("id"), top=Max("version"))
        }
        for game in games:
            found.games[game.slug] += 1
            found.running[game.slug] += game.status == Game.Status.ACTIVE
            played, differences = replay_game(
                game, moves[game.pk], ends[game.pk], versions.get(game.pk, (0, None))
            )
            found.moves[game.slug] += played
            found.differences += differences
    return found


def _batches() -> Iterator[list[Game]]:
    last = 0
    while True:
        games = list(Game.objects.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not games:
            return
        yield games
        last = games[-1].pk


def replay_game(
    game: Game,
    moves: list[tuple[int, dict[str, Any]]],
    ends: list[dict[str, Any]],
    versions: tuple[int, int | None] = (0, None),
) -> tuple[int, list[str]]:
    """Replay one game's moves ((ply, payload) in order, taken-back ones left out) and compare
    with its row, its `end` events and its events' (count, highest version): the moves
    replayed and the differences, each a line naming the game."""
    name = f"game {game.pk} ({game.slug})"
    try:
        rules = rules_for(game.slug, game.options)
    except InvalidOptions as error:
        return 0, [f"{name}: no rules for it: {error}"]
    found: list[str] = []
    state = rules.initial_state()
    played = 0
    for expected, (ply, payload) in enumerate(moves):
        if ply != expected:
            found.append(f"{name}: move {expected} is missing (the next stored move is {ply})")
            break
        player, move = payload.get("player"), payload.get("move")
        if player != rules.to_move(state):
            found.append(f"{name} move {ply}: played by {player}, but {rules.to_move(state)} moves")
            break
        try:
            state = rules.play(state, move)
        except IllegalMove as error:
            found.append(f"{name} move {ply}: {move!r} is illegal: {error}")
            break
        played += 1
        if _json(rules.to_json(state)) != _json(payload.get("state")):
            found.append(f"{name} move {ply} ({move}): the stored position differs from the replay")
            break
    if found:
        return played, found
    if played != game.ply:
        found.append(f"{name}: ply {game.ply} stored, {played} moves replayed")
    if _json(rules.to_json(state)) != _json(game.state):
        found.append(f"{name}: the stored position differs from the replay of its {played} moves")
    found += _result_differences(name, game, rules.outcome(state), moves)
    found += _end_differences(name, game, ends)
    events, top = versions
    if events != game.version or (top or 0) != game.version:
        found.append(f"{name}: version {game.version}, but {events} events stored (highest {top})")
    return played, found


def _result_differences(
    name: str, game: Game, outcome: Any, moves: list[tuple[int, dict[str, Any]]]
) -> list[str]:
    status, termination, winner = game.status, game.termination, game.winner
    if status == Game.Status.ACTIVE:
        found = []
        if outcome is not None:
            found.append(f"{name}: running, but its moves ended it ({outcome.reason})")
        if winner is not None or termination:
            found.append(f"{name}: running, with a result ({winner}, {termination!r})")
        both_moved = any(payload.get("player") == 2 for _, payload in moves)
        if game.both_moved != both_moved:
            found.append(f"{name}: both_moved {game.both_moved}, but the moves say {both_moved}")
        return found
    if termination == Game.Termination.RULES:
        if outcome is None:
            return [f"{name}: ended by the rules, but its moves did not end it"]
        if (winner, game.reason) != (outcome.winner, outcome.reason):
            return [
                f"{name}: result ({winner}, {game.reason!r}) stored, the rules say "
                f"({outcome.winner}, {outcome.reason!r})"
            ]
        return [] if status == Game.Status.FINISHED else [f"{name}: status {status}"]
    if outcome is not None:
        return [f"{name}: ended by {termination}, but its moves ended it ({outcome.reason})"]
    if termination == Game.Termination.ABORT:
        ok = status == Game.Status.ABORTED and winner is None
    elif termination == Game.Termination.AGREEMENT:
        ok = status == Game.Status.FINISHED and winner is None
    elif termination in _WON:
        ok = status == Game.Status.FINISHED and winner in (1, 2)
    else:
        ok = False
    return [] if ok else [f"{name}: {status} by {termination!r} with winner {winner}"]


def _end_differences(name: str, game: Game, ends: list[dict[str, Any]]) -> list[str]:
    if game.status == Game.Status.ACTIVE:
        return [f"{name}: running, but {len(ends)} end event(s) stored"] if ends else []
    if len(ends) != 1:
        return [f"{name}: {game.status}, with {len(ends)} end events"]
    end = ends[0]
    if end.get("status") != game.status or _json(end.get("result")) != _json(game.result()):
        return [f"{name}: its end event says {end.get('status')} {end.get('result')}"]
    return []


def _json(value: Any) -> Any:
    """The value as stored JSON reads back (tuples as lists, enums as their text)."""
    return json.loads(json.dumps(value))
