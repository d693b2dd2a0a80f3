"""The whole site on the drill's hosts, and the faults it must live through (issue 59).

    edge     nginx (docker/nginx-site.conf) over the six web processes, checking /readyz
    web1-3   two web processes each, and a Redis Sentinel each (a majority must agree);
             web1 also runs the sweeper and the computer's worker
    pool     PgBouncer, transaction mode, between every process and PostgreSQL
    db1      the PostgreSQL primary; db2 its synchronous standby
    redis1   layer-a's master, layer-b's replica, the cache's master
    redis2   layer-b's master, layer-a's replica, the cache's replica

The channel layer is spread over layer-a and layer-b; the cache and the rate limits have
their own Redis; every process follows Sentinel's masters (realtime/redis_servers.py).

The PostgreSQL failover is the documented procedure (docs/DEPLOY.md), driven here as an
operator's script would: once the primary has not answered for FAILOVER_AFTER seconds, the
standby is promoted with `pg_ctl promote` and PgBouncer is pointed at it (RELOAD), and the
connections it still holds to the lost primary are dropped (KILL): the processes connect again
through it. Synchronous replication: a commit is acknowledged once the standby has it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import psycopg
import redis

from devtools.cluster import costs
from devtools.cluster.daemons import Daemon, answers
from devtools.cluster.hosts import Host, Network
from devtools.cluster.latency import Front
from devtools.cluster.pgbouncer import PgBouncer
from devtools.cluster.postgres import Postgres
from devtools.cluster.proxy import Proxy
from devtools.cluster.redis import RedisServer, Sentinel
from devtools.cluster.web import ROOT, SiteProcess, WebProcess

SERVICE_HOSTS = ["edge", "pool", "db1", "db2", "redis1", "redis2"]


def hosts(web_hosts: int) -> list[str]:
    """The drill's hosts with `web_hosts` web hosts (web1, web2, ...)."""
    return [*(f"web{n}" for n in range(1, web_hosts + 1)), *SERVICE_HOSTS]


