"""`python -m devtools gamesearchbench` fills a database with generated finished games, prints
the index each kind of query reads and times them through the API and the page
(docs/PERFORMANCE.md, "The game database"): here with a few thousand games."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT, scratch_database

pytestmark = pytest.mark.postgres(reason="the benchmark fills PostgreSQL with COPY")

ROW = re.compile(r"^(?P<kind>[a-z ,'()]+?)\s+(?P<n>\d+)\s+(?P<p50>[\d.]+)\s+(?P<p99>[\d.]+)", re.M)


def test_gamesearchbench_generates_games_and_times_every_kind_of_query(tmp_path: Path) -> None:
    with scratch_database(tmp_path) as url:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "devtools", "gamesearchbench"),
                *("--games", "3000", "--players", "300", "--queries", "28"),
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": url,
                "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    out = done.stdout
    assert "3,000 finished games, 300 players" in out, out
    # No kind of query reads the whole table: each names an index of the game database.
    plans = out.split("kind of query: the plan's indexes\n", 1)[1].split("kind of query ", 1)[0]
    assert plans.count("played_") >= 14 and "SEQ SCAN" not in plans, plans
    timed = {m["kind"].strip(): float(m["p99"]) for m in ROW.finditer(out)}
    assert {"everything", "a player", "a game and option set", "a week"} <= set(timed), out
    assert all(value > 0 for value in timed.values()), out
    assert re.search(r"every query: API p99 [\d.]+ ms, page p99 [\d.]+ ms", out), out
