"""The drill's PostgreSQL (devtools/cluster/postgres.py) behind PgBouncer
(devtools/cluster/pgbouncer.py): a primary on one host and a synchronous standby on another;
the server sees no more connections than the pooler's pool however many clients come; a
commit acknowledged through the pooler is on the standby, which takes over when the primary's
host is lost and the pooler is pointed at it."""

from __future__ import annotations

import threading

import psycopg
import pytest

from devtools.cluster.hosts import network
from devtools.cluster.pgbouncer import PgBouncer
from devtools.cluster.postgres import Postgres

pytestmark = pytest.mark.postgres(reason="starts PostgreSQL servers of its own")

CLIENTS = 40
POOL = 5


def connect(url: str) -> psycopg.Connection:
    # Transaction pooling: no statement stays prepared on a server connection.
    return psycopg.connect(url, autocommit=True, prepare_threshold=None, connect_timeout=5)


def test_a_bounded_pool_and_an_acknowledged_commit_that_survives_the_primary_s_loss() -> None:
    with network(["data", "standby", "pool"]) as net:
        subnet = f"{net.gateway.rsplit('.', 1)[0]}.0/24"
        primary = Postgres(net["data"], subnet)
        standby = Postgres(net["standby"], subnet)
        pooler = PgBouncer(net["pool"], pool=POOL)
        try:
            primary.init_primary(synchronous="standby")
            primary.start()
            standby.init_standby(primary, "standby")
            standby.start()
            primary.wait_for_standby("standby", "sync")
            pooler.start(primary.host.address)
            url = pooler.url("postgres")
            with connect(url) as setup:
                setup.execute("create table moves (n int)")

            # Forty clients at once, each in its own transactions: the server sees the pool.
            most = [0]
            errors: list[BaseException] = []

            def play(n: int) -> None:
                try:
                    with connect(url) as client:
                        for _ in range(3):
                            with client.transaction():
                                client.execute("insert into moves values (%s)", (n,))
                                client.execute("select pg_sleep(0.02)")
                except BaseException as error:  # reported below
                    errors.append(error)

            def watch(stop: threading.Event) -> None:
                while not stop.wait(0.01):
                    count = int(primary.sql(
                        "select count(*) from pg_stat_activity where datname = 'postgres' "
                        "and backend_type = 'client backend' and client_addr = "
                        f"'{pooler.host.address}'"
                    ))  # fmt: skip
                    most[0] = max(most[0], count)

            stop = threading.Event()
            watcher = threading.Thread(target=watch, args=(stop,))
            watcher.start()
            players = [threading.Thread(target=play, args=(n,)) for n in range(CLIENTS)]
            for player in players:
                player.start()
            for player in players:
                player.join()
            stop.set()
            watcher.join()
            assert errors == []
            assert primary.sql("select count(*) from moves") == str(3 * CLIENTS)
            assert 1 <= most[0] <= POOL

            net.cut("data")  # the primary's host is lost
            standby.promote()
            pooler.point_at(standby.host.address)
            assert standby.sql("select count(*) from moves") == str(3 * CLIENTS)
            with connect(url) as client:  # the same address, the new primary behind it
                assert client.execute("select pg_is_in_recovery()").fetchone() == (False,)
                client.execute("insert into moves values (-1)")
            assert standby.sql("select count(*) from moves") == str(3 * CLIENTS + 1)
        finally:
            pooler.stop()
            standby.remove()
            primary.remove()
