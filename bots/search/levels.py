"""The five strengths: a budget and a few parameters each, the same search for all."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    """How hard the computer plays.

    `playouts`: search iterations per move, unless the game's policy sets its own.
    `temperature`: 0 plays the most visited move; above 0 the choice is drawn in proportion
    to visits ** (1 / temperature), a way for a low level to make mistakes a beginner can
    punish. `max_ms`: the longest one answer may think, whatever the clock allows
    (Diffusion Chess: a whole turn, planned at its first move).
    """

    number: int
    name: str
    playouts: int
    temperature: float
    max_ms: int
    exploration: float = 1.0


LEVELS: tuple[Level, ...] = (
    Level(1, "Beginner", playouts=25, temperature=0.0, max_ms=300),
    Level(2, "Casual", playouts=100, temperature=0.0, max_ms=500),
    Level(3, "Club", playouts=400, temperature=0.0, max_ms=800),
    Level(4, "Strong", playouts=1200, temperature=0.0, max_ms=1200),
    Level(5, "Expert", playouts=4800, temperature=0.0, max_ms=1800),
)


def level(number: int) -> Level:
    """The level with this number (1 to 5); ValueError otherwise."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 5:
        raise ValueError(f"the levels are 1 to 5, not {number!r:.20}")
    return LEVELS[number - 1]
