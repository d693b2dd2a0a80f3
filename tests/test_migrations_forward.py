"""Migrations run forward on a populated database, and none added since locks a big table for
long (devtools/migrating.py; `python -m devtools migrationdrill` measures the waits with a
move-like write beside each migration, docs/BACKUPS.md)."""

from __future__ import annotations

import pytest

from devtools import migrating

pytestmark = [
    pytest.mark.postgres(reason="the migrations' SQL and locks are PostgreSQL's"),
    pytest.mark.django_db,
]

SITE_STOPPED = (
    "measured by `python -m devtools migrationdrill`: it locks games_gameevent, then needs "
    "games_game, and so deadlocks with a move in flight; it runs with the site stopped "
    "(docs/BACKUPS.md)"
)
SOCKETS = "holds the open sockets only (a row per connected socket): small at any time"

# Every lock-heavy statement of the existing migrations, and why it may stay. A new migration
# must not add one: build an index CONCURRENTLY (in a migration with atomic = False), add a
# constraint NOT VALID and VALIDATE it in a later migration, backfill rows in batches outside
# the schema change's transaction; or, if the table is small, add it here saying why.
ALLOWED = {
    ("games", "0003_event_is_the_move_record", "games_gameevent", "column with a check"): (
        SITE_STOPPED
    ),
    ("games", "0003_event_is_the_move_record", "games_gameevent", "unique constraint"): (
        SITE_STOPPED
    ),
    ("games", "0003_event_is_the_move_record", "(rows)", "data migration"): (
        "one UPDATE of the events per move, under the lock the column added before it took; "
        + SITE_STOPPED
    ),
    (
        "games",
        "0004_connection_address",
        "games_gameconnection",
        "index built without CONCURRENTLY",
    ): f"games_gameconnection {SOCKETS}",
    ("games", "0005_community", "games_gameevent", "index built without CONCURRENTLY"): (
        SITE_STOPPED
    ),
    ("games", "0005_community", "games_game", "index built without CONCURRENTLY"): (
        "the index on moved_at, in the same transaction as the games_gameevent changes; "
        + SITE_STOPPED
    ),
    ("games", "0011_against_computer_marked", "(rows)", "data migration"): (
        "the games against the computer marked in batches of 1,000 ids, each its own short "
        "UPDATE (the migration is not atomic): no lock held between them"
    ),
    ("games", "0012_moves_rewrite_their_row_in_place", "(rows)", "data migration"): (
        "`ended_at` of the games already over, in batches of 1,000 ids, each its own short "
        "UPDATE (the migration is not atomic; the column was added without a default, so "
        "without a rewrite); and the events' index on the game alone dropped"
    ),
    ("games", "0008_forfeit", "(rows)", "data migration"): (
        "one UPDATE of the games without moved_at (those older than 0005); measured by "
        "`python -m devtools migrationdrill` (docs/BACKUPS.md)"
    ),
    (
        "lobby",
        "0002_connection_address",
        "lobby_lobbyconnection",
        "index built without CONCURRENTLY",
    ): f"lobby_lobbyconnection {SOCKETS}",
    ("lobby", "0004_seek_computer_level", "lobby_seek", "column with a check"): (
        "a scan of the seeks (the new column is NULL everywhere), no rewrite; seeks are few "
        "next to games (a seek becomes at most one game)"
    ),
    ("games", "0013_the_game_database", "(rows)", "data migration"): (
        "the finished games read in batches of 2,000 ids and their rows inserted into the new "
        "table: it takes no lock a move or an end waits for (reads of games_game share it)"
    ),
    ("games", "0014_the_moves_of_finished_games", "(rows)", "data migration"): (
        "the games of the game database read in batches of 500 and their moves (read from "
        "their events) inserted into the new table: no lock a move or an end waits for"
    ),
}


def test_no_migration_locks_a_big_table_for_long_unless_allowed_with_a_reason() -> None:
    found = {heavy.key: heavy.statement for heavy in migrating.lock_heavy()}
    new = {key: statement for key, statement in found.items() if key not in ALLOWED}
    assert new == {}, "lock-heavy statements: rewrite them or allow them in ALLOWED"
    assert set(ALLOWED) - set(found) == set(), "ALLOWED names statements that are gone"


def test_the_migrations_run_forward_on_a_populated_database_and_keep_every_move() -> None:
    result = migrating.forward(12, probe_writes=False)
    assert result.replayed.differences == []
    assert result.replayed.total_games == 12
    assert result.replayed.total_moves == result.moves > 0
    assert result.rows_after == result.rows_before
    applied = {step.migration for step in result.steps}
    assert {"games.0003_event_is_the_move_record", "games.0008_forfeit"} <= applied
    assert "games.0002_both_moved" not in applied
