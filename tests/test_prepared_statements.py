"""Prepared statements on PostgreSQL: a statement run often is prepared, and a column's type
changed under a running server (a migration in a rolling deploy) does not break it for good
(realtime/postgresql/base.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import NotSupportedError, connection, transaction

from config.settings import prepare_threshold

TABLE = "prepared_statements_probe"
QUERY = f"SELECT x FROM {TABLE} WHERE y = %s"


@pytest.mark.parametrize(
    ("value", "runs"),
    [("5", 5), ("0", 0), ("off", None), ("None", None), (" 12 ", 12), ("", 5), (" ", 5)],
)
def test_the_threshold_is_a_number_of_runs_or_off(value: str, runs: int | None) -> None:
    assert prepare_threshold(value) == runs


@pytest.mark.parametrize("value", ["-1", "five", "1.5"])
def test_a_threshold_that_is_neither_is_refused_by_name(value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_PREPARE_THRESHOLD"):
        prepare_threshold(value)


def _other_session() -> psycopg.Connection[Any]:
    """A second session on the test database, as a migrating process is to a server."""
    database = connection.settings_dict
    return psycopg.connect(
        host=database["HOST"] or "127.0.0.1",
        port=database["PORT"] or 5432,
        user=database["USER"],
        password=database["PASSWORD"] or None,
        dbname=database["NAME"],
        autocommit=True,
    )


@pytest.fixture
def probe() -> Iterator[psycopg.Connection[Any]]:
    with _other_session() as other:
        other.execute(f"CREATE TABLE {TABLE} (x integer, y text)")
        other.execute(f"INSERT INTO {TABLE} VALUES (7, 'seven')")
        try:
            yield other
        finally:
            other.execute(f"DROP TABLE IF EXISTS {TABLE}")


def _select() -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(QUERY, ["seven"])
        return list(cursor.fetchall())


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _prepare_the_probe() -> None:
    threshold = connection.settings_dict["OPTIONS"]["prepare_threshold"]
    assert threshold is not None, "DATABASE_PREPARE_THRESHOLD is off: nothing is prepared"
    for _ in range(threshold + 1):
        assert _select() == [(7,)]
    assert any(TABLE in statement for statement in _prepared()), "the select was not prepared"


def _change_the_column_type(other: psycopg.Connection[Any]) -> None:
    other.execute(f"ALTER TABLE {TABLE} ALTER COLUMN x TYPE bigint")


@pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_statement_run_often_is_prepared_once_per_connection(probe: Any) -> None:
    _prepare_the_probe()
    assert sum(TABLE in statement for statement in _prepared()) == 1


@pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_stale_prepared_statement_is_prepared_again(probe: Any) -> None:
    _prepare_the_probe()
    _change_the_column_type(probe)
    # Without the mending this is PostgreSQL's "cached plan must not change result type",
    # and so is every later run on this connection.
    assert _select() == [(7,)]
    assert _select() == [(7,)]


@pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_in_a_transaction_the_refusal_stands_and_the_next_transaction_runs(probe: Any) -> None:
    _prepare_the_probe()
    _change_the_column_type(probe)
    with pytest.raises(NotSupportedError, match="cached plan"), transaction.atomic():
        _select()
    with transaction.atomic():
        assert _select() == [(7,)]
