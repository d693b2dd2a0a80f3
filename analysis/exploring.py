"""The opening explorer kept up to date (docs/EXPLORER.md): the finished games not yet
counted are counted, a batch at a time, each batch in one transaction with the mark that
says so (games.models.PlayedMoves.explored). A process that dies mid-batch rolls it back
whole, and two processes never take the same games (SKIP LOCKED): every game is counted
exactly once. The sweeper counts on each pass; `python manage.py explorer` rebuilds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from analysis import explorer
from analysis.models import ExplorerMove
from games.engine import rules_for
from games.models import PlayedGame, PlayedMoves
from ratings.glicko import INITIAL_RATING
from ratings.models import Rating, RatingChange

logger = logging.getLogger(__name__)

# Games counted in one transaction: the longer it is, the fewer statements per game (the
# openings' rows are shared), the longer its locks on those rows are held.
BATCH = 200
# How long the sweeper counts on one pass before going back to the clocks.
SWEEP_SECONDS = 0.25
SWEEP_BATCH = 20
# Rows per INSERT statement on PostgreSQL (each column one array parameter).
ROWS_PER_STATEMENT = 20_000
_COLUMNS = (
    *("position", "band", "speed", "move", "games", "wins", "draws", "losses", "rating_sum"),
    "last_game",
)


@dataclass
class Progress:
    games: int = 0
    rows: int = 0
    cut_short: int = 0


def count_pending(limit: int = BATCH) -> Progress:
    """Count up to `limit` finished games not yet counted (the oldest first)."""
    with transaction.atomic():
        pending = list(
            PlayedMoves.objects.filter(explored=False)
            .select_for_update(skip_locked=True)
            .order_by("game_id")
            .values_list("game_id", "moves")[:limit]
        )
        if not pending:
            return Progress()
        ids = [game for game, _moves in pending]
        counted = explorer.count(_lines(pending), rules_for)
        _add(counted.rows)
        PlayedMoves.objects.filter(game_id__in=ids).update(explored=True)
    for game, ply, why in counted.cut_short:
        logger.warning("explorer: game %s counted to ply %s only: %s", game, ply, why)
    return Progress(len(ids), len(counted.rows), len(counted.cut_short))


def count_all(batch: int = BATCH, report: Any = None) -> Progress:
    """Count every game not yet counted; `report(progress)` after each batch."""
    total = Progress()
    while True:
        done = count_pending(batch)
        if not done.games:
            return total
        total.games += done.games
        total.rows += done.rows
        total.cut_short += done.cut_short
        if report is not None:
            report(total)


def count_for_a_while(seconds: float = SWEEP_SECONDS) -> int:
    """The sweeper's share: small batches until `seconds` have passed or none is left."""
    started, games = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        done = count_pending(SWEEP_BATCH).games
        if not done:
            break
        games += done
    return games


def on_sweep(**_: Any) -> None:
    """games.lifecycle.sweeping's receiver."""
    count_for_a_while()


def start_again() -> None:
    """Forget every count and mark every game to be counted again (`count_all` then counts
    them): one transaction, so a lookup sees the old explorer or an empty one, and a game
    that ends meanwhile is counted once like the rest."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # Counting batches add their rows under a lock this one excludes: a batch that
            # committed before is forgotten with the rest and its games counted again; one
            # still going waits, then adds to the empty explorer and marks its games (which
            # this does not unmark: they were not marked yet). Game ends never wait for it.
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {ExplorerMove._meta.db_table} IN EXCLUSIVE MODE")
        ExplorerMove.objects.all().delete()
        PlayedMoves.objects.filter(explored=True).update(explored=False)


def _lines(pending: list[tuple[int, str]]) -> Iterable[explorer.Line]:
    ids = [game for game, _moves in pending]
    played = {
        row["game_id"]: row
        for row in PlayedGame.objects.filter(game_id__in=ids, seat=1).values(
            "game_id", "user_id", "opponent_id", "slug", "options", "speed", "result", "rated"
        )
    }
    ratings = _ratings(played.values())
    for game, moves in pending:
        row = played.get(game)
        if row is None:  # the game's rows are gone (its players closed their accounts)
            continue
        winner = {"win": 1, "loss": 2}.get(row["result"])
        mean = sum(ratings.get((game, user), INITIAL_RATING) for user in _players(row)) / 2
        yield explorer.Line(
            game=game,
            slug=row["slug"],
            options=explorer.options_of(row["options"]),
            moves=tuple(moves.split()),
            winner=winner,
            rating=mean,
            speed=row["speed"],
        )


def _players(row: dict[str, Any]) -> tuple[int, int]:
    return row["user_id"], row["opponent_id"]


def _ratings(rows: Iterable[dict[str, Any]]) -> dict[tuple[int, int], float]:
    """(game, player) -> the player's rating when the game was played: the rating the game
    started from for a rated game, the player's rating now for a casual one (1500 for a
    player who has none in that game and speed)."""
    rows = list(rows)
    found: dict[tuple[int, int], float] = {}
    rated = [row["game_id"] for row in rows if row["rated"]]
    for game, user, before in RatingChange.objects.filter(game_id__in=rated).values_list(
        "game_id", "user_id", "before"
    ):
        found[game, user] = before
    casual = [
        row for row in rows if not row["rated"] or (row["game_id"], row["user_id"]) not in found
    ]
    if casual:
        users = {user for row in casual for user in _players(row)}
        now = {
            (user, slug, speed): rating
            for user, slug, speed, rating in Rating.objects.filter(user_id__in=users).values_list(
                "user_id", "slug", "speed", "rating"
            )
        }
        for row in casual:
            for user in _players(row):
                rating = now.get((user, row["slug"], row["speed"]))
                if rating is not None:
                    found.setdefault((row["game_id"], user), rating)
    return found


def _add(rows: dict[explorer.Key, explorer.Counts]) -> None:
    """Add the counts to the table in key order (two processes adding to the same rows then
    lock them in the same order, and never deadlock): on PostgreSQL one statement reading
    the rows from arrays (a statement of thousands of placeholders costs more to parse
    than to run), elsewhere one statement per row."""
    table = ExplorerMove._meta.db_table
    columns = ", ".join(_COLUMNS)
    added = ", ".join(
        f"{name} = {table}.{name} + excluded.{name}"
        for name in ("games", "wins", "draws", "losses", "rating_sum")
    )
    newest = (
        f"last_game = CASE WHEN excluded.last_game > {table}.last_game "
        f"THEN excluded.last_game ELSE {table}.last_game END"
    )
    upsert = f"ON CONFLICT (position, band, speed, move) DO UPDATE SET {added}, {newest}"
    ordered = [
        (*key, sums.games, sums.wins, sums.draws, sums.losses, sums.rating_sum, sums.last_game)
        for key, sums in sorted(rows.items())
    ]
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            marks = ", ".join(["%s"] * len(_COLUMNS))
            cursor.executemany(
                f"INSERT INTO {table} ({columns}) VALUES ({marks}) {upsert}", ordered
            )
            return
        types = ("bigint", "smallint", "smallint", "text", *["bigint"] * 6)
        arrays = ", ".join(f"%s::{kind}[]" for kind in types)
        for start in range(0, len(ordered), ROWS_PER_STATEMENT):
            chunk = ordered[start : start + ROWS_PER_STATEMENT]
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM unnest({arrays}) "
                f"WITH ORDINALITY AS given({columns}, n) ORDER BY n {upsert}",
                [list(column) for column in zip(*chunk, strict=True)],
            )
