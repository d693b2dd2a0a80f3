"""Migrations forward on a populated database, and the statements that lock a table for long.

    steps = forward(games=2000)       # python -m devtools migrationdrill (docs/BACKUPS.md)
    found = lock_heavy()              # tests/test_migrations_forward.py holds the allow-list

`forward` makes a database `backup_migrate_<hex>`, migrates it only to START (games as they
were when a move still had its own row: the Move table, events without `ply`), fills it with
games whose moves the rules engines played (through the models of that time, the only way to
write rows of an old schema), then applies every later migration one at a time while a probe
does what a move does (update the game's row, insert an event, in one transaction that it
rolls back) every few milliseconds: for each migration, how long it ran and the longest the
probe waited. Last, every game is replayed through its rules engine on the migrated schema
(games.replay): the data migrations must have kept every move.

`lock_heavy` reads the SQL of every migration of the product (`manage.py sqlmigrate`) and
lists the statements that lock a table that already existed for as long as the table is big:
an index built without CONCURRENTLY, a constraint added without NOT VALID (checked against
every row under the lock), a column's type changed or set NOT NULL, a column added with a
volatile default (a rewrite) or a CHECK (a scan), and data migrations (every row they write
stays locked until the migration commits; after a DDL statement of the same migration, the
whole table does).
"""

from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import OperationalError, connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import RunPython, RunSQL

from devtools.backups import SLUGS, _server, create_database, drop_database, new_name, on_database
from games.engine import client_moves, pick_client_move, rules_for
from games.replay import Replayed, replay_all

PRODUCT_APPS = ("accounts", "games", "ratings", "bots", "lobby", "follows", "pbm")
# The oldest state populated: the games app before the move's record became its event.
START = [("accounts", "0001_initial"), ("games", "0002_both_moved")]


# --- statements that lock a table for long ------------------------------------------------


@dataclass(frozen=True)
class Heavy:
    app: str
    migration: str
    table: str
    kind: str
    statement: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.app, self.migration, self.table, self.kind)


_CREATED = re.compile(r'CREATE TABLE "(\w+)"')
_INDEX = re.compile(r'CREATE (?:UNIQUE )?INDEX (?!CONCURRENTLY)"?\w+"? ON "(\w+)"')
_ALTER = re.compile(r'ALTER TABLE "(\w+)" (.*)', re.S)
_KINDS = (
    ("unique constraint", re.compile(r"ADD CONSTRAINT \S+ UNIQUE")),
    (
        "constraint checked now",
        re.compile(r"ADD CONSTRAINT \S+ (CHECK|FOREIGN KEY)(?!.*NOT VALID)"),
    ),
    ("column type", re.compile(r"ALTER COLUMN \S+ TYPE")),
    ("set not null", re.compile(r"ALTER COLUMN \S+ SET NOT NULL")),
    ("column with a volatile default", re.compile(r"ADD COLUMN .* DEFAULT [^;]*\(")),
    ("column with a check", re.compile(r"ADD COLUMN [^;]* CHECK ")),
)


def lock_heavy(apps: tuple[str, ...] = PRODUCT_APPS) -> list[Heavy]:
    """The lock-heavy statements of every migration of `apps` (the module's docstring), on
    tables the migration did not create."""
    loader = MigrationLoader(connection, replace_migrations=False)
    found = []
    for key in sorted(node for node in loader.graph.nodes if node[0] in apps):
        migration = loader.graph.nodes[key]
        statements = loader.collect_sql([(migration, False)])
        created = {m.group(1) for s in statements if (m := _CREATED.match(s))}
        for statement in statements:
            table, kind = _classify(statement)
            if table is not None and table not in created:
                found.append(Heavy(key[0], key[1], table, kind, statement))
        for operation in migration.operations:
            if isinstance(operation, RunPython | RunSQL):
                found.append(
                    Heavy(key[0], key[1], "(rows)", "data migration", operation.describe())
                )
    return found


def _classify(statement: str) -> tuple[str | None, str]:
    index = _INDEX.match(statement)
    if index:
        return index.group(1), "index built without CONCURRENTLY"
    alter = _ALTER.match(statement)
    if alter:
        for kind, pattern in _KINDS:
            if pattern.search(alter.group(2)):
                return alter.group(1), kind
    return None, ""


# --- forward on a populated database ------------------------------------------------------


@dataclass
class Step:
    migration: str
    seconds: float
    longest_wait: float
    # Deadlocks between the migration and the probe's write: the migration's tries that
    # PostgreSQL rolled back, and the probe's writes it rolled back.
    migration_deadlocks: int = 0
    write_deadlocks: int = 0


@dataclass
class Forward:
    database: str
    games: int
    moves: int
    events: int
    populate_seconds: float
    steps: list[Step]
    replayed: Replayed
    rows_before: dict[str, int] = field(default_factory=dict)
    rows_after: dict[str, int] = field(default_factory=dict)


