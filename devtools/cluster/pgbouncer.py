"""PgBouncer for the cluster drill: in transaction mode between the web processes and
PostgreSQL, so that the server sees at most `pool` connections however many processes (and
their pools) there are. Debian 12's PgBouncer (1.18) cannot keep prepared statements in
transaction mode: the processes run with DATABASE_PREPARE_THRESHOLD=off (docs/DEPLOY.md).

After a failover the pooler is pointed at the new primary (`point_at`: its configuration
rewritten and reloaded, the clients' connections kept).
"""

from __future__ import annotations

import shutil
import subprocess

from devtools.cluster.daemons import Daemon, answers, wait_until
from devtools.cluster.hosts import Host

PORT = 6432
USER = "postgres"


class PgBouncerError(RuntimeError):
    pass


class PgBouncer(Daemon):
    def __init__(self, host: Host, pool: int = 20) -> None:
        super().__init__(host, "pgbouncer")
        self.pool = pool
        shutil.chown(self.directory, USER, USER)
        self.server = ""
        self.server_port = 5432
        self.front: int | None = None  # where the clients reach it, if not at PORT

    def url(self, database: str) -> str:
        return f"postgres://{USER}@{self.host.address}:{self.front or PORT}/{database}"

    def _write(self, server: str, port: int) -> None:
        self.server, self.server_port = server, port
        (self.directory / "users.txt").write_text(f'"{USER}" ""\n')
        (self.directory / "pgbouncer.ini").write_text(
            "\n".join(
                [
                    "[databases]",
                    f"* = host={server} port={port}",
                    "[pgbouncer]",
                    f"listen_addr = {self.host.address},127.0.0.1",
                    f"listen_port = {PORT}",
                    f"unix_socket_dir = {self.directory}",
                    "auth_type = trust",
                    f"auth_file = {self.directory / 'users.txt'}",
                    f"admin_users = {USER}",
                    "pool_mode = transaction",
                    f"default_pool_size = {self.pool}",
                    f"max_db_connections = {self.pool}",
                    "max_client_conn = 5000",
                    "server_connect_timeout = 3",
                    "server_login_retry = 1",
                    # Django sets these on each new connection; PgBouncer passes them on.
                    "ignore_startup_parameters = extra_float_digits,options",
                    f"logfile = {self.directory / 'pgbouncer.log'}",
                    "",
                ]
            )
        )

    def start(self, server: str, port: int = 5432) -> None:
        """Serve, passing connections on to PostgreSQL at `server` (an address) and `port`."""
        self._write(server, port)
        process = self.spawn(
            ["runuser", "-u", USER, "--", "pgbouncer", str(self.directory / "pgbouncer.ini")],
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: answers(self.host.address, PORT), "pgbouncer", process=process,
                   why=lambda: self.log()[-500:])  # fmt: skip

    def point_at(self, server: str, port: int = 5432) -> None:
        """Send new connections to `server` from now on (RELOAD: clients stay connected)."""
        self._write(server, port)
        self.admin("RELOAD")

    def admin(self, command: str) -> str:
        done = subprocess.run(
            self.host.command(
                ["psql", "-h", "127.0.0.1", "-p", str(PORT), "-U", USER, "-At", "-c", command,
                 "pgbouncer"]
            ),
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        if done.returncode:
            raise PgBouncerError(f"{command}: {done.stderr.strip()}")
        return done.stdout

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text() if path.exists() else ""
