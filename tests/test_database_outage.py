"""PostgreSQL's sessions killed under a running server: requests during the failure answer
`unavailable` (a JSON 503 over HTTP, an error frame on a socket), never a traceback, and
requests succeed again. How soon (within 2 s) is a figure of the fault-injection suite's full
run (`make chaos`, docs/SECURITY.md), not of this test, which shares the machine with the
rest of the suite."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websockets
from django.db import connection

from tests.games_helpers import new_game, session_for
from tests.servers import daphnes, shared_test_env

pytestmark = [
    pytest.mark.postgres(reason="kills PostgreSQL sessions"),
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

KILLS = 5
WATCHED = 1.0  # seconds of requests after each kill, at least
RECOVERED = 30.0  # seconds: not recovered by then is not recovering

# The application names of each test's server sessions: each test kills only its own.
SERVER = "diffusion-outage-test"
SWEEPER = "diffusion-outage-sweeper"


def kill_the_servers_sessions(name: str = SERVER) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s",
            [name],
        )
        return int(cursor.fetchone()[0])


def get(url: str, cookie: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_killed_database_sessions_answer_unavailable_until_the_server_recovers(
    tmp_path: Path,
) -> None:
    game = new_game()
    cookie = f"sessionid={session_for(game.player1)}"
    shared = shared_test_env(f"pgkill-{game.pk}")
    env = {
        **shared,
        "DATABASE_URL": f"{shared['DATABASE_URL']}?application_name={SERVER}",
        "API_REQUESTS_PER_CLIENT": "100000/m",  # this test polls far faster than people
    }

    async def run(server: Any) -> tuple[list[float], dict[str, int], int]:
        url = f"{server.http}/api/games/{game.pk}"
        socket = await websockets.connect(
            f"{server.ws}/ws/games/{game.pk}/",
            origin=websockets.Origin(server.http),
            additional_headers={"Cookie": cookie},
        )
        await socket.recv()  # the snapshot
        failures: list[float] = []
        answers: dict[str, int] = {}
        recovered = 0
        for _ in range(KILLS):
            assert await asyncio.to_thread(kill_the_servers_sessions) > 0
            killed_at = time.monotonic()
            while time.monotonic() - killed_at < RECOVERED:
                status, _ = await asyncio.to_thread(get, url, cookie)
                # A claim reads the game (and is refused: the opponent is not away).
                await socket.send(json.dumps({"type": "claim", "id": 1}))
                while True:
                    frame = json.loads(await asyncio.wait_for(socket.recv(), 10))
                    if frame.get("id") == 1:
                        break
                for outcome in (str(status), frame.get("code", frame["type"])):
                    answers[outcome] = answers.get(outcome, 0) + 1
                if status == 503 or frame.get("code") == "unavailable":
                    failures.append(time.monotonic() - killed_at)
                elif time.monotonic() - killed_at >= WATCHED:
                    recovered += 1  # both answered: on to the next kill
                    break
                await asyncio.sleep(0.05)
        await socket.close()
        return failures, answers, recovered

    with daphnes(1, env, tmp_path) as (server,):
        failures, answers, recovered = asyncio.run(run(server))
        log = server.output()
    print(f"unavailable answers, seconds after their kill: {[round(at, 2) for at in failures]}")
    assert set(answers) <= {"200", "503", "too_early", "opponent_here", "unavailable"}, answers
    assert recovered == KILLS, (failures, answers)
    assert "Traceback" not in log, log[-3000:]


def test_the_sweeper_outlives_its_database_sessions_being_killed(tmp_path: Path) -> None:
    # It died of the first kill (an unhandled AdminShutdown), leaving every clock unwatched.
    import sys

    from tests.servers import background

    shared = shared_test_env("sweeper-pgkill")
    env = {**shared, "DATABASE_URL": f"{shared['DATABASE_URL']}?application_name={SWEEPER}"}
    log = tmp_path / "sweeper.log"
    command = [sys.executable, "manage.py", "sweeper", "--max-sleep", "0.1"]
    with background(command, env, log) as sweeper:
        deadline = time.monotonic() + 30
        while "watching game clocks" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        killed = 0
        for _ in range(KILLS):
            killed += kill_the_servers_sessions(SWEEPER)
            time.sleep(0.5)
        time.sleep(1.5)
        assert sweeper.poll() is None, log.read_text()[-3000:]
    output = log.read_text()
    assert killed >= KILLS
    # The kills were met: by a query (then answered as an outage), or by the pool's check of a
    # connection before handing it out (the dead ones replaced at once).
    assert "database unreachable" in output or "discarding broken connection" in output
    assert "Traceback" not in output, output[-3000:]