def forward(games: int = 40, *, seed: int = 1, probe_writes: bool = True) -> Forward:
    """The forward drill (the module's docstring); its database is dropped at the end.
    Without `probe_writes`, the migrations run with nothing beside them."""
    name = new_name("migrate")
    create_database(name)
    try:
        with on_database(name):
            executor = MigrationExecutor(connection)
            executor.migrate(START)
            apps = executor.loader.project_state(START).apps
            started = time.monotonic()
            moves, events = _populate(apps, games, random.Random(seed))
            populate_seconds = time.monotonic() - started
            before = _rows()
            probe = _Probe(name)
            if probe_writes:
                probe.start()
            try:
                steps = _step_forward(probe)
            finally:
                if probe_writes:
                    probe.stop()
            replayed = replay_all()
            after = _rows()
    finally:
        drop_database(name)
    return Forward(
        database=name,
        games=games,
        moves=moves,
        events=events,
        populate_seconds=populate_seconds,
        steps=steps,
        replayed=replayed,
        rows_before=before,
        rows_after=after,
    )


def _populate(apps: Any, games: int, rng: random.Random) -> tuple[int, int]:
    """`games` games as the models of START stored them: the game row, a Move row per move,
    and its events (a move event per move, an end event when it ended); played to the end by
    the rules, resigned, or still running. The moves and events written."""
    User = apps.get_model("accounts", "User")
    Game = apps.get_model("games", "Game")
    Move = apps.get_model("games", "Move")
    GameEvent = apps.get_model("games", "GameEvent")
    players = User.objects.bulk_create(
        [User(username=f"forward{n}", password="!") for n in range(8)]
    )
    total_moves = total_events = 0
    for first in range(0, games, 100):
        rows, records = [], []
        for index in range(first, min(games, first + 100)):
            slug = SLUGS[index % len(SLUGS)]
            how = ("rules", "resign", "running")[(index // len(SLUGS)) % 3]
            one, two = rng.sample(players, 2)
            row, record = _played_game(Game, slug, how, one, two, rng)
            rows.append(row)
            records.append(record)
        Game.objects.bulk_create(rows)
        moves, events = [], []
        for row, (played, end) in zip(rows, records, strict=True):
            for ply, (player, notation, state) in enumerate(played):
                moves.append(Move(game=row, ply=ply, player=player, notation=notation, state=state))
                events.append(
                    GameEvent(
                        game=row,
                        version=ply + 1,
                        payload={
                            "type": "move",
                            "v": ply + 1,
                            "game_id": row.pk,
                            "ply": ply + 1,
                            "player": player,
                            "move": notation,
                            "state": state,
                        },
                    )
                )
            if end is not None:
                version = len(played) + 1
                events.append(
                    GameEvent(
                        game=row,
                        version=version,
                        payload={"type": "end", "v": version, "game_id": row.pk, **end},
                    )
                )
        Move.objects.bulk_create(moves, batch_size=2000)
        GameEvent.objects.bulk_create(events, batch_size=2000)
        total_moves += len(moves)
        total_events += len(events)
    return total_moves, total_events


def _played_game(
    Game: Any, slug: str, how: str, one: Any, two: Any, rng: random.Random
) -> tuple[Any, tuple[list[tuple[int, str, dict[str, Any]]], dict[str, Any] | None]]:
    rules = rules_for(slug, {})
    state = rules.initial_state()
    played: list[tuple[int, str, dict[str, Any]]] = []
    limit = 1500 if how == "rules" else rng.randint(2, 60)
    while rules.outcome(state) is None and len(played) < limit:
        player = rules.to_move(state)
        move = pick_client_move(client_moves(rules, state), rng)
        notation = rules.canonical_move(state, move)
        state = rules.play(state, move)
        played.append((player, notation, rules.to_json(state)))
    outcome = rules.outcome(state)
    end: dict[str, Any] | None = None
    values: dict[str, Any] = {"status": "active", "winner": None, "termination": "", "reason": ""}
    if outcome is not None:
        result = {"winner": outcome.winner, "termination": "rules", "reason": outcome.reason}
        values = {"status": "finished", **result}
    elif how != "running":
        loser = rules.to_move(state)
        resigned = (one, two)[loser - 1].username
        result = {
            "winner": 3 - loser,
            "termination": "resignation",
            "reason": f"{resigned} resigned",
        }
        values = {"status": "finished", **result}
    if values["status"] == "finished":
        end = {"status": "finished", "result": result, "clock": None}
    game = Game(
        slug=slug,
        options={},
        player1=one,
        player2=two,
        state=rules.to_json(state),
        ply=len(played),
        version=len(played) + (end is not None),
        both_moved=any(player == 2 for player, _, _ in played),
        time_control="",
        **values,
    )
    return game, (played, end)


def _rows() -> dict[str, int]:
    quote = connection.ops.quote_name
    counts = {}
    with connection.cursor() as cursor:
        for table in ("accounts_user", "games_game", "games_gameevent"):
            cursor.execute(f"SELECT count(*) FROM {quote(table)}")
            row = cursor.fetchone()
            counts[table] = int(row[0]) if row else 0
    return counts


def _step_forward(probe: _Probe) -> list[Step]:
    """Apply every migration not applied yet, one at a time. One that PostgreSQL chose as a
    deadlock's victim (against the probe's write) is rolled back whole; it is run again with
    the writes stopped, as it would have to be on a live site."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    steps = []
    for migration, _ in plan:
        key = (migration.app_label, migration.name)
        probe.reset()
        started = time.monotonic()
        deadlocks = 0
        while True:
            try:
                MigrationExecutor(connection).migrate([key], plan=[(migration, False)])
                break
            except OperationalError as error:
                if deadlocks or not isinstance(error.__cause__, psycopg.errors.DeadlockDetected):
                    raise
                deadlocks += 1
                probe.paused.set()
        probe.paused.clear()
        seconds = time.monotonic() - started
        longest, victims = probe.longest()
        steps.append(Step(f"{key[0]}.{key[1]}", seconds, longest, deadlocks, victims))
    return steps


class _Probe(threading.Thread):
    """What a move does to the big tables, over and over on its own connection: update the
    game's row and insert an event, then roll back. How long the longest one waited."""

    def __init__(self, database: str) -> None:
        super().__init__(daemon=True)
        server = _server()
        self.address = {
            "host": server["host"],
            "port": server["port"],
            "user": server["user"],
            "password": server["password"] or None,
            "dbname": database,
        }
        self.halt = threading.Event()
        self.paused = threading.Event()
        self.lock = threading.Lock()
        self.worst = 0.0
        self.victims = 0
        self.since: float | None = None

    def run(self) -> None:
        with psycopg.connect(**self.address) as probe:
            row = probe.execute("SELECT min(id) FROM games_game").fetchone()
            probe.rollback()
            game = row[0] if row else None
            count = 0
            while not self.halt.is_set() and game is not None:
                if self.paused.is_set():
                    time.sleep(0.005)
                    continue
                count += 1
                with self.lock:
                    self.since = time.monotonic()
                try:
                    probe.execute("UPDATE games_game SET version = version WHERE id = %s", [game])
                    probe.execute(
                        "INSERT INTO games_gameevent (game_id, version, payload, created_at) "
                        "VALUES (%s, %s, '{}', now())",
                        [game, 2_000_000_000 + count],
                    )
                except psycopg.errors.DeadlockDetected:
                    with self.lock:
                        self.victims += 1
                probe.rollback()
                with self.lock:
                    self.worst = max(self.worst, time.monotonic() - self.since)
                    self.since = None
                time.sleep(0.005)

    def reset(self) -> None:
        with self.lock:
            self.worst = 0.0
            self.victims = 0

    def longest(self) -> tuple[float, int]:
        """The longest wait since the last reset (the one going on included), and the
        writes rolled back by a deadlock."""
        with self.lock:
            waiting = 0.0 if self.since is None else time.monotonic() - self.since
            return max(self.worst, waiting), self.victims

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=30)


def report(result: Forward, heavy: list[Heavy], slow: float = 0.1) -> list[str]:
    """The forward drill's figures, as `python -m devtools migrationdrill` prints them."""
    before, after = result.rows_before, result.rows_after
    replayed = result.replayed
    lines = [
        f"populated at {', '.join(f'{app} {name}' for app, name in START)}: {result.games} "
        f"games, {result.moves} moves, {result.events} events in {result.populate_seconds:.1f} s",
        f"{len(result.steps)} migrations applied one by one, with a move-like write every 5 ms "
        "beside them; those over 0.1 s, that made the write wait over 0.1 s or deadlocked with it:",
    ]
    for step in result.steps:
        deadlocks = step.migration_deadlocks + step.write_deadlocks
        if step.seconds > slow or step.longest_wait > slow or deadlocks:
            lines.append(
                f"  {step.migration}: {step.seconds:.3f} s, longest write wait "
                f"{step.longest_wait:.3f} s"
                + (
                    f"; DEADLOCK with the write: {step.migration_deadlocks} migration "
                    f"tries and {step.write_deadlocks} writes rolled back"
                    if deadlocks
                    else ""
                )
            )
    total = sum(step.seconds for step in result.steps)
    worst = max(result.steps, key=lambda step: step.longest_wait)
    lines += [
        f"all migrations: {total:.2f} s; longest write wait {worst.longest_wait:.3f} s "
        f"({worst.migration})",
        f"rows kept: {before} -> {after}",
        f"games replayed on the migrated schema: {replayed.total_games} games, "
        f"{replayed.total_moves} moves: {len(replayed.differences)} differences",
        *(f"DIFFERENCE {line}" for line in replayed.differences),
        "lock-heavy statements on tables that existed (allow-listed in "
        "tests/test_migrations_forward.py):",
        *(f"  {h.app}.{h.migration} {h.table}: {h.kind}" for h in heavy),
    ]
    return lines
