"""What the workers of one pytest run make once and share: a migrated database and the
collected static files.

Each worker used to migrate its own test database, its own template for the servers' scratch
databases and collect its own static files: eight migrations and four collections a pass, on
a machine whose two cores the suite already keeps busy. Now the first worker to need one makes
it under a lock (a file in a directory of the run's own) and the others copy it.
`make test`'s controller process names the run (`DIFFUSION_TEST_RUN`, inherited by its
workers) and removes what the run made when it ends (`clean_up`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

RUN_VARIABLE = "DIFFUSION_TEST_RUN"


def name_the_run() -> None:
    """Called by the controller before its workers start (they inherit its environment)."""
    os.environ.setdefault(RUN_VARIABLE, uuid.uuid4().hex[:12])


def run_directory() -> Path:
    run = os.environ.get(RUN_VARIABLE) or f"solo{os.getpid()}"
    directory = Path(tempfile.gettempdir()) / f"diffusion-tests-{run}"
    directory.mkdir(exist_ok=True)
    return directory


@contextmanager
def _locked(name: str) -> Iterator[None]:
    with open(run_directory() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def once(name: str, make: Callable[[Path], str]) -> str:
    """`make(directory)`'s answer, made by the first worker that asks, read by the others."""
    record = run_directory() / f"{name}.made"
    with _locked(name):
        if record.exists():
            return record.read_text()
        made = make(run_directory())
        record.write_text(made)
        return made


def remember_database(url: str) -> None:
    """A database the run made, for clean_up to drop."""
    with _locked("databases"):
        listed = run_directory() / "databases.json"
        names = json.loads(listed.read_text()) if listed.exists() else []
        listed.write_text(json.dumps([*names, url]))


def clean_up() -> None:
    """Drop the databases the run made and remove its directory (the controller, at the end)."""
    directory = run_directory()
    listed = directory / "databases.json"
    if listed.exists():
        import psycopg

        for url in json.loads(listed.read_text()):
            admin, _, name = url.rpartition("/")
            with (
                suppress(psycopg.Error),
                psycopg.connect(f"{admin}/postgres", autocommit=True) as connection,
            ):
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    shutil.rmtree(directory, ignore_errors=True)
