"""The statements of the move path, written directly.

A move is two statements on PostgreSQL: read the game row, then one statement that updates
its changed columns if the row is still as read and, only if it did, inserts the move's
events (the move event is also the move's record) and its "your move" notice: a
data-modifying WITH query, atomic as any single statement, so no BEGIN and COMMIT either.
SQLite has no data-modifying WITH: there the same writes are one transaction of a statement
each. Through the ORM these statements cost more CPU than everything else a move does
(compiling the query, building model instances, saving every column); here each statement's
text is built once per process and the values go through the same field conversions the ORM
applies, so rows read and written here are exactly what the ORM reads and writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from games.models import Game, GameEvent, MoveNotice

Converter = Callable[[Any, Any, Any], Any]

# The columns an event row and a notice row are written with (the rest take their defaults).
EVENT_COLUMNS = ("game_id", "version", "ply", "payload", "created_at")
NOTICE_COLUMNS = ("game_id", "player", "created_at")


@cache
def _select_sql(vendor: str, lock: bool) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in Game._meta.concrete_fields)
    table = quote(Game._meta.db_table)
    return f"SELECT {columns} FROM {table} WHERE {quote('id')} = %s" + (
        " FOR UPDATE" if lock else ""
    )


@cache
def _converters(vendor: str) -> list[tuple[int, Any, list[Converter]]]:
    """The columns whose values the ORM converts when read from this database (by their
    place in the row), and the conversions; the other columns' values are used as read."""
    table = Game._meta.db_table
    result = []
    for index, field in enumerate(Game._meta.concrete_fields):
        column = field.get_col(table)
        converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if converters:
            result.append((index, column, converters))
    return result


def lock_game(game_id: int) -> Game | None:
    """The game, its row locked until the transaction ends (FOR UPDATE where the database
    has it; SQLite's writers are serialised by the IMMEDIATE transaction instead)."""
    return _load(game_id, lock=bool(connection.features.has_select_for_update))


def read_game(game_id: int) -> Game | None:
    """The game as it is now, nothing locked: a move reads it so, and writes only if the row
    is still as read (`update_game`'s `unless_changed_since`)."""
    return _load(game_id, lock=False)


def _load(game_id: int, *, lock: bool) -> Game | None:
    with connection.cursor() as cursor:
        cursor.execute(_select_sql(connection.vendor, lock), [game_id])
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for index, column, converters in _converters(connection.vendor):
        value = values[index]
        for convert in converters:
            value = convert(value, column, connection)
        values[index] = value
    return Game.from_db(connection.alias, _attnames(), values)


@cache
def _attnames() -> list[str]:
    return [field.attname for field in Game._meta.concrete_fields]


@cache
def _insert_event_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in EVENT_COLUMNS)
    # The payload arrives as JSON text, encoded once for the database and the sockets.
    payload = "CAST(%s AS jsonb)" if vendor == "postgresql" else "%s"
    return (
        f"INSERT INTO {quote(GameEvent._meta.db_table)} ({columns}) "
        f"VALUES (%s, %s, %s, {payload}, %s)"
    )


