"""The game database's search: finished games by player, opponent, game and option set, rated
or not, speed, result, termination, date range and length, newest first, a page at a time.

Pages are keyset pages on (ended_at, game id), so that a game that ends meanwhile never moves
a page's games to the next one, and no query skips rows with OFFSET. Each query reads the
narrow rows of games.models.PlayedGame through one index chosen by the filters that narrow the
range (player, opponent, game and options, the dates); the other filters (rated, speed,
result, termination, length) are checked on at most SCAN rows of that range. When those rows
hold fewer games than the page asks for, the page says where it stopped (`next`), and the next
query goes on from there: a search that matches nothing in a million games answers in
bounded time, a page at a time, instead of reading the whole table once.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.utils.translation import gettext as _

from games.models import Game, PlayedGame

# Rows of the range a query may look through for one page (docs/PERFORMANCE.md: the game
# database's figures). Measured on a million games: a page's p99 stays within the issue's
# 100 ms with this many.
SCAN = 4000
MAX_LIMIT = 100
SPEEDS = ("realtime", "correspondence", "untimed")


class BadSearch(ValueError):
    """A search the API refuses, with the reason (the view answers `bad_message`)."""


@dataclass(frozen=True)
class Query:
    """What a search asks for. Without `player`, `result` is the first player's."""

    player: int | None = None
    opponent: int | None = None
    slug: str | None = None
    options: str | None = None
    rated: bool | None = None
    speed: str | None = None
    result: str | None = None
    termination: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    min_plies: int | None = None
    max_plies: int | None = None

    def check(self) -> None:
        if self.opponent is not None and self.player is None:
            raise BadSearch(_("opponent needs player"))
        if self.options is not None and self.slug is None:
            raise BadSearch(_("options needs game"))
        if self.speed is not None and self.speed not in SPEEDS:
            raise BadSearch(_("speed must be one of %(values)s") % {"values": ", ".join(SPEEDS)})
        if self.result is not None and self.result not in PlayedGame.Result.values:
            raise BadSearch(
                _("result must be one of %(values)s")
                % {"values": ", ".join(PlayedGame.Result.values)}
            )
        terminations = [t for t in Game.Termination.values if t != Game.Termination.ABORT]
        if self.termination is not None and self.termination not in terminations:
            raise BadSearch(
                _("termination must be one of %(values)s") % {"values": ", ".join(terminations)}
            )


@dataclass(frozen=True)
class Found:
    """One game of a page, as its row in the database says it (from `player`'s seat, or
    the first player's)."""

    game_id: int
    seat: int
    result: str
    termination: str
    ended_at: datetime
    plies: int
    rated: bool
    speed: str


@dataclass(frozen=True)
class Page:
    games: list[Found]
    # Where the next page starts (None: this was the last). A page can hold fewer games than
    # asked, even none, and still have a next: the search stopped after SCAN rows.
    next: str | None


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def encode_cursor(ended_at: datetime, game_id: int) -> str:
    """Opaque to clients: where a page ended (to the microsecond, and the game)."""
    return f"{(ended_at - EPOCH) // timedelta(microseconds=1)}-{game_id}"


def decode_cursor(text: str) -> tuple[datetime, int]:
    try:
        micros, game_id = (int(part) for part in text.split("-", 1))
        return EPOCH + timedelta(microseconds=micros), game_id
    except (ValueError, OverflowError, OSError):
        raise BadSearch(_("cursor is not one this search gave")) from None


def _range(query: Query, cursor: tuple[datetime, int] | None) -> tuple[list[str], list[Any]]:
    """The conditions that pick one index's range (equalities, then the dates and the cursor
    on its last columns)."""
    where: list[str] = []
    params: list[Any] = []
    if query.player is not None:
        where.append("user_id = %s")
        params.append(query.player)
        if query.opponent is not None:
            where.append("opponent_id = %s")
            params.append(query.opponent)
        elif query.slug is not None:
            where.append("slug = %s")
            params.append(query.slug)
    else:
        where.append("seat = 1")
        if query.slug is not None:
            where.append("slug = %s")
            params.append(query.slug)
    when = connection.ops.adapt_datetimefield_value
    if query.since is not None:
        where.append("ended_at >= %s")
        params.append(when(query.since))
    if query.until is not None:
        where.append("ended_at < %s")
        params.append(when(query.until))
    if cursor is not None:
        # (ended_at, game_id) < cursor, spelled out so that every database starts the index's
        # range at the cursor's time (the first condition) and checks the rest on the few
        # rows of that same instant.
        where.append("ended_at <= %s AND (ended_at < %s OR game_id < %s)")
        params += [when(cursor[0]), when(cursor[0]), cursor[1]]
    return where, params


def _filters(query: Query) -> tuple[list[str], list[Any]]:
    """The conditions checked on the range's rows (not part of the index used)."""
    where: list[str] = []
    params: list[Any] = []
    if query.player is not None and query.opponent is not None and query.slug is not None:
        where.append("slug = %s")
        params.append(query.slug)
    if query.options is not None:
        where.append("options = %s")
        params.append(query.options)
    for column in ("rated", "speed", "result", "termination"):
        value = getattr(query, column)
        if value is not None:
            where.append(f"{column} = %s")
            params.append(value)
    if query.min_plies is not None:
        where.append("plies >= %s")
        params.append(query.min_plies)
    if query.max_plies is not None:
        where.append("plies <= %s")
        params.append(query.max_plies)
    return where, params


COLUMNS = [field.name for field in fields(Found)]
ORDER = "ORDER BY ended_at DESC, game_id DESC"


