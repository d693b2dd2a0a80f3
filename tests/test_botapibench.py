"""`python -m devtools botapibench` with small counts (4 bots, 2 games, 2 processes): every
move POSTed reaches both players' streams in order, none lost, and the same games over sockets
are measured beside them. Judged on what held, never on time (--untimed): the suite shares
the machine; the full counts are the benchmark's own (docs/PERFORMANCE.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_redis
from tests.servers import ROOT, SMALL_POOLS, migrated_scratch_database, on_postgresql

pytestmark = [
    pytest.mark.postgres(
        reason="the bench's two server processes share one database: PostgreSQL, with Redis"
    ),
]


def test_a_small_botapibench_loses_nothing_and_measures_both_paths(tmp_path: Path) -> None:
    assert on_postgresql(), "run it with DATABASE_URL pointing at PostgreSQL"
    with migrated_scratch_database(tmp_path) as url:
        env = {
            **SMALL_POOLS,
            **os.environ,
            "DATABASE_URL": url,
            "REDIS_URL": require_redis(),
            "CHANNEL_LAYER_PREFIX": f"botapibench-{tmp_path.name}",
            "DJANGO_SETTINGS_MODULE": "devtools.settings",
            "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
        }
        small = ["--bots", "4", "--procs", "2", "--seconds", "3", "--settle", "1", "--rate", "2"]
        done = subprocess.run(
            [sys.executable, "-m", "devtools", "botapibench", *small, "--untimed"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "lost 0  out of order 0  errors 0" in done.stdout, output[-4000:]
    assert "game_start lines 4" in done.stdout, output[-4000:]
    assert (
        "websockets (loadtest" in done.stdout
        and "CPU per move, Bot API / websockets" in done.stdout
    )
    assert "every figure met" in done.stdout
