"""Arena tournaments, as lichess runs them: pairing whoever is waiting, and the streak scoring.

Pairing (lichess: modules/tournament/src/main/arena/PairingSystem.scala, AntmaPairing.scala).
Lichess matches the waiting players by minimum weight, the weight of a pair being its rank gap
(weighted more at the top) plus its rating gap, and refuses a pair who just played each other.
We keep those rules with an O(n log n) method in place of the weighted matching, since a wave
can hold 1,000 players: sort by score, then rating (the standings order, so the leaders meet
each other), and pair neighbours. A player whose neighbour was his last opponent takes the
next one down instead; when only the last opponent is left, the pair is undone by swapping
partners with the pair above. Two players who are the only ones waiting may meet again: as on
lichess, where a tournament down to two active players pairs them, waiting would stall them.

Colours (lichess ColorHistory): white to the one who has had white less often, and between
equals to the one who had black more recently.

Scoring (lichess arena/Sheet.scala): a win is 2, a draw 1, a loss 0. After two wins in a row a
player is "on fire": while on fire a win scores 4 and a draw 2. Any result other than a win
puts the fire out, so a draw while on fire scores 2 and the next game is back to normal.
(Lichess also adds a point for a berserk win and scores nothing for a quick draw; our games
have no berserk and no quick-draw rule, so neither is here.)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from tournaments.pairing.errors import PairingError

Colour = Literal["white", "black"]
Result = Literal["win", "draw", "loss"]

POINTS = {"win": 2, "draw": 1, "loss": 0}
# On fire, every result counts double (a loss: still nothing).
ON_FIRE_FACTOR = 2
# How far down the list a player looks for someone other than his last opponent before the
# swap with the pair above; two is enough when the rule is the only thing refusing a pair.
LOOK_AHEAD = 2


@dataclass(frozen=True, slots=True)
class ArenaPlayer:
    """A waiting player: his score (for the standings order), rating, last opponent and the
    colours of his games so far, oldest first."""

    id: Hashable
    rating: int
    score: int = 0
    last_opponent: Hashable | None = None
    colours: tuple[Colour, ...] = ()


@dataclass(frozen=True, slots=True)
class ArenaWave:
    """The games of one wave, (white id, black id), best-placed first; and who waits on."""

    pairs: tuple[tuple[Hashable, Hashable], ...]
    unpaired: tuple[Hashable, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoreSheet:
    """A player's arena score: the total, each game's points and whether he is on fire now."""

    total: int
    points: tuple[int, ...]
    on_fire: bool


def score_sheet(results: Iterable[Result]) -> ScoreSheet:
    """Score a player's games in the order played (lichess arena points, with the streak)."""
    points: list[int] = []
    wins_in_a_row = 0
    for result in results:
        scored, wins_in_a_row = next_points(wins_in_a_row, result)
        points.append(scored)
    return ScoreSheet(total=sum(points), points=tuple(points), on_fire=wins_in_a_row >= 2)


def next_points(wins_in_a_row: int, result: Result) -> tuple[int, int]:
    """One more game: (the points it scores, the wins in a row after it). A tournament keeps
    the wins in a row of each player and counts each game as it ends."""
    if result not in POINTS:
        raise PairingError(f"a result is 'win', 'draw' or 'loss', not {result!r:.20}")
    on_fire = wins_in_a_row >= 2
    scored = POINTS[result] * (ON_FIRE_FACTOR if on_fire else 1)
    return scored, wins_in_a_row + 1 if result == "win" else 0


def pair_wave(waiting: Sequence[ArenaPlayer]) -> ArenaWave:
    """Pair the waiting players: close in the standings, never a rematch of the last game
    while anyone else is free, colours balanced. An odd one out (the lowest placed who cannot
    be fitted) waits for the next wave."""
    if len({p.id for p in waiting}) != len(waiting):
        raise PairingError("a player is waiting twice")
    if len(waiting) == 2:
        # Alone together: they meet even if they just did (see the module's docstring).
        return ArenaWave((_colours(waiting[0], waiting[1]),))
    free = sorted(waiting, key=lambda p: (-p.score, -p.rating))
    pairs: list[tuple[ArenaPlayer, ArenaPlayer]] = []
    unpaired: list[ArenaPlayer] = []
    i = 0
    # `free` is walked once; a partner taken from a little further down is removed from it.
    while i < len(free):
        player = free[i]
        reach = range(i + 1, min(i + 1 + LOOK_AHEAD, len(free)))
        partner_at = next((j for j in reach if not _just_met(player, free[j])), None)
        swapped = (
            _swap(pairs[-1], player, free[i + 1])
            if partner_at is None and i + 1 < len(free) and pairs
            else None
        )
        if partner_at is not None:
            pairs.append((player, free.pop(partner_at)))
        elif swapped is not None:
            # Only his last opponent left within reach: exchange partners with the pair above.
            pairs[-1:] = swapped
            free.pop(i + 1)
        else:
            unpaired.append(player)
        i += 1
    return ArenaWave(tuple(_colours(a, b) for a, b in pairs), tuple(p.id for p in unpaired))


def _just_met(a: ArenaPlayer, b: ArenaPlayer) -> bool:
    return a.last_opponent == b.id or b.last_opponent == a.id


Pair = tuple[ArenaPlayer, ArenaPlayer]


def _swap(pair: Pair, a: ArenaPlayer, b: ArenaPlayer) -> tuple[Pair, Pair] | None:
    """The pair (x, y) and the players a, b regrouped into two pairs that have not just met,
    keeping x with the closer of the two; None when neither regrouping is allowed."""
    x, y = pair
    for first, second in ((a, b), (b, a)):
        if not _just_met(x, first) and not _just_met(y, second):
            return (x, first), (y, second)
    return None


def _colours(a: ArenaPlayer, b: ArenaPlayer) -> tuple[Hashable, Hashable]:
    """(white, black): white to who had it less; if even, to who had black more recently; if
    that is even too, to the better placed (a), as lichess tosses a coin there."""
    balance_a, balance_b = _balance(a.colours), _balance(b.colours)
    if balance_a != balance_b:
        return (a.id, b.id) if balance_a < balance_b else (b.id, a.id)
    streak_a, streak_b = _streak(a.colours), _streak(b.colours)
    return (b.id, a.id) if streak_b < streak_a else (a.id, b.id)


def _balance(colours: tuple[Colour, ...]) -> int:
    return sum(1 if c == "white" else -1 for c in colours)


def _streak(colours: tuple[Colour, ...]) -> int:
    """Lichess's colour strike: +k after k whites in a row, -k after k blacks, 0 unplayed."""
    if not colours:
        return 0
    last = colours[-1]
    run = len(colours) - next(
        (i + 1 for i in range(len(colours) - 1, -1, -1) if colours[i] != last), 0
    )
    return run if last == "white" else -run
