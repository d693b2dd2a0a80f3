"""The analysis board's benchmarks (devtools/analysisbench.py); each prints its figures.

python -m devtools analysisbench review [SLUG ...] [--plies 100]
python -m devtools analysisbench throughput [SLUG ...] [--ms 1000] [--positions 10]
python -m devtools analysisbench load [--analyses 20] [--games 100] [--procs 2]
    [--seconds 30]
"""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from devtools import analysisbench


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("mode", choices=["review", "throughput", "load"])
        parser.add_argument("slugs", nargs="*", default=analysisbench.GAMES)
        parser.add_argument("--plies", type=int, default=100)
        parser.add_argument("--level", type=int, default=0, help="games played by this level")
        parser.add_argument("--ms", type=float, default=1000.0)
        parser.add_argument("--positions", type=int, default=10)
        parser.add_argument("--analyses", type=int, default=20)
        parser.add_argument("--games", type=int, default=100)
        parser.add_argument("--procs", type=int, default=2)
        parser.add_argument("--seconds", type=float, default=30.0)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--runs", type=int, default=3, help="load: pairs of runs")

    def handle(self, *args: Any, **options: Any) -> None:
        say = self.stdout.write
        mode = options["mode"]
        if mode == "throughput":
            analysisbench.throughput(
                options["slugs"], options["ms"], options["positions"], options["seed"], say
            )
            return
        call_command("migrate", verbosity=0)
        if mode == "review":
            analysisbench.review(
                options["slugs"], options["plies"], options["seed"], options["level"], say
            )
        else:
            load = ["--games", str(options["games"]), "--procs", str(options["procs"])]
            load += ["--seconds", str(options["seconds"]), "--seed", str(options["seed"])]
            analysisbench.load(options["analyses"], load, options["seed"], options["runs"], say)
