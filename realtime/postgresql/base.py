"""Django's PostgreSQL backend, with its connection pool quick to get over killed sessions
and its cursors over prepared statements made stale by a migration.

psycopg_pool checks a connection before handing it out (CONN_HEALTH_CHECKS) and, when the
check fails, waits before it takes the next idle one: 1 s, then 2 s, 4 s... After the
database's sessions are killed (a restart, a failover, an operator), every idle connection
of the pool is dead, and a request waited a second for each one it met: an independent probe
saw the first success 2.79 s after a kill, and this machine 0.91-1.08 s with one dead
connection. Here the first failed check has every idle connection checked at once (the dead
ones replaced together), and the wait before the next attempt starts at 50 ms
(tests/test_database_outage.py).

And with its cursors mending a prepared statement made stale by a schema change. Statements
run often are prepared (DATABASE_PREPARE_THRESHOLD); a column's type changed under a running
server (a migration in a rolling deploy) makes PostgreSQL refuse every later run of a prepared
statement that returns the column ("cached plan must not change result type"), on that
connection, for good. Outside a transaction the cursor then has the connection's prepared
statements deallocated, to be prepared again from the new schema, and runs the statement once
more; a transaction is aborted by the refusal and fails as a whole, and its rollback
deallocates them (tests/test_prepared_statements.py).
"""

from __future__ import annotations

from typing import Any

import psycopg
import psycopg_pool.base
from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus

# The first wait after a failed check or a failed reconnection (psycopg_pool's is 1 s); it
# still doubles on each further failure, so a database that is down is not hammered.
psycopg_pool.base.AttemptWithBackoff.INITIAL_DELAY = 0.05


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> Any:
        pool = super().pool
        if pool is not None and not getattr(pool, "purges_on_a_failed_check", False):
            pool.purges_on_a_failed_check = True
            check = pool._check  # Django's: ConnectionPool.check_connection, or None
            if check is not None:

                def check_or_purge(conn: Any) -> None:
                    try:
                        check(conn)
                    except Exception:
                        pool.check()  # every idle connection now: the dead ones replaced
                        raise

                pool._check = check_or_purge
        return pool

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        factory = params.get("cursor_factory")
        params["cursor_factory"] = _MENDING.get(factory, factory)
        return params


def stale_plan(error: BaseException) -> bool:
    """Whether PostgreSQL refused a prepared statement whose result type the schema changed."""
    return (
        isinstance(error, psycopg.errors.FeatureNotSupported)
        and error.diag.source_function == "RevalidateCachedQuery"
    )


class MendsStalePlans:
    """A cursor that, refused a stale prepared statement outside a transaction, has the
    connection's prepared statements deallocated and runs the statement again. In a
    transaction the refusal stands: the transaction is aborted, and its rollback deallocates
    them (psycopg's `rollback` does)."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        try:
            return super().execute(query, params, **kwargs)  # type: ignore[misc]
        except psycopg.errors.FeatureNotSupported as error:
            # Looked at only after a refusal, not at every statement: a refused statement
            # leaves a transaction it ran in failed, so an idle connection in autocommit
            # means none was open.
            connection: Any = self.connection  # type: ignore[attr-defined]
            idle = connection.info.transaction_status == TransactionStatus.IDLE
            if not (connection.autocommit and idle and stale_plan(error)):
                raise
        # psycopg sees the command and forgets its own names of the statements too.
        super().execute("DEALLOCATE ALL")  # type: ignore[misc]
        return super().execute(query, params, **kwargs)  # type: ignore[misc]


class ServerBindingCursor(MendsStalePlans, base.ServerBindingCursor):
    pass


class Cursor(MendsStalePlans, base.Cursor):
    pass


_MENDING = {base.ServerBindingCursor: ServerBindingCursor, base.Cursor: Cursor}