PROCESSES_PER_HOST = 2
FIRST_PORT = 8001
DATABASE = "diffusion"
# Redis services: name -> (port, the master's host, the replica's host).
SERVICES = {
    "layer-a": (6379, "redis1", "redis2"),
    "layer-b": (6380, "redis2", "redis1"),
    "cache": (6381, "redis1", "redis2"),
}
SENTINEL_DOWN_MS = 1000
# A relay in front of a service listens on the service's port plus this (latency on).
FRONT = 10000
FAILOVER_AFTER = 2.0  # seconds without an answer from the primary before promoting
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Drill:
    net: Network
    web_hosts: int = 3
    pool_size: int = 20
    extra_env: dict[str, str] = field(default_factory=dict)
    say: Callable[[str], None] = print
    primary: Postgres | None = None
    standby: Postgres | None = None
    pooler: PgBouncer | None = None
    # service -> [master, replica]
    redis: dict[str, list[RedisServer]] = field(default_factory=dict)
    sentinels: list[Sentinel] = field(default_factory=list)
    web: list[WebProcess] = field(default_factory=list)
    jobs: list[SiteProcess] = field(default_factory=list)
    proxy: Proxy | None = None
    retired: list[SiteProcess] = field(default_factory=list)  # replaced, logs kept
    # Each way between hosts (ms, jitter ms): relays in front of every data service.
    latency: tuple[float, float] | None = None
    fronts: list[Front] = field(default_factory=list)

    @property
    def web_host_names(self) -> list[str]:
        return [f"web{n}" for n in range(1, self.web_hosts + 1)]

    # --- the settings every process gets ----------------------------------------------------

    @property
    def subnet(self) -> str:
        return f"{self.net.gateway.rsplit('.', 1)[0]}.0/24"

    def sentinel_url(self, service: str) -> str:
        hosts = ",".join(f"{s.host.address}:{s.port}" for s in self.sentinels)
        return f"sentinel://{hosts}/{service}/0"

    @property
    def database_url(self) -> str:
        assert self.pooler is not None
        return self.pooler.url(DATABASE)

    @property
    def env(self) -> dict[str, str]:
        import os

        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": self.database_url,
            # Transaction pooling: a statement prepared on one server connection is not there
            # on the next (Debian 12's PgBouncer 1.18 cannot keep them).
            "DATABASE_PREPARE_THRESHOLD": "off",
            "REDIS_URL": self.sentinel_url("cache"),
            "CHANNEL_LAYER_REDIS": f"{self.sentinel_url('layer-a')} {self.sentinel_url('layer-b')}",
            "CACHE_REDIS_URL": self.sentinel_url("cache"),
            "CHANNEL_LAYER_PREFIX": f"drill{self.net.run_id}",
            "DJANGO_ALLOWED_HOSTS": "*",
            # Every player of the drill comes from this machine, one address.
            "MAX_SOCKETS_PER_ADDRESS": "0",
            "LOG_FORMAT": "plain",
            # With the database a relayed round trip away, a query holds its thread 3-4 ms
            # longer: twice the threads (docs/DEPLOY.md; with 3 the web host cut took 14.1 s,
            # with 6 9.7 s, docs/SCALING.md).
            **({"DB_THREADS": "6"} if self.latency and "DB_THREADS" not in os.environ else {}),
            **self.extra_env,
        }

    # --- bringing it up ------------------------------------------------------------------------

    def _front(self, host: Host, port: int, target: int) -> int | None:
        """With latency on, a relay on `host` at `port` in front of the service at `target`;
        the port the others must use."""
        if self.latency is None:
            return None
        front = Front(host, port, target, *self.latency)
        front.start()
        self.fronts.append(front)
        return port

    def up(self, *, jobs: bool = True) -> None:
        self.net.up()
        self._postgres()
        self._redis()
        self._migrate()
        self._web(jobs=jobs)

    def _postgres(self) -> None:
        started = time.monotonic()
        self.primary = Postgres(self.net["db1"], self.subnet)
        self.standby = Postgres(self.net["db2"], self.subnet)
        self.primary.init_primary(synchronous="db2")
        self.primary.start()
        for database in (self.primary, self.standby):
            database.front = self._front(database.host, FRONT + 5432, 5432)
        self.standby.init_standby(self.primary, "db2")
        self.standby.start()
        self.primary.wait_for_standby("db2", "sync")
        self.primary.sql(f"create database {DATABASE}")
        self.pooler = PgBouncer(self.net["pool"], pool=self.pool_size)
        self.pooler.start(self.primary.host.address, self.primary.reached_at)
        self.pooler.front = self._front(self.pooler.host, FRONT + 6432, 6432)
        self.say(f"PostgreSQL primary on db1, synchronous standby on db2, PgBouncer on pool "
                 f"({time.monotonic() - started:.1f} s)")  # fmt: skip

    def _redis(self) -> None:
        for service, (port, master_host, replica_host) in SERVICES.items():
            master = RedisServer(self.net[master_host], port)
            master.front = self._front(master.host, FRONT + port, port)
            master.start()
            replica = RedisServer(self.net[replica_host], port, master=master)
            replica.front = self._front(replica.host, FRONT + port, port)
            replica.start()
            self.redis[service] = [master, replica]
        masters = {service: pair[0] for service, pair in self.redis.items()}
        for name in self.web_host_names:
            sentinel = Sentinel(self.net[name])
            # A majority of the sentinels must agree that a master is down.
            quorum = self.web_hosts // 2 + 1
            sentinel.start(masters, quorum=quorum, down_ms=SENTINEL_DOWN_MS)
            self.sentinels.append(sentinel)
        self.say("Redis: layer-a, layer-b and cache, each a master and a replica; "
                 f"{len(self.sentinels)} sentinels")  # fmt: skip

    def _migrate(self) -> None:
        started = time.monotonic()
        assert self.primary is not None
        env = {**self.env, "DATABASE_URL": f"{self.primary.url.rsplit('/', 1)[0]}/{DATABASE}"}
        for argv in (["migrate", "--noinput", "-v", "0"],
                     ["collectstatic", "--noinput", "-v", "0"]):  # fmt: skip
            done = subprocess.run(
                [sys.executable, "manage.py", *argv], cwd=ROOT, env=env,
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode:
                raise RuntimeError(f"manage.py {argv[0]}: {done.stderr[-2000:]}")
        self.say(f"migrated ({time.monotonic() - started:.1f} s)")

    def _web(self, *, jobs: bool) -> None:
        started = time.monotonic()
        env = self.env
        for host_index, name in enumerate(self.web_host_names):
            for slot in range(PROCESSES_PER_HOST):
                index = host_index * PROCESSES_PER_HOST + slot + 1
                process = WebProcess(self.net[name], index, FIRST_PORT + slot, env)
                process.start()
                self.web.append(process)
        if jobs:
            for argv, name in ((["manage.py", "sweeper"], "sweeper"),
                               (["manage.py", "bots", "--processes", "1"], "bots")):  # fmt: skip
                job = SiteProcess(self.net["web1"], name, argv, env)
                job.start()
                self.jobs.append(job)
        for process in self.web:
            process.wait_ready()
        self.proxy = Proxy(self.net["edge"], [process.upstream for process in self.web])
        self.proxy.start()
        self.say(f"{len(self.web)} web processes on {', '.join(self.web_host_names)} behind "
                 f"nginx on edge "
                 f"({time.monotonic() - started:.1f} s)")  # fmt: skip

    # --- faults ----------------------------------------------------------------------------

    def cut_web_host(self, name: str) -> None:
        """Every process of the host at once: its network gone, its processes running on."""
        self.net.cut(name)

    def restore_web_host(self, name: str) -> None:
        self.net.restore(name)

    def kill_redis_master(self, service: str = "layer-a") -> RedisServer:
        """kill -9 the service's master as a crash would; Sentinel promotes the replica."""
        master = self.redis[service][0]
        master.kill()
        return master

    def lose_primary(self) -> dict[str, float]:
        """The primary's host cut off; the standby promoted by the procedure; PgBouncer
        pointed at it. Seconds from the cut: `detected`, `promoted`, `pointed`."""
        assert self.primary is not None and self.standby is not None and self.pooler is not None
        began = time.monotonic()
        self.net.cut("db1")
        unanswered_since = time.monotonic()
        while time.monotonic() - unanswered_since < FAILOVER_AFTER:
            if _answers_sql(self.primary.host.address):
                unanswered_since = time.monotonic()
            time.sleep(0.2)
        detected = time.monotonic() - began
        self.standby.promote()
        promoted = time.monotonic() - began
        self.pooler.point_at(self.standby.host.address, self.standby.reached_at)
        # The server connections to the lost primary hang (its host is silent): dropped, and
        # the clients holding them connect again, through the pooler to the new primary.
        self.pooler.admin(f"KILL {DATABASE}")
        self.pooler.admin(f"RESUME {DATABASE}")
        self.primary, self.standby = self.standby, self.primary
        return {"detected": detected, "promoted": promoted, "pointed": time.monotonic() - began}

    def deploy(self, process: WebProcess) -> dict[str, float]:
        """One process replaced as an upgrade does (docs/DEPLOY.md): SIGTERM (it drains, its
        pages moving to the others, the proxy leaving it out once /readyz says so), then the
        new one started on its port; seconds until it exited and until the new one was ready."""
        began = time.monotonic()
        process.terminate()
        stopped = time.monotonic() - began
        process.start()
        process.wait_ready()
        return {"stopped": stopped, "ready": time.monotonic() - began}

    # --- what happened ---------------------------------------------------------------------

    def processes(self) -> list[SiteProcess]:
        return [*self.web, *self.jobs]

    def tracebacks(self) -> dict[str, int]:
        return {process.name: process.output().count(TRACEBACK) for process in self.processes()}

    def first_traceback(self) -> str:
        """The first traceback a process logged (its name, then the traceback's end), or ""."""
        for process in self.processes():
            shown = traceback_end(process.output())
            if shown:
                return f"{process.name}:\n{shown}"
        return ""

    def postgres_connections(self) -> int:
        """Client backends on the primary now (the pooler's server connections, and any other)."""
        assert self.primary is not None
        return int(self.primary.sql(
            "select count(*) from pg_stat_activity where backend_type = 'client backend' "
            f"and datname = '{DATABASE}'"
        ))  # fmt: skip

    def reading(self, others: dict[str, int] | None = None) -> costs.Reading:
        """Every part's CPU seconds so far, the WAL written and Redis's counts; `others`:
        more processes to count (the players)."""
        table = costs.process_table()

        def pids(daemons: Iterable[Daemon | None]) -> list[int]:
            return [d.process.pid for d in daemons if d is not None and d.process is not None]

        parts: dict[str, list[int]] = {
            "web": pids(self.web),
            "jobs": pids(self.jobs),
            "postgres": [pid for pid in [self.primary.pid() if self.primary else None] if pid],
            "standby": [pid for pid in [self.standby.pid() if self.standby else None] if pid],
            "redis": pids(server for pair in self.redis.values() for server in pair),
            "sentinel": pids(self.sentinels),
            "pgbouncer": pids([self.pooler]),
            "nginx": pids([self.proxy]),
            "latency relays": pids(self.fronts),
            **{name: [pid] for name, pid in (others or {}).items()},
        }
        reading = costs.Reading(at=time.monotonic())
        reading.cpu = {part: costs.tree_seconds(roots, table) for part, roots in parts.items()}
        if self.primary is not None:
            reading.wal = int(self.primary.sql("select pg_current_wal_lsn() - '0/0'::pg_lsn"))
        for service, pair in self.redis.items():
            for role, server in zip(("master", "replica"), pair, strict=True):
                if server.process is None:
                    continue
                try:
                    done, published, cpu = costs.redis_counts(server.address, server.port)
                except redis.RedisError:
                    continue
                name = f"{service} {role}"
                reading.redis_commands[name] = done
                reading.redis_publishes[name] = published
                reading.redis_cpu[name] = cpu
        return reading

    def down(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for front in self.fronts:
            front.stop()
        for process in self.processes():
            process.stop()
        for sentinel in self.sentinels:
            sentinel.stop()
        for pair in self.redis.values():
            for server in pair:
                server.stop()
        if self.pooler is not None:
            self.pooler.stop()
        for database in (self.primary, self.standby):
            if database is not None:
                database.remove()
        self.net.down()


def _answers_sql(address: str) -> bool:
    if not answers(address, 5432, timeout=0.5):
        return False
    try:
        with psycopg.connect(
            f"postgres://postgres@{address}:5432/postgres", connect_timeout=1
        ) as connection:
            connection.execute("select 1")
        return True
    except psycopg.Error:
        return False


def traceback_end(output: str, lines: int = 12) -> str:
    """The first traceback in a log: its last `lines` frames' lines and the exception's."""
    start = output.find(TRACEBACK)
    if start < 0:
        return ""
    rest = output[start:].splitlines()
    end = next((i for i, line in enumerate(rest[1:], 1) if not line.startswith(" ")), len(rest) - 1)
    return "\n".join(rest[max(1, end - lines) : end + 1])
