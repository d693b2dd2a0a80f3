"""The fault-injection suite's quick form (`python -m devtools chaos --quick --untimed`): every
part of it, with small counts, against two real server processes, judged on what held (nothing
lost, every close and refusal as documented, every client current again) and not on how fast,
since the rest of the suite shares the machine; `make chaos` runs the full counts and judges
the time limits too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT, scratch_database

pytestmark = [
    pytest.mark.postgres(reason="the suite kills PostgreSQL sessions"),
    pytest.mark.redis,
]

PARTS = (
    "frames fuzzed",
    "random protocol requests",
    "floods",
    "login guessing",
    "logout",
    "idle sockets",
    "Redis kill -9",
    "PostgreSQL backend kills",
    "server process kill -9",
    "acknowledged moves under the faults",
    "tracebacks in the servers' logs",
)


def test_every_part_of_the_quick_fault_injection_suite_passes(tmp_path: Path) -> None:
    with scratch_database(tmp_path) as url:
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": "devtools.settings",
            "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
            # Beside the rest of the suite: its floods would grow each server's pool to the
            # production 20, and with the other tests' servers PostgreSQL's 100 connections
            # ran out.
            "DATABASE_POOL_MAX": "8",
        }
        env.pop("REDIS_URL", None)
        done = subprocess.run(
            [sys.executable, "-m", "devtools", "chaos", "--quick", "--untimed"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    output = done.stdout + done.stderr
    print(output)
    verdicts = {line.split(":", 1)[0] for line in done.stdout.splitlines() if line.endswith("PASS")}
    missing = [part for part in PARTS if not any(v.startswith(part) for v in verdicts)]
    assert done.returncode == 0, output[-4000:]
    assert not missing, f"parts that did not pass: {missing}\n{output[-4000:]}"
    assert "FAIL" not in done.stdout
