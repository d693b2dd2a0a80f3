"""Round robin by the FIDE Berger tables (FIDE Handbook C.05, Annex 1).

Players are numbers 1..n; the caller maps seeds (drawn or by rating) to numbers. With an odd
n the tables of n + 1 are used and whoever meets the "dummy" n + 1 has the bye that round.

The tables follow one rule, which is what lets us compute rather than store them: player n
(the last) stays on board 1 and alternates colours; the others rotate. In round r the player
facing n is p = ((r - 1) * n/2 mod (n - 1)) + 1, white in odd rounds and black in even ones,
and board k pairs p + k (white) against p - k (black), counted round 1..n-1.
"""

from __future__ import annotations

from dataclasses import dataclass

from tournaments.pairing.errors import PairingError

# Tables for more players than this are no round robin anyone plays; it bounds the work.
MAX_PLAYERS = 1000


@dataclass(frozen=True, slots=True)
class RoundRobinRound:
    """One round: (white, black) pairs by board, and who sits out (odd n only)."""

    number: int
    pairs: tuple[tuple[int, int], ...]
    bye: int | None = None


def berger_table(players: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The FIDE Berger table for an even number of players, as published: rounds of boards."""
    if players < 2 or players % 2 or players > MAX_PLAYERS:
        raise PairingError(
            f"a Berger table needs an even number of players from 2 to {MAX_PLAYERS}"
        )
    n = players
    ring = n - 1  # everyone but n rotates on a ring of n - 1 places

    def on_ring(number: int) -> int:
        return (number - 1) % ring + 1

    table = []
    for r in range(1, n):
        p = (r - 1) * (n // 2) % ring + 1
        first = (p, n) if r % 2 else (n, p)
        boards = [first] + [(on_ring(p + k), on_ring(p - k)) for k in range(1, n // 2)]
        table.append(tuple(boards))
    return tuple(table)


def round_robin(players: int, *, double: bool = False) -> tuple[RoundRobinRound, ...]:
    """Every round of a round robin of `players` (numbered 1..n), by the Berger tables.

    Odd n: the tables of n + 1, the game against n + 1 becoming that player's bye. With
    `double`, a second cycle repeats the first with colours reversed, so every pair meets once
    with each colour.
    """
    if players < 2 or players > MAX_PLAYERS:
        raise PairingError(f"a round robin needs from 2 to {MAX_PLAYERS} players, not {players}")
    dummy = players + 1 if players % 2 else None
    table = berger_table(dummy or players)
    cycle = []
    for pairs in table:
        bye = next((a if b == dummy else b for a, b in pairs if dummy in (a, b)), None)
        games = tuple(pair for pair in pairs if dummy not in pair)
        cycle.append((games, bye))
    if double:
        cycle += [(tuple((b, a) for a, b in games), bye) for games, bye in cycle]
    return tuple(
        RoundRobinRound(number, games, bye) for number, (games, bye) in enumerate(cycle, start=1)
    )
