"""`python -m devtools browsercost` prints the CPU a context and a navigation cost in each of
Debian's Chromium builds (docs/PERFORMANCE.md: why the browser tests drive the headless shell)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.browser

LINE = re.compile(
    r"(?P<build>headless shell|whole browser) \(/usr/bin/[a-z-]+\): a new context with a page "
    r"(?P<context>\d+) ms of CPU \(\d+ ms wall, 2 of them\); a navigation (?P<navigation>\d+) "
    r"ms of CPU \(2 of them\)"
)


def test_browsercost_measures_a_context_and_a_navigation_in_both_builds() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "devtools", "browsercost", "--contexts", "2", "--navigations", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = {m["build"]: m for m in LINE.finditer(done.stdout)}
    assert set(found) == {"headless shell", "whole browser"}, done.stdout
    # A new context starts a renderer process: never free.
    assert all(int(m["context"]) > 0 for m in found.values()), done.stdout
