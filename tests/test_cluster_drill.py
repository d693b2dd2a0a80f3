"""The cluster drill end to end, small (`python -m devtools cluster`, docs/DEPLOY.md): the site
on nine hosts behind nginx, PgBouncer, Sentinel and a synchronous standby, with players
through the proxy (one table of them the Node.js players) while a web host is cut off and the
PostgreSQL primary is lost. The full drill (1,000 players and every fault) is a command of its
own; this checks that it runs and that its figures are read from what happened."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sqlite(reason="runs PostgreSQL and Redis of its own: once")

ROOT = Path(__file__).resolve().parents[1]


def test_players_through_the_proxy_live_through_a_web_host_cut_and_the_primary_lost() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    drill = subprocess.Popen(
        [sys.executable, "-m", "devtools", "cluster", "--tables", "3", "--spectators", "1",
         "--gap", "10", "--faults", "web,postgres"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        output, _ = drill.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        # A ^C, not a kill: the drill takes its hosts and servers down before it ends.
        drill.send_signal(signal.SIGINT)
        output, _ = drill.communicate(timeout=120)
        pytest.fail(f"the drill did not end within 600 s:\n{output[-4000:]}")
    # The time goals are the drill's to judge (a figure of a loaded machine, not a test's):
    # the command ends in error when one is missed, and for no other reason here.
    assert drill.returncode == 0 or "a figure missed its goal" in output, output[-4000:]
    figures = re.findall(
        r"every game played again within ([\d.inf]+) s .*?(\d+) moves acknowledged .*? lost (\d+),"
        r" move events a socket never got (\d+), tracebacks (\d+)",
        output,
    )
    assert len(figures) == 2, output  # one line for each fault
    for seconds, moves, lost, missed, tracebacks in figures:
        assert 0 < float(seconds) < float("inf") and int(moves) > 0, output
        assert (lost, missed, tracebacks) == ("0", "0", "0"), output
    # Every process went through PgBouncer: PostgreSQL saw no more than its pool.
    (connections,) = re.findall(r"PostgreSQL client connections at the end: (\d+)", output)
    assert int(connections) <= 20
    assert "undocumented frames 0" in output
    # One of the three tables was the Node.js players' (the drill's second checker): they
    # played, and every frame their sockets received matched docs/protocol.schema.json.
    (node,) = re.findall(
        r"of which the Node.js players' .*?, 1 tables: moves acknowledged (\d+), frames checked"
        r" against docs/protocol.schema.json (\d+), undocumented frames (\d+), games that failed"
        r" (\d+)",
        output,
    )
    acked, frames, undocumented, failed = map(int, node)
    assert acked > 0 and frames > acked and (undocumented, failed) == (0, 0), output


def test_a_fault_s_figure_is_the_longest_wait_less_the_harness_s_pause_between_games() -> None:
    from devtools.management.commands.cluster import _between_games, _longest_waits

    # Table 1 moves at 9, 11, then its game ends (last events, closing) from 12 to 16, its next
    # game's sockets open at 16 and it moves at 19, 21 and 26. Table 2 moves once, at 9.
    acked = [(9.0, 1), (11.0, 1), (19.0, 1), (21.0, 1), (26.0, 1), (9.0, 2)]
    traced = [
        (12.0, 1, "letting the last events arrive"),
        (14.0, 1, "closing its sockets"),
        (16.0, 1, "opening its sockets"),
    ]
    pauses = _between_games(traced)
    assert pauses == {1: [(12.0, 16.0)]}
    waits = _longest_waits(acked, {1, 2}, at=10.0, until=25.0, pauses=pauses)
    # 11 -> 19 is 8 s less the 4 s pause: 4 s; 21 -> 26 (a wait the window's end cuts through,
    # counted to its end) is 5 s, the longest.
    assert waits[1] == (5.0, 21.0)
    assert waits[2][0] == float("inf")  # never moved in the window
    assert _longest_waits(acked, {1}, at=10.0, until=25.0)[1] == (8.0, 11.0)


def test_the_drill_shows_the_end_of_the_first_traceback_a_process_logged() -> None:
    from devtools.cluster.drill import traceback_end

    log = (
        "INFO started\n"
        "ERROR Exception inside application: boom\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in outer\n'
        "    inner()\n"
        '  File "b.py", line 2, in inner\n'
        "    raise OperationalError('pool full')\n"
        "django.db.utils.OperationalError: pool full\n"
        "INFO next request\n"
        "Traceback (most recent call last):\n"
        "ValueError: a later one\n"
    )
    assert traceback_end(log).splitlines() == [
        '  File "a.py", line 1, in outer',
        "    inner()",
        '  File "b.py", line 2, in inner',
        "    raise OperationalError('pool full')",
        "django.db.utils.OperationalError: pool full",
    ]
    assert (
        traceback_end(log, lines=2).splitlines()[-1]
        == "django.db.utils.OperationalError: pool full"
    )
    assert traceback_end(log, lines=2).splitlines()[0] == '  File "b.py", line 2, in inner'
    assert traceback_end("INFO all well\n") == ""
