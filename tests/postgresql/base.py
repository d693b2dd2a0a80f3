"""The product's PostgreSQL backend (realtime/postgresql) with one difference, for the tests
only: a flush empties the tables with DELETE instead of TRUNCATE.

Every test that needs real transactions (pytest-django's `transaction=True`: the socket,
server and lobby tests) ends with a flush of every table. TRUNCATE gives each of the 26 tables
and their indexes new files: about 0.14 s on an idle machine, over half a second with the
suite's workers beside it, for tables that hold a few rows. DELETE of those rows takes a few
milliseconds. Django's foreign keys on PostgreSQL are DEFERRABLE INITIALLY DEFERRED, and the
flush runs in one transaction, so the order of the tables does not matter.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import operations

from realtime.postgresql import base


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self,
        style: Any,
        tables: list[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if not tables or reset_sequences or allow_cascade:
            # Sequences restarted or a cascade asked for (no test of ours does): Django's own.
            return list(
                super().sql_flush(
                    style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
                )
            )
        return ["SET CONSTRAINTS ALL DEFERRED;"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
