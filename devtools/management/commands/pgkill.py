"""How long requests wait after the database's sessions are killed; prints its figures.

    python -m devtools pgkill [--kills 15] [--watch 4]

Starts one server process on this environment's PostgreSQL (its sessions named so that only
they are killed), warms its pool with requests for a game, then `--kills` times: kills every
session of the server and requests the game's API page every 20 ms for `--watch` seconds.
Figures: per kill, when the first answer 200 came and the slowest request; overall the
worst and the median first success, and the answers other than 200 (a request that met a
dead connection answers 503 `unavailable`).
"""

from __future__ import annotations

import os
import secrets
import statistics
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from devtools.servers import start_servers, stop_servers
from games.services import create_game

NAME = "diffusion-pgkill"


class Command(BaseCommand):
    help = "Requests after a kill of the server's database sessions: first success, slowest."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--kills", type=int, default=15)
        parser.add_argument("--watch", type=float, default=4.0)

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        if not database["ENGINE"].endswith("postgresql"):
            raise CommandError("Set DATABASE_URL to a PostgreSQL database.")
        run = secrets.token_hex(3)
        first = User.objects.create_user(f"pk{run}a", password=None)
        second = User.objects.create_user(f"pk{run}b", password=None)
        game = create_game(slug="diffusion", options={}, player1=first, player2=second)
        # The server's sessions carry NAME: only they are killed.
        os.environ["DATABASE_URL"] = _with_application_name(database)
        os.environ["API_REQUESTS_PER_CLIENT"] = "1000000/m"
        servers = start_servers(1)
        page = f"http://127.0.0.1:{servers[0].port}/api/games/{game.pk}"
        admin = psycopg.connect(
            host=database["HOST"] or "127.0.0.1",
            port=database["PORT"] or 5432,
            user=database["USER"],
            dbname=database["NAME"],
            autocommit=True,
        )
        firsts: list[float] = []
        answers: Counter[int] = Counter()
        try:
            for _ in range(options["kills"]):
                for _ in range(20):  # the pool's connections are in use, then idle
                    _get(page)
                row = admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = %s",
                    [NAME],
                ).fetchone()
                killed_at = time.monotonic()
                success, slowest = None, 0.0
                while time.monotonic() - killed_at < options["watch"]:
                    started = time.monotonic()
                    status = _get(page)
                    slowest = max(slowest, time.monotonic() - started)
                    answers[status] += 1
                    if status == 200 and success is None:
                        success = time.monotonic() - killed_at
                    time.sleep(0.02)
                firsts.append(success if success is not None else float("inf"))
                self.stdout.write(
                    f"killed {row[0] if row else 0} session(s): first 200 after "
                    f"{firsts[-1]:.3f} s, slowest request {slowest:.3f} s"
                )
        finally:
            stop_servers(servers)
            admin.close()
        self.stdout.write(
            f"first success after a kill: max {max(firsts):.3f} s, median "
            f"{statistics.median(firsts):.3f} s over {len(firsts)} kills; answers {dict(answers)}"
        )


def _with_application_name(database: dict[str, Any]) -> str:
    user, host = database["USER"], database["HOST"] or "127.0.0.1"
    port, name = database["PORT"] or 5432, database["NAME"]
    return f"postgres://{user}@{host}:{port}/{name}?application_name={NAME}"


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)
