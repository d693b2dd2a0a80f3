"""What the Dutch system knows of a player, and what it answers: the input and output types.

Also the colour preference of FIDE C.04.3 A.6, which everything else is decided from.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

Colour = Literal["W", "B"]
Float = Literal["up", "down"]

# Preference strengths (A.6): the order E.2 compares them in.
NONE, MILD, STRONG, ABSOLUTE = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class SwissPlayer:
    """A player before the round is paired.

    `pairing_number` ranks the players at the start (1 = highest rated). `colours` and
    `floats` have one entry per round played so far, None where the player had no game (a
    bye, an absence) or did not float. A pairing-allocated bye is recorded as a downfloat
    (C.04.3 A.4), and `had_bye` is set after one, or after a win by forfeit (C.2).
    """

    id: Hashable
    pairing_number: int
    score: float = 0.0
    colours: tuple[Colour | None, ...] = ()
    opponents: frozenset[Hashable] = frozenset()
    had_bye: bool = False
    floats: tuple[Float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class SwissRound:
    """The pairing of a round: (white id, black id) by board, the bye, and the floats it gives
    (higher score against lower: "down" and "up"; the bye: "down") for the next round's input.
    """

    pairs: tuple[tuple[Hashable, Hashable], ...]
    bye: Hashable | None = None
    floats: tuple[tuple[Hashable, Float], ...] = ()


@dataclass(frozen=True, slots=True)
class Preference:
    """A player's colour preference (A.6): the colour (None: none) and its strength."""

    colour: Colour | None
    strength: int
    difference: int  # whites minus blacks (the colour difference)


def preference(colours: tuple[Colour | None, ...]) -> Preference:
    """A.6: absolute beyond a difference of one or after the same colour twice running;
    strong at a difference of one; mild (alternate) at zero; none before any game."""
    played = [c for c in colours if c is not None]
    difference = played.count("W") - played.count("B")
    if not played:
        return Preference(None, NONE, 0)
    if difference > 1 or difference < -1 or (len(played) >= 2 and played[-1] == played[-2]):
        if difference > 1:
            colour: Colour = "B"
        elif difference < -1:
            colour = "W"
        else:
            colour = "B" if played[-1] == "W" else "W"
        return Preference(colour, ABSOLUTE, difference)
    if difference:
        return Preference("B" if difference > 0 else "W", STRONG, difference)
    return Preference("B" if played[-1] == "W" else "W", MILD, difference)
