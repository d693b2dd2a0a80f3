"""The restore drill: a populated database dumped, restored into a new one, and checked.

    report = drill(games=56)       # python -m devtools restoredrill (docs/BACKUPS.md)

1. A new database `backup_drill_<hex>` is migrated (or a given migrated one is used) and
   populated through the product's services, as players would fill it: finished and running
   games of every game kind, won by the rules, resigned, flagged on time, drawn by agreement,
   aborted, with takebacks and pending offers; rated games move ratings through the real end
   of a game (games.lifecycle -> ratings.services.rate_game).
2. `pg_dump -Fc` dumps it; `pg_restore` restores the dump into a new empty database.
3. The restored copy is checked against the source table by table (row count and a digest of
   every row, sequences' values), and on its own: every game's moves are played again through
   its rules engine and compared with its row (games.replay), every rating and rating change
   is computed again from the rated games in the order they ended (ratings.services).

Everything runs in this process: `on_database` points Django's default connection at a
scratch database for a while. Scratch databases are dropped at the end.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connection, connections

from accounts.models import User
from games import selectors, services
from games.engine import client_moves, pick_client_move, rules_for
from games.models import Game
from games.replay import Replayed, replay_all
from games.rules import game_info
from ratings import services as ratings

SLUGS = ("diffusion", "four-rank-diffusion", "diffusion-chess", "zigzag")
# How each game goes; with N games, game i is SLUGS[i % 4] ending ENDINGS[(i // 4) % 7], so
# 8 games give every kind a finished and a running game, 28 every kind every ending.
ENDINGS = ("rules", "running", "resign", "time", "draw", "takeback", "abort")
TIME_CONTROLS = ("5+3", "3d", "")
# A game "played to the end by the rules" that has not ended after this many moves is resigned.
LONGEST = 1500


# --- the PostgreSQL server and its scratch databases ---------------------------------------


def _server() -> dict[str, Any]:
    database = connections[DEFAULT_DB_ALIAS].settings_dict
    if not database["ENGINE"].endswith("postgresql"):
        raise RuntimeError("the restore drill needs PostgreSQL: set DATABASE_URL")
    return {
        "host": database["HOST"] or "127.0.0.1",
        "port": int(database["PORT"] or 5432),
        "user": database["USER"] or "postgres",
        "password": database["PASSWORD"] or "",
    }


def _admin() -> psycopg.Connection[Any]:
    server = _server()
    return psycopg.connect(
        host=server["host"],
        port=server["port"],
        user=server["user"],
        password=server["password"] or None,
        dbname="postgres",
        autocommit=True,
    )


def create_database(name: str) -> None:
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    with _admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def new_name(kind: str) -> str:
    return f"backup_{kind}_{uuid.uuid4().hex[:10]}"


@contextmanager
def on_database(name: str) -> Iterator[None]:
    """Django's default connection (in this thread) on database `name` of the same server,
    without a pool, until the block ends: services, the ORM and migrations all use it."""
    original = connections[DEFAULT_DB_ALIAS]
    settings = {**original.settings_dict, "NAME": name, "CONN_MAX_AGE": 0}
    settings["OPTIONS"] = {k: v for k, v in settings.get("OPTIONS", {}).items() if k != "pool"}
    wrapper = original.__class__(settings, alias=DEFAULT_DB_ALIAS)
    connections[DEFAULT_DB_ALIAS] = wrapper
    try:
        yield
    finally:
        wrapper.close()
        connections[DEFAULT_DB_ALIAS] = original


def pg_binary(name: str) -> str:
    """pg_dump or pg_restore of the server's major version when installed (Debian keeps
    one per version under /usr/lib/postgresql), else the one on PATH."""
    with _admin() as admin:
        row = admin.execute("SHOW server_version_num").fetchone()
    major = int(row[0]) // 10000 if row else 0
    own = Path(f"/usr/lib/postgresql/{major}/bin/{name}")
    if own.exists():
        return str(own)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed (apt-get install postgresql-client)")
    return found


def _run(command: list[str]) -> float:
    server = _server()
    env = {**os.environ, "PGPASSWORD": server["password"]} if server["password"] else None
    started = time.monotonic()
    subprocess.run(command, check=True, env=env, capture_output=True, text=True)
    return time.monotonic() - started


def _address(name: str) -> list[str]:
    server = _server()
    return ["-h", server["host"], "-p", str(server["port"]), "-U", server["user"], "-d", name]


def dump(name: str, path: Path) -> float:
    """`pg_dump -Fc` of database `name` into `path`; the seconds it took."""
    return _run([pg_binary("pg_dump"), "-Fc", "--no-password", *_address(name), "-f", str(path)])


def restore(path: Path, name: str) -> float:
    """`pg_restore` of the dump at `path` into the existing empty database `name`."""
    return _run(
        [
            pg_binary("pg_restore"),
            "--no-owner",
            "--exit-on-error",
            "--no-password",
            *_address(name),
            str(path),
        ]
    )


# --- populating through the services ------------------------------------------------------


@dataclass
class Populated:
    users: int = 0
    games: int = 0
    moves: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def populate(games: int, seed: int = 1) -> Populated:
    """Players and `games` games on the current database, through the services only (see the
    module's docstring); what was made."""
    started = time.monotonic()
    rng = random.Random(seed)
    run = uuid.uuid4().hex[:6]
    players = [User.objects.create_user(f"drill{run}p{n}", password=None) for n in range(6)]
    guest = User.objects.create_user(f"drill{run}guest", password=None, is_guest=True)
    made = Populated(users=len(players) + 1)
    for index in range(games):
        slug = SLUGS[index % len(SLUGS)]
        ending = ENDINGS[(index // len(SLUGS)) % len(ENDINGS)]
        first, second = rng.sample(players, 2)
        if index % 5 == 4:
            first, second = (guest, first) if rng.random() < 0.5 else (first, guest)
        control = TIME_CONTROLS[index % len(TIME_CONTROLS)]
        if ending == "time" and not control:
            control = "5+3"
        game = services.create_game(
            slug=slug,
            options={},
            player1=first,
            player2=second,
            time_control=control,
            rated=guest not in (first, second) and index % 3 != 2,
        )
        users = {first.pk: first, second.pk: second}
        game, moves = _go(game, ending, users, rng)
        made.games += 1
        made.moves += moves
        made.endings[ending] = made.endings.get(ending, 0) + 1
    made.seconds = time.monotonic() - started
    return made


def _go(game: Game, ending: str, users: dict[int, User], rng: random.Random) -> tuple[Game, int]:
    """Play `game` the way `ending` says; the game as it ends up and the moves played."""
    rules = rules_for(game.slug, game.options)
    player = {1: users[game.player1_id], 2: users[game.player2_id]}
    played = 0

    def play(moves: int, until: Callable[[Game], bool] = lambda game: False) -> None:
        nonlocal game, played
        for _ in range(moves):
            if game.status != Game.Status.ACTIVE or until(game):
                return
            state = rules.from_json(game.state)
            move = pick_client_move(client_moves(rules, state), rng)
            mover = player[rules.to_move(state)]
            game = services.play_move(game_id=game.pk, user=mover, move=move, ply=game.ply).game
            played += 1

    def to_move() -> User:
        return player[rules.to_move(rules.from_json(game.state))]

    if ending == "abort":
        play(rng.randint(0, 1))
        game = services.abort(game_id=game.pk, user=player[1]).game
        return game, played
    play(LONGEST, until=lambda game: game.both_moved)  # both players have moved
    if ending == "rules":
        play(LONGEST)
    else:
        play(rng.randint(1, 30))
    if game.status != Game.Status.ACTIVE:
        return game, played
    if ending in ("rules", "resign"):
        game = services.resign(game_id=game.pk, user=to_move()).game
    elif ending == "time":
        _run_out_of_time(game)
        game = services.check_clock(game_id=game.pk).game
    elif ending == "draw" and game_info(game.slug).draws:
        asker = to_move()
        services.offer_draw(game_id=game.pk, user=asker)
        other = player[1] if asker == player[2] else player[2]
        game = services.answer_draw(game_id=game.pk, user=other, accept=True).game
    elif ending == "draw":  # a game without draws: an offer cannot be made; resign instead
        game = services.resign(game_id=game.pk, user=to_move()).game
    elif ending == "takeback":
        last = selectors.move_events(game).order_by("-ply").values_list("payload", flat=True)
        asker = last[0]["player"]
        services.offer_takeback(game_id=game.pk, user=player[asker])
        game = services.answer_takeback(game_id=game.pk, user=player[3 - asker], accept=True).game
        play(rng.randint(0, 3))
        if game.status == Game.Status.ACTIVE and game_info(game.slug).draws:
            game = services.offer_draw(game_id=game.pk, user=to_move()).game  # left pending
    return game, played


def _run_out_of_time(game: Game) -> None:
    """Wind the running player's clock back past their remaining time, as if they had been
    thinking that long: the sweeper's check then ends the game on time."""
    clock = dict(game.clock or {})
    running = clock["running"]
    clock["since"] -= clock["remaining"][running - 1] + 1000
    Game.objects.filter(pk=game.pk).update(clock=clock)


# --- comparing the restored copy ----------------------------------------------------------


def table_digests() -> dict[str, tuple[int, str]]:
    """Per table of the current database: its rows and an order-free digest of their text;
    per sequence (named "sequence <name>"): its last value."""
    found: dict[str, tuple[int, str]] = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names()):
            cursor.execute(
                "SELECT count(*), md5(coalesce(string_agg(md5(t::text), '' "
                f"ORDER BY md5(t::text)), '')) FROM {quote(table)} t"
            )
            count, digest = cursor.fetchone()
            found[table] = (count, digest)
        cursor.execute(
            "SELECT sequencename, coalesce(last_value, 0) FROM pg_sequences "
            "WHERE schemaname = current_schema()"
        )
        for name, value in cursor.fetchall():
            found[f"sequence {name}"] = (value, "")
    return found


def table_differences(
    source: dict[str, tuple[int, str]], restored: dict[str, tuple[int, str]]
) -> list[str]:
    found = []
    for name in sorted(set(source) | set(restored)):
        mine, theirs = source.get(name), restored.get(name)
        if mine is None or theirs is None:
            found.append(f"{name}: {'missing from the copy' if theirs is None else 'new'}")
        elif mine[0] != theirs[0]:
            found.append(f"{name}: {mine[0]} rows in the source, {theirs[0]} in the copy")
        elif mine[1] != theirs[1]:
            found.append(f"{name}: same {mine[0]} rows, different contents")
    return found


@dataclass
class Verified:
    """The checks of one database on its own: games replayed, ratings recomputed."""

    replayed: Replayed
    rated_games: int
    ratings: int
    rating_changes: int
    rating_differences: list[str]

    @property
    def differences(self) -> list[str]:
        return self.replayed.differences + self.rating_differences


def verify() -> Verified:
    """Replay every game of the current database and recompute every rating from its games."""
    replayed = replay_all()
    fresh = ratings.recompute()
    return Verified(
        replayed=replayed,
        rated_games=len(fresh.changes) // 2,
        ratings=len(fresh.ratings),
        rating_changes=len(fresh.changes),
        rating_differences=ratings.differences(fresh),
    )


@dataclass
class Drill:
    source: str
    restored: str
    populated: Populated
    migrate_seconds: float
    dump_bytes: int
    dump_seconds: float
    restore_seconds: float
    verify_seconds: float
    tables: int
    rows: int
    table_differences: list[str]
    verified: Verified

    @property
    def differences(self) -> list[str]:
        return self.table_differences + self.verified.differences


def drill(
    games: int = 56, *, seed: int = 1, source: str | None = None, keep: bool = False
) -> Drill:
    """The whole drill (the module's docstring). `source`: a migrated empty database to
    populate (else a new one is made and migrated). With `keep`, the restored copy is left
    for the caller to drop (drop_database); the source is dropped only if made here."""
    made = source is None
    source = source or new_name("drill")
    restored = new_name("restored")
    migrate_seconds = 0.0
    try:
        if made:
            create_database(source)
            started = time.monotonic()
            with on_database(source):
                call_command("migrate", verbosity=0, interactive=False)
            migrate_seconds = time.monotonic() - started
        with on_database(source):
            populated = populate(games, seed)
            before = table_digests()
        with tempfile.TemporaryDirectory(prefix="backup-drill-") as directory:
            path = Path(directory) / f"{source}.dump"
            dump_seconds = dump(source, path)
            dump_bytes = path.stat().st_size
            create_database(restored)
            restore_seconds = restore(path, restored)
        with on_database(restored):
            after = table_digests()
            started = time.monotonic()
            verified = verify()
            verify_seconds = time.monotonic() - started
    except BaseException:
        drop_database(restored)
        raise
    finally:
        if made:
            drop_database(source)
    if not keep:
        drop_database(restored)
    tables = {name: value for name, value in after.items() if not name.startswith("sequence ")}
    return Drill(
        source=source,
        restored=restored,
        populated=populated,
        migrate_seconds=migrate_seconds,
        dump_bytes=dump_bytes,
        dump_seconds=dump_seconds,
        restore_seconds=restore_seconds,
        verify_seconds=verify_seconds,
        tables=len(tables),
        rows=sum(count for count, _ in tables.values()),
        table_differences=table_differences(before, after),
        verified=verified,
    )


def report(result: Drill) -> list[str]:
    """The drill's figures, as `python -m devtools restoredrill` prints them."""
    populated, verified, replayed = result.populated, result.verified, result.verified.replayed
    endings = ", ".join(f"{name} {count}" for name, count in populated.endings.items())
    kinds = ", ".join(
        f"{slug} {replayed.games[slug]} ({replayed.games[slug] - replayed.running[slug]} "
        f"ended, {replayed.running[slug]} running; {replayed.moves[slug]} moves)"
        for slug in SLUGS
    )
    lines = [
        f"source {result.source}: migrated in {result.migrate_seconds:.1f} s; "
        f"{populated.games} games by {populated.users} players through the services in "
        f"{populated.seconds:.1f} s, {populated.moves} moves ({endings})",
        f"dump: pg_dump -Fc, {result.dump_bytes / 1024:.0f} KiB in {result.dump_seconds:.2f} s",
        f"restore: pg_restore into {result.restored} in {result.restore_seconds:.2f} s",
        f"tables: {result.tables} compared with the source (rows, contents, sequences), "
        f"{result.rows} rows: {len(result.table_differences)} differences",
        f"games replayed through the rules engines: {kinds}",
        f"  {replayed.total_games} games, {replayed.total_moves} moves replayed: "
        f"{len(replayed.differences)} differences",
        f"ratings recomputed from {verified.rated_games} rated games in the order they ended: "
        f"{verified.ratings} ratings, {verified.rating_changes} rating changes: "
        f"{len(verified.rating_differences)} differences",
        f"checks of the restored copy took {result.verify_seconds:.2f} s",
        *(f"DIFFERENCE {line}" for line in result.differences),
        f"differences: {len(result.differences)}",
    ]
    return lines
