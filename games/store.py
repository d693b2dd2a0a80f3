"""The statements of the move path, written directly.

A move is three statements: read the game row, then in one transaction update its changed
columns if the row is still as read, and insert the move event (which is also the move's
record). Through the ORM these three cost more CPU than everything else a move does
(compiling the query, building model instances, saving every column); here each statement's
text is built once per process and the values go through the same field conversions the ORM
applies, so rows read and written here are exactly what the ORM reads and writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field
from django.utils import timezone

from games.models import Game, GameEvent

Converter = Callable[[Any, Any, Any], Any]


@cache
def _select_sql(vendor: str, lock: bool) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in Game._meta.concrete_fields)
    table = quote(Game._meta.db_table)
    return f"SELECT {columns} FROM {table} WHERE {quote('id')} = %s" + (
        " FOR UPDATE" if lock else ""
    )


@cache
def _converters(vendor: str) -> list[tuple[Any, list[Converter]]]:
    """Per column, the conversions the ORM applies to a value read from this database."""
    table = Game._meta.db_table
    result = []
    for field in Game._meta.concrete_fields:
        column = field.get_col(table)
        result.append(
            (column, connection.ops.get_db_converters(column) + field.get_db_converters(connection))
        )
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
    values = []
    for value, (column, converters) in zip(row, _converters(connection.vendor), strict=True):
        for convert in converters:
            value = convert(value, column, connection)
        values.append(value)
    return Game.from_db(connection.alias, _attnames(), values)


@cache
def _attnames() -> list[str]:
    return [field.attname for field in Game._meta.concrete_fields]


@cache
def _insert_event_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in ("game_id", "version", "ply", "payload", "created_at"))
    # The payload arrives as JSON text, encoded once for the database and the sockets.
    payload = "CAST(%s AS jsonb)" if vendor == "postgresql" else "%s"
    return (
        f"INSERT INTO {quote(GameEvent._meta.db_table)} ({columns}) "
        f"VALUES (%s, %s, %s, {payload}, %s)"
    )


def insert_event(game_id: int, version: int, ply: int | None, text: str) -> None:
    """Store an event whose payload is the JSON `text` (a move event when `ply` is set)."""
    created_at = GameEvent._meta.get_field("created_at")
    assert isinstance(created_at, Field)
    when = created_at.get_db_prep_save(timezone.now(), connection)
    with connection.cursor() as cursor:
        cursor.execute(_insert_event_sql(connection.vendor), [game_id, version, ply, text, when])


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
    fields = _fields(tuple(names))
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    params = [field.get_db_prep_save(field.pre_save(game, False), connection) for field in fields]
    where = f"{quote('id')} = %s"
    params.append(game.pk)
    if unless_changed_since is not None:
        where += f" AND {quote('version')} = %s AND {quote('updated_at')} = %s"
        params += [unless_changed_since.version, _updated_at_value(unless_changed_since)]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {quote(Game._meta.db_table)} SET {sets} WHERE {where}", params)
        return bool(cursor.rowcount == 1)


def _updated_at_value(seen: Seen) -> Any:
    field = Game._meta.get_field("updated_at")
    assert isinstance(field, Field)
    return field.get_db_prep_value(seen.updated_at, connection)
