"""The drill's PostgreSQL (devtools/cluster/postgres.py): a primary on one host, a synchronous
standby on another that has every acknowledged commit, and takes over when promoted."""

from __future__ import annotations

import pytest

from devtools.cluster.hosts import network
from devtools.cluster.postgres import Postgres

pytestmark = pytest.mark.postgres(reason="starts PostgreSQL servers of its own")


def test_a_commit_acknowledged_by_the_primary_is_on_the_standby_that_takes_over() -> None:
    with network(["data", "standby"]) as net:
        subnet = f"{net.gateway.rsplit('.', 1)[0]}.0/24"
        primary = Postgres(net["data"], subnet)
        standby = Postgres(net["standby"], subnet)
        try:
            primary.init_primary(synchronous="standby")
            primary.start()
            standby.init_standby(primary, "standby")
            standby.start()
            primary.wait_for_standby("standby", "sync")
            primary.sql("create table moves (n int)")
            primary.sql("insert into moves values (1), (2), (3)")  # acknowledged: on both
            net.cut("data")  # the primary's host is lost
            assert standby.sql("select pg_is_in_recovery()") == "t"
            seconds = standby.promote()
            assert standby.sql("select pg_is_in_recovery()") == "f"
            assert standby.sql("select count(*) from moves") == "3"
            standby.sql("insert into moves values (4)")  # it takes writes now
            assert standby.sql("select count(*) from moves") == "4"
            assert seconds < 30
        finally:
            standby.remove()
            primary.remove()