def search(query: Query, cursor: str | None = None, limit: int = 50) -> Page:
    """One page of the games `query` matches, newest first, from `cursor` on."""
    query.check()
    if not 1 <= limit <= MAX_LIMIT:
        raise BadSearch(_("limit must be 1 to %(most)s") % {"most": MAX_LIMIT})
    after = decode_cursor(cursor) if cursor else None
    table = connection.ops.quote_name(PlayedGame._meta.db_table)
    ranged, range_params = _range(query, after)
    checked, check_params = _filters(query)
    columns = ", ".join(COLUMNS)
    source = f"SELECT {columns} FROM {table} WHERE {' AND '.join(ranged)} {ORDER}"
    exhausted_at: tuple[Any, Any] | None = None
    with connection.cursor() as db:
        if not checked:
            db.execute(f"{source} LIMIT %s", [*range_params, limit + 1])
            rows = db.fetchall()
        else:
            every = f"SELECT * FROM {table} WHERE {' AND '.join(ranged)} {ORDER}"
            db.execute(
                f"SELECT {columns} FROM ({every} LIMIT %s) AS scanned "
                f"WHERE {' AND '.join(checked)} {ORDER} LIMIT %s",
                [*range_params, SCAN, *check_params, limit + 1],
            )
            rows = db.fetchall()
            if len(rows) <= limit:
                # Fewer than asked: the range ran out, or the scan stopped at its SCAN-th row
                # (then the next page starts after that row).
                db.execute(
                    f"SELECT ended_at, game_id, COUNT(*) OVER () FROM ({source} LIMIT %s) AS "
                    "scanned ORDER BY ended_at, game_id LIMIT 1",
                    [*range_params, SCAN],
                )
                edge = db.fetchone()
                if edge is not None and edge[2] >= SCAN:
                    exhausted_at = (edge[0], edge[1])
    found = [_found(row) for row in rows[:limit]]
    if len(rows) > limit:
        last = found[-1]
        return Page(found, encode_cursor(last.ended_at, last.game_id))
    if exhausted_at is not None:
        ended_at, game_id = exhausted_at
        return Page(found, encode_cursor(_aware(ended_at), int(game_id)))
    return Page(found, None)


def _found(row: tuple[Any, ...]) -> Found:
    values = dict(zip(COLUMNS, row, strict=True))
    values["ended_at"] = _aware(values["ended_at"])
    values["rated"] = bool(values["rated"])
    return Found(**values)


def _aware(value: Any) -> datetime:
    """The database's timestamp as an aware datetime (SQLite's raw cursor gives text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# The parameters of GET /api/games?status=finished and of the /games/ page (docs/API.md).
PARAMETERS = (
    "player",
    "opponent",
    "game",
    "options",
    "rated",
    "speed",
    "result",
    "termination",
    "since",
    "until",
    "min_plies",
    "max_plies",
)


def query_from(params: Any) -> Query:
    """A Query from a request's parameters (names, not ids); BadSearch says what is wrong.
    An empty parameter is no filter (a form's empty field)."""
    from django.db.models.functions import Lower

    from accounts.models import User

    given = {name: params.get(name, "").strip() for name in PARAMETERS}
    given = {name: value for name, value in given.items() if value}
    unknown = sorted(set(params) - {*PARAMETERS, "status", "cursor", "limit", "format"})
    if unknown:
        raise BadSearch(_("unknown parameter %(name)s") % {"name": unknown[0]})
    users: dict[str, int | None] = {}
    for name in ("player", "opponent"):
        if name in given:
            # lower() = lower(): the unique index on lower(username) answers it (iexact's
            # upper() would read every account).
            found = (
                User.objects.annotate(lowered=Lower("username"))
                .filter(lowered=given[name].lower())
                .values_list("pk", flat=True)
            )
            users[name] = next(iter(found), None)
            if users[name] is None:
                raise BadSearch(_("there is no player %(name)s") % {"name": given[name]})
    return Query(
        player=users.get("player"),
        opponent=users.get("opponent"),
        slug=given.get("game"),
        options=_options(given["options"]) if "options" in given else None,
        rated=_flag(given["rated"]) if "rated" in given else None,
        speed=given.get("speed"),
        result=given.get("result"),
        termination=given.get("termination"),
        since=_day(given["since"], "since") if "since" in given else None,
        until=_day(given["until"], "until", end=True) if "until" in given else None,
        min_plies=_count(given["min_plies"], "min_plies") if "min_plies" in given else None,
        max_plies=_count(given["max_plies"], "max_plies") if "max_plies" in given else None,
    )


def _options(text: str) -> str:
    """ "seeds=5, pits=6" as the database keeps it: "pits=6,seeds=5"."""
    pairs = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.count("=") == 1 for part in pairs):
        raise BadSearch(_("options are name=value pairs, separated by commas"))
    return ",".join(sorted(part.replace(" ", "") for part in pairs))


def _flag(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise BadSearch(_("rated must be true or false"))


def _day(text: str, name: str, end: bool = False) -> datetime:
    """A date (YYYY-MM-DD, the whole day, UTC) or an ISO 8601 instant."""
    try:
        if len(text) == 10:
            day = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return day + timedelta(days=1) if end else day
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadSearch(
            _("%(name)s must be a date (YYYY-MM-DD) or an ISO 8601 time") % {"name": name}
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _count(text: str, name: str) -> int:
    if not text.isdigit() or len(text) > 6:
        raise BadSearch(_("%(name)s must be a whole number") % {"name": name})
    return int(text)