def insert_event(game_id: int, version: int, ply: int | None, text: str) -> None:
    """Store an event whose payload is the JSON `text` (a move event when `ply` is set)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _insert_event_sql(connection.vendor),
            [game_id, version, ply, text, _created_at_value()],
        )


@cache
def _notice_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in NOTICE_COLUMNS)
    # Both databases read ON CONFLICT DO NOTHING (SQLite since 3.24): a pending notice for
    # the player stays as it is, as get_or_create would leave it, in one statement instead
    # of a read, a savepoint and an insert.
    return (
        f"INSERT INTO {quote(MoveNotice._meta.db_table)} ({columns}) VALUES (%s, %s, %s) "
        "ON CONFLICT DO NOTHING"
    )


def notice_move(game_id: int, player: int) -> None:
    """Queue a "your move" notice for `player` of the game unless one is pending."""
    with connection.cursor() as cursor:
        cursor.execute(_notice_sql(connection.vendor), [game_id, player, _created_at_value()])


@cache
def _fields(names: tuple[str, ...]) -> list[Field[Any, Any]]:
    fields = [Game._meta.get_field(name) for name in names]
    updated_at = Game._meta.get_field("updated_at")
    return [field for field in [*fields, updated_at] if isinstance(field, Field)]


@dataclass(frozen=True, slots=True)
class Seen:
    """What a row looked like when it was read: its version (bumped by every event) and its
    `updated_at` (set by every other write of a game action, a queue or a muted chat)."""

    version: int
    updated_at: Any

    @classmethod
    def of(cls, game: Game) -> Seen:
        return cls(game.version, game.updated_at)


def update_game(
    game: Game, names: Iterable[str], *, unless_changed_since: Seen | None = None
) -> bool:
    """Write the named columns of `game` (and `updated_at`) in one UPDATE. With
    `unless_changed_since`, only if the row is still as it was then: False when another write
    came first (the UPDATE then changed nothing and locked nothing)."""
    names = tuple(names)
    params = _update_params(game, names, unless_changed_since)
    with connection.cursor() as cursor:
        cursor.execute(_update_sql(names, unless_changed_since is not None), params)
        return bool(cursor.rowcount == 1)


@cache
def _update_sql(names: tuple[str, ...], compare: bool) -> str:
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(field.column)} = %s" for field in _fields(names))
    where = f"{quote('id')} = %s"
    if compare:
        where += f" AND {quote('version')} = %s AND {quote('updated_at')} = %s"
    return f"UPDATE {quote(Game._meta.db_table)} SET {sets} WHERE {where}"


def _update_params(game: Game, names: tuple[str, ...], seen: Seen | None) -> list[Any]:
    params = [
        field.get_db_prep_save(field.pre_save(game, False), connection) for field in _fields(names)
    ]
    params.append(game.pk)
    if seen is not None:
        params += [seen.version, _updated_at_value(seen)]
    return params


def _updated_at_value(seen: Seen) -> Any:
    field = Game._meta.get_field("updated_at")
    assert isinstance(field, Field)
    return field.get_db_prep_value(seen.updated_at, connection)


def write_move(
    game: Game,
    names: Iterable[str],
    events: list[tuple[int, int | None, str]],
    notices: Iterable[int] = (),
    *,
    unless_changed_since: Seen | None = None,
) -> bool:
    """Write the named columns of `game` (as `update_game`) and, with them, its new events
    (version, ply or None, JSON text) and a "your move" notice for each player in `notices`
    (as `insert_event` and `notice_move`): all of it, or nothing when the row changed since
    `unless_changed_since` (False)."""
    notices = list(notices)
    if connection.vendor != "postgresql":
        with transaction.atomic(savepoint=False):
            if not update_game(game, names, unless_changed_since=unless_changed_since):
                return False
            for version, ply, text in events:
                insert_event(game.pk, version, ply, text)
            for player in notices:
                notice_move(game.pk, player)
        return True
    names = tuple(names)
    params = _update_params(game, names, unless_changed_since)
    when = _created_at_value()
    for version, ply, text in events:
        params += [version, ply, text, when]
    for player in notices:
        params += [player, when]
    sql = _write_move_sql(names, unless_changed_since is not None, len(events), len(notices))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return bool(row and row[0] == 1)


def _created_at_value() -> Any:
    created_at = GameEvent._meta.get_field("created_at")
    assert isinstance(created_at, Field)
    return created_at.get_db_prep_save(timezone.now(), connection)


@cache
def _write_move_sql(names: tuple[str, ...], compare: bool, events: int, notices: int) -> str:
    """PostgreSQL's one statement for `write_move`: the UPDATE's RETURNING feeds the inserts,
    so they insert nothing when it matched no row. Every sub-statement of a WITH runs once,
    whether or not the final SELECT reads it."""
    quote = connection.ops.quote_name
    parts = [f"moved AS ({_update_sql(names, compare)} RETURNING {quote('id')})"]
    if events:
        # The VALUES' types are given: a parameter alone in VALUES would be read as text.
        rows = ", ".join(
            "(CAST(%s AS integer), CAST(%s AS integer), CAST(%s AS jsonb), "
            "CAST(%s AS timestamp with time zone))"
            for _ in range(events)
        )
        columns = ", ".join(quote(c) for c in EVENT_COLUMNS)
        parts.append(
            f"stored AS (INSERT INTO {quote(GameEvent._meta.db_table)} ({columns}) "
            f"SELECT moved.{quote('id')}, v.version, v.ply, v.payload, v.created_at "
            f"FROM moved, (VALUES {rows}) AS v (version, ply, payload, created_at))"
        )
    if notices:
        rows = ", ".join(
            "(CAST(%s AS smallint), CAST(%s AS timestamp with time zone))" for _ in range(notices)
        )
        columns = ", ".join(quote(c) for c in NOTICE_COLUMNS)
        parts.append(
            f"noticed AS (INSERT INTO {quote(MoveNotice._meta.db_table)} ({columns}) "
            f"SELECT moved.{quote('id')}, v.player, v.created_at "
            f"FROM moved, (VALUES {rows}) AS v (player, created_at) ON CONFLICT DO NOTHING)"
        )
    return "WITH " + ", ".join(parts) + " SELECT count(*) FROM moved"
