#!/usr/bin/env python3
"""The smallest engine for docs/BOTS.md's protocol: it plays a random move of the `moves` line.

    python diffusion_bot.py --engine "python random_engine.py"

Read lines from stdin; answer each `go` with `move <move>`; stop at `quit` (or end of input).
A real engine would read the `game` and `position` lines too, and think.
"""

import random
import sys


def main() -> None:
    moves: list[str] = []
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "moves":
            moves = rest.split()
        elif command == "go":
            # Flush: the bot waits for this line while the engine's output sits in a buffer.
            print("move", random.choice(moves), flush=True)
        elif command == "quit":
            return
        # `game` and `position` lines: this engine needs nothing but the moves.


if __name__ == "__main__":
    main()
