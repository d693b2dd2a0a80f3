"""The site's computer as an outside engine: docs/BOTS.md's text protocol on stdin and stdout.

    python -m devtools engine --level 3
    python examples/bot/diffusion_bot.py --engine "python -m devtools engine --level 3"

It thinks with the same search, levels and per-game policies as the bots worker plays the
site's Computer-1 to Computer-5 with (bots/search), on the position the `position` line
spells (games/rules/notation.py), within the level's own time limit and a share of the clock
the `go` line gives, as the worker does. Neither the search nor the rules need Django, and
this module imports none of it: `python -m devtools engine` starts it without setting Django
up (devtools/__main__.py), so that a bot starting an engine per game waits a tenth of a
second for it, not two.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from typing import Any, TextIO

from bots.search import think
from games.engine import rules_for
from games.rules.base import Refusal
from games.rules.notation import parse_position


def clock_share(mine: str) -> float | None:
    """How long one answer may think on `mine` milliseconds left (`-`: untimed, the level's
    own limit): a thirtieth of it, a fifteenth when under 10 s, as the worker's share of a
    real-time clock without the increment (the protocol does not give it)."""
    if not mine.isdigit():
        return None
    left = int(mine)
    share = left / 30 if left >= 10_000 else left / 15
    return max(10.0, share)


class Engine:
    """One game's engine: the lines in, the moves out."""

    def __init__(self, level: int, out: TextIO) -> None:
        self.level = level
        self.out = out
        self.rules: Any = None
        self.position = ""

    def say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def handle(self, line: str) -> bool:
        """One line of the protocol; False at `quit`."""
        command, _, rest = line.strip().partition(" ")
        if command == "game":
            slug, _, options = rest.partition(" ")
            try:
                self.rules = rules_for(slug, json.loads(options or "{}"))
            except (ValueError, TypeError) as error:
                self.say(f"info error: no game {slug!r:.40} with these options: {error}")
                self.rules = None
        elif command == "position":
            self.position = rest.strip()
        elif command == "go":
            self.go(rest.split())
        elif command == "quit":
            return False
        elif command not in ("moves", ""):
            self.say(f"info error: unknown command {command!r:.40}")
        return True

    def go(self, clocks: list[str]) -> None:
        if self.rules is None or not self.position:
            self.say("info error: `game` and `position` come before `go`")
            return
        try:
            state = parse_position(self.rules, self.position)
            # The same position gets the same answer, as the site's computer's seeds do.
            seed = zlib.crc32(self.position.encode())
            choice = think(
                self.rules,
                state,
                self.level,
                seed=seed,
                max_ms=clock_share(clocks[0] if clocks else "-"),
            )
        except (Refusal, ValueError) as error:
            self.say(f"info error: {error}")
            return
        self.say(f"info playouts {choice.playouts} ms {choice.ms:.0f}")
        self.say(f"move {choice.move}")


def run(level: int, lines: TextIO, out: TextIO) -> None:
    """Answer the protocol's lines until `quit` or the end of the input."""
    engine = Engine(level, out)
    for line in lines:
        if not engine.handle(line):
            return


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools engine", description=__doc__)
    parser.add_argument("--level", type=int, choices=range(1, 6), default=3, help="1 to 5")
    run(parser.parse_args(argv).level, sys.stdin, sys.stdout)
