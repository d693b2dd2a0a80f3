"""python -m devtools explorerbench: the opening explorer built from a database of generated
finished games with their moves (devtools/gamesdb.py), then looked up as the API answers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/explorerdb \\
        python -m devtools explorerbench --games 1000000 --lookups 5000

The database is migrated and filled up to --games generated games, each playing a line of a
pool played by the rules (--lines per variant), its players rated. Then (unless --no-build)
the explorer is rebuilt the way an operator rebuilds it: `manage.py explorer --rebuild`, then
--processes more `manage.py explorer` at once (they share the games through SKIP LOCKED);
every 10 s it prints the games counted and each process's resident memory, which must not
grow with the games. Then --lookups positions, each a generated game's position after 0 to
50 moves, are asked for through GET /api/explorer with a random filter; prints p50/p99/max.
The issue's figures: bounded memory, lookup p99 <= 20 ms.
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client

from analysis import explorer
from analysis.models import ExplorerMove
from config.serve import GC_THRESHOLDS
from devtools import gamesdb
from devtools.servers import percentile
from games.engine import rules_for
from games.models import PlayedGame, PlayedMoves
from games.rules.notation import position_text


class Command(BaseCommand):
    help = "Build the opening explorer from a million generated games and time its lookups."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=1_000_000)
        parser.add_argument("--players", type=int, default=20_000)
        parser.add_argument("--lines", type=int, default=100_000, help="lines per variant")
        parser.add_argument("--lookups", type=int, default=5000)
        parser.add_argument("--processes", type=int, default=2, help="builders at once")
        parser.add_argument("--no-build", action="store_true", help="time the lookups only")
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("Set DATABASE_URL to a PostgreSQL database (production's).")
        call_command("migrate", verbosity=0)
        self._fill(options["games"], options["players"], options["lines"], options["seed"])
        if not options["no_build"]:
            self._build(options["processes"])
        self._lookups(options["lookups"], options["seed"])

    def line(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _fill(self, games: int, players: int, lines: int, seed: int) -> None:
        have = PlayedMoves.objects.count()
        if have >= games:
            self.line(f"{have:,} finished games with their moves in the database already")
            return
        if PlayedGame.objects.filter(seat=1).count() > have:
            raise CommandError("this database has games without moves: use a new one")
        began = time.monotonic()
        ids = gamesdb.make_players(players)
        gamesdb.make_ratings(ids, seed)
        pool = gamesdb.line_pool(lines, seed)
        self.line(
            f"  {lines:,} lines for each of {len(pool)} variants played in "
            f"{time.monotonic() - began:.0f} s"
        )
        for done in gamesdb.generate(games - have, ids, seed + have, pool=pool):
            self.line(f"  generated {done:,} games ({done / (time.monotonic() - began):,.0f}/s)")
        del pool
        with connection.cursor() as cursor:
            for table in ("games_playedgame", "games_playedmoves", "ratings_rating"):
                cursor.execute(f"VACUUM ANALYZE {table}")
        self.line(f"{games:,} finished games in {time.monotonic() - began:.0f} s")

    def _build(self, processes: int) -> None:
        """`manage.py explorer --rebuild`, then more builders beside it, as an operator would
        run them; their memory sampled from /proc as they go."""
        environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "devtools.settings"}
        command = [sys.executable, "manage.py", "explorer"]
        root = Path(settings.BASE_DIR)
        began = time.monotonic()
        first = subprocess.Popen(
            [*command, "--rebuild"], cwd=root, env=environment, stdout=subprocess.DEVNULL
        )
        time.sleep(3)  # the rebuild's forgetting goes first: the others count after it
        builders = [first] + [
            subprocess.Popen(command, cwd=root, env=environment, stdout=subprocess.DEVNULL)
            for _ in range(processes - 1)
        ]
        peaks = {builder.pid: 0.0 for builder in builders}
        total = PlayedMoves.objects.count()
        while any(builder.poll() is None for builder in builders):
            time.sleep(10)
            memory = {builder.pid: _resident_mb(builder.pid) for builder in builders}
            for pid, mb in memory.items():
                peaks[pid] = max(peaks[pid], mb)
            counted = PlayedMoves.objects.filter(explored=True).count()
            self.line(
                f"  {time.monotonic() - began:6.0f} s: {counted:,} of {total:,} games counted; "
                "resident MB " + ", ".join(f"{mb:.0f}" for mb in memory.values())
            )
        failed = [builder.returncode for builder in builders if builder.returncode]
        if failed:
            raise CommandError(f"a builder failed: exit codes {failed}")
        took = time.monotonic() - began
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE analysis_explorermove")
            cursor.execute("SELECT pg_total_relation_size('analysis_explorermove')")
            size = cursor.fetchone()[0]
        rows = ExplorerMove.objects.count()
        self.line(
            f"built: {total:,} games in {took:.0f} s ({total / took:,.0f} games/s) by "
            f"{processes} processes; {rows:,} rows, {size / 2**20:,.0f} MB with the index; "
            f"peak resident memory per builder {max(peaks.values()):.0f} MB"
        )

    def _lookups(self, count: int, seed: int) -> None:
        rng = random.Random(seed)
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        settings.API_REQUESTS_PER_CLIENT = "1000000/m"
        ids = PlayedMoves.objects.values_list("game_id", flat=True)
        low, high = ids.order_by("game_id")[0], ids.order_by("-game_id")[0]
        asks: list[dict[str, str]] = []
        while len(asks) < count:
            picked = list(
                PlayedMoves.objects.filter(game_id__gte=rng.randint(low, high))
                .order_by("game_id")
                .values_list("game_id", "moves")[:1]
            )
            if not picked:
                continue
            game, moves = picked[0]
            row = PlayedGame.objects.get(game_id=game, seat=1)
            options = explorer.options_of(row.options)
            rules = rules_for(row.slug, options)
            state = rules.initial_state()
            for move in moves.split()[: rng.randint(0, explorer.PLIES)]:
                state = rules.play(state, move)
            params = {"game": row.slug, "options": row.options}
            params["position"] = position_text(rules, state)
            shape = rng.random()
            if shape < 0.3:
                params["ratings"] = str(rng.choice(explorer.BANDS))
            elif shape < 0.5:
                params["ratings"] = ",".join(map(str, rng.sample(explorer.BANDS, 2)))
                params["speeds"] = rng.choice(list(explorer.SPEEDS))
            asks.append(params)
        client = Client()
        for params in asks[:50]:  # warm: the first request's imports
            client.get("/api/explorer", params)
        gc.set_threshold(*GC_THRESHOLDS)
        times, found = [], 0
        for params in asks:
            began = time.perf_counter()
            answer = client.get("/api/explorer", params)
            times.append((time.perf_counter() - began) * 1000)
            if answer.status_code != 200:
                raise CommandError(f"{params}: {answer.status_code} {answer.content[:300]!r}")
            found += bool(answer.json()["moves"])
        p99 = percentile(times, 0.99)
        self.line(
            f"{count:,} lookups ({found:,} found moves): p50 {percentile(times, 0.5):.1f} ms, "
            f"p99 {p99:.1f} ms, max {max(times):.1f} ms (goal p99 20 ms): "
            f"{'met' if p99 <= 20 else 'NOT met'}"
        )


def _resident_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
