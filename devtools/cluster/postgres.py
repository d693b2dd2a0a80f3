"""PostgreSQL for the cluster drill: a primary on the data host and a streaming standby on a
host of its own, each a cluster of the drill's own (initdb into a directory it removes), run
by Debian's binaries as the postgres user inside the host's namespace.

Replication is synchronous when asked (`synchronous_standby_names`): a commit is acknowledged
once the standby has it, so a move acknowledged to a player survives the primary's loss. The
standby takes over by `pg_ctl promote` (docs/SCALING.md says why not Patroni here).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from devtools.cluster.hosts import Host

BIN = Path("/usr/lib/postgresql/15/bin")
PORT = 5432
USER = "postgres"


class PostgresError(RuntimeError):
    pass


def _as_postgres(host: Host, argv: list[str]) -> list[str]:
    return host.command(["runuser", "-u", USER, "--", *argv])


def _run(host: Host, argv: list[str]) -> str:
    done = subprocess.run(_as_postgres(host, argv), capture_output=True, text=True, check=False)
    if done.returncode:
        raise PostgresError(f"{' '.join(argv)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


class Postgres:
    """One PostgreSQL server on `host`, listening on the host's address, port 5432."""

    def __init__(self, host: Host, subnet: str) -> None:
        self.host = host
        self.subnet = subnet  # who may connect (trust): the drill's hosts, and the machine
        self.directory = Path(tempfile.mkdtemp(prefix=f"diffusion-pg-{host.name}-"))
        shutil.chown(self.directory, USER, USER)
        self.data = self.directory / "data"
        self.front: int | None = None  # where the others reach it, if not at PORT

    @property
    def reached_at(self) -> int:
        return self.front or PORT

    @property
    def url(self) -> str:
        return f"postgres://{USER}@{self.host.address}:{PORT}/postgres"

    def _settings(self, synchronous: str) -> str:
        return "\n".join(
            [
                f"listen_addresses = '{self.host.address},127.0.0.1'",
                f"port = {PORT}",
                f"unix_socket_directories = '{self.directory}'",
                "max_connections = 200",
                "wal_level = replica",
                "max_wal_senders = 5",
                "hot_standby = on",
                f"synchronous_standby_names = '{synchronous}'",
                "fsync = on",
                # A web host cut off in the middle of a transaction leaves its row locks held
                # (the game's row: that game stalls) until the session ends, and nobody ends
                # it: PgBouncer and PostgreSQL wait on a silent peer. The site's transactions
                # last milliseconds; one idle this long is ended (docs/DEPLOY.md).
                "idle_in_transaction_session_timeout = '3s'",
                "",
            ]
        )

    def _hba(self) -> str:
        return (
            "local all all trust\n"
            f"host all all {self.subnet} trust\n"
            f"host replication all {self.subnet} trust\n"
            "host all all 127.0.0.1/32 trust\n"
            # Through a latency relay on the host itself, a standby's stream comes from here.
            "host replication all 127.0.0.1/32 trust\n"
        )

    def init_primary(self, synchronous: str = "") -> None:
        """A new cluster; `synchronous`: the standby names a commit waits for ("" none)."""
        _run(self.host, [str(BIN / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust"])
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(self._settings(synchronous))
        (self.data / "pg_hba.conf").write_text(self._hba())

    def init_standby(self, primary: Postgres, name: str) -> None:
        """A copy of `primary` that follows it, known to it as `name`."""
        _run(
            self.host,
            [
                str(BIN / "pg_basebackup"),
                "-h", primary.host.address, "-p", str(PORT), "-U", USER,
                "-D", str(self.data), "-R", "-X", "stream", "--checkpoint=fast",
            ],
        )  # fmt: skip
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(self._settings(""))
        # After the line -R wrote there (read last, the last line wins): the primary knows
        # its standby by this name, which synchronous_standby_names lists.
        with (self.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(
                f"primary_conninfo = 'host={primary.host.address} port={primary.reached_at} "
                f"user={USER} "
                f"application_name={name}'\n"
            )

    def start(self) -> None:
        log = self.directory / "server.log"
        _run(self.host, [str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(log), "-w",
                         "start"])  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            _as_postgres(self.host, [str(BIN / "pg_ctl"), "-D", str(self.data), "-m", mode,
                                     "-w", "stop"]),
            capture_output=True,
            check=False,
        )  # fmt: skip

    def promote(self) -> float:
        """Make this standby the primary; the seconds until it accepts writes."""
        started = time.monotonic()
        _run(self.host, [str(BIN / "pg_ctl"), "-D", str(self.data), "-w", "promote"])
        return time.monotonic() - started

    def wait_for_standby(self, name: str, state: str = "sync", seconds: float = 30.0) -> None:
        """Until the standby `name` streams from this primary in `state` ("sync" once it
        has caught up, where synchronous_standby_names lists it; "async" otherwise)."""
        deadline = time.monotonic() + seconds
        query = f"select sync_state from pg_stat_replication where application_name = '{name}'"
        while (found := self.sql(query)) != state:
            if time.monotonic() > deadline:
                raise PostgresError(f"the standby {name} is {found or 'not connected'} after "
                                    f"{seconds} s, not {state}")  # fmt: skip
            time.sleep(0.1)

    def sql(self, statement: str) -> str:
        """One statement through psql on the host's loopback; its output, unaligned."""
        return _run(
            self.host,
            [str(BIN / "psql"), "-h", "127.0.0.1", "-p", str(PORT), "-U", USER, "-At",
             "-c", statement, "postgres"],
        ).strip()  # fmt: skip

    def pid(self) -> int | None:
        """The postmaster's process id while it runs (its backends are its children)."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)
