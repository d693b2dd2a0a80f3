"""The opening explorer's pure core (docs/EXPLORER.md): which counts a finished game adds.

Every game counts its first PLIES moves: for each, the position before it (a 64-bit hash of
the game, its option set and the engine's `position_key`, so that transpositions merge), the
move, the game's rating band and speed, and how the game went for the player who moved. The
storage (analysis.models.ExplorerMove) adds these up; a lookup sums one position's rows.
No Django here: the service (analysis/exploring.py) reads the games and writes the sums.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from games.rules import IllegalMove, Rules, game_info, get_rules

# The moves of each game that are counted, as lichess's explorer counts the first 50 plies:
# beyond them nearly every position is a game's own, and the explorer would only copy games.
PLIES = 50
# Rating bands, by their lower bound (a game's band is that of its players' mean rating).
BANDS = (0, 1200, 1400, 1600, 1800, 2000, 2200)
# The speeds of games, as stored (games/clocks.py's kinds).
SPEEDS = {"realtime": 1, "correspondence": 2, "untimed": 3}
SPEED_NAMES = {code: name for name, code in SPEEDS.items()}


def variant(slug: str, options: Mapping[str, Any]) -> str:
    """The game and its whole option set, defaults filled in: "zigzag:pits=6,seeds=5". A game
    stored with {} and one stored with its defaults spelled out are the same variant.
    InvalidOptions (saying why) for a game or an option set the site does not have."""
    get_rules(slug, **options)  # the check, with its message for people
    specs = game_info(slug).options
    values = {spec.name: spec.check(options.get(spec.name, spec.default)) for spec in specs}
    if not values:
        return slug
    return slug + ":" + ",".join(f"{name}={values[name]}" for name in sorted(values))


def options_of(key: str) -> dict[str, int]:
    """ "pits=6,seeds=5" (the game database's option key) as a dict."""
    if not key:
        return {}
    return {name: int(value) for name, value in (part.split("=", 1) for part in key.split(","))}


def position_hash(variant_name: str, key: bytes) -> int:
    """A position's 64-bit key, signed to fit a bigint column. Two of the ~10^7 positions a
    million games reach share one with a chance of about 1 in 300,000 (the birthday bound);
    they would only add their counts together."""
    digest = hashlib.blake2b(variant_name.encode() + b"\0" + key, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def band_of(rating: float) -> int:
    """The band (its lower bound) a mean rating falls in."""
    band = BANDS[0]
    for bound in BANDS:
        if rating >= bound:
            band = bound
    return band


@dataclass(frozen=True, slots=True)
class Line:
    """A finished game as the explorer counts it."""

    game: int
    slug: str
    options: dict[str, Any]
    moves: tuple[str, ...]
    winner: int | None  # 1, 2, or None for a draw
    rating: float  # the players' mean rating
    speed: str


# (position, band, speed, move): what one row of the explorer adds up.
Key = tuple[int, int, int, str]


@dataclass(slots=True)
class Counts:
    """One row's sums: games, and how they went for the player who made the move."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    rating_sum: int = 0
    last_game: int = 0

    def add(self, game: int, mover: int, winner: int | None, rating: int) -> None:
        self.games += 1
        if winner is None:
            self.draws += 1
        elif winner == mover:
            self.wins += 1
        else:
            self.losses += 1
        self.rating_sum += rating
        self.last_game = max(self.last_game, game)


@dataclass
class Counted:
    """What a batch of games adds, and the games that could not be counted to the end (a
    move the rules refuse: their earlier moves are counted)."""

    rows: dict[Key, Counts]
    games: int
    cut_short: list[tuple[int, int, str]]  # (game, ply, why)


def count(lines: Iterable[Line], rules_for: Callable[[str, dict[str, Any]], Rules]) -> Counted:
    """The explorer's rows that `lines` add up to. A move already played from the same state
    in this batch is not played again (the openings repeat). Steps are looked up by the state
    itself, not its key: two transposed states may differ in what the rules remember of the
    way (ZigZag's repetitions), which changes what comes later."""
    rows: dict[Key, Counts] = {}
    cut_short: list[tuple[int, int, str]] = []
    steps: dict[tuple[str, Any, str], tuple[Any, int]] = {}
    games = 0
    for line in lines:
        games += 1
        name = variant(line.slug, line.options)
        rules = rules_for(line.slug, line.options)
        band, speed, rating = band_of(line.rating), SPEEDS[line.speed], round(line.rating)
        state = rules.initial_state()
        position = position_hash(name, rules.position_key(state))
        for ply, move in enumerate(line.moves[:PLIES]):
            step = steps.get((name, state, move))
            mover = rules.to_move(state)
            if step is None:
                try:
                    after = rules.play(state, move)
                except IllegalMove as error:
                    cut_short.append((line.game, ply, str(error)))
                    break
                step = (after, position_hash(name, rules.position_key(after)))
                steps[name, state, move] = step
            row = rows.get((position, band, speed, move))
            if row is None:
                row = rows[position, band, speed, move] = Counts()
            row.add(line.game, mover, line.winner, rating)
            state, position = step
    return Counted(rows, games, cut_short)
