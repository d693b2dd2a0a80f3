"""Which seeks pair with which: a pure function, no database.

A seek names one or more games, each with its options. Two seeks are compatible when they
belong to different users and share a game with the same options (after the engine's
defaults are filled in, so {} and {"pits": 6, "seeds": 5} are the same ZigZag) and the same
time control. The earlier seek's order of preference decides which shared game is played:
it has waited longer. A bot account's seek (docs/API.md, "Bot accounts") pairs with another
bot account's, and with a person's only when that person's seek asks for bots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GameChoice:
    slug: str
    options: tuple[tuple[str, Any], ...]  # sorted, defaults filled in

    @classmethod
    def of(cls, slug: str, options: Mapping[str, Any]) -> GameChoice:
        return cls(slug=slug, options=tuple(sorted(options.items())))

    def options_dict(self) -> dict[str, Any]:
        return dict(self.options)


@dataclass(frozen=True)
class SeekView:
    """What matching needs to know of a seek."""

    seek_id: int
    user_id: int
    games: Sequence[GameChoice]
    time_control: str = ""
    rated: bool = False
    # The seeker's rating in each game named (at the seek's speed), and the range the
    # opponent's rating must be in (None: anyone).
    ratings: Mapping[str, float] | None = None
    rating_range: tuple[int, int] | None = None
    # The seeker is a bot account; the seek (a person's) also pairs with bot accounts.
    bot_account: bool = False
    bots: bool = False

    def rating(self, slug: str) -> float:
        return (self.ratings or {}).get(slug, 1500.0)

    def accepts(self, other: SeekView, slug: str) -> bool:
        if self.rating_range is None:
            return True
        low, high = self.rating_range
        return low <= other.rating(slug) <= high


def bots_agree(one: SeekView, other: SeekView) -> bool:
    """People meet people and bots meet bots; a bot meets a person who asked for bots."""
    if one.bot_account == other.bot_account:
        return True
    person = other if one.bot_account else one
    return person.bots


def shared_game(older: SeekView, newer: SeekView) -> GameChoice | None:
    """The game two seeks would play, or None if they cannot pair."""
    if older.user_id == newer.user_id or older.time_control != newer.time_control:
        return None
    if not bots_agree(older, newer):
        return None
    if older.rated != newer.rated:  # rated games only between seekers who want one
        return None
    offered = set(newer.games)
    for choice in older.games:
        if (
            choice in offered
            and older.accepts(newer, choice.slug)
            and newer.accepts(older, choice.slug)
        ):
            return choice
    return None


def candidates(seek: SeekView, open_seeks: Iterable[SeekView]) -> list[tuple[SeekView, GameChoice]]:
    """Every open seek `seek` could pair with, oldest first (the order given), with the game."""
    found = []
    for other in open_seeks:
        if other.seek_id == seek.seek_id:
            continue
        older, newer = (other, seek) if other.seek_id < seek.seek_id else (seek, other)
        choice = shared_game(older, newer)
        if choice is not None:
            found.append((other, choice))
    return found


def pair_up(open_seeks: Sequence[SeekView]) -> list[tuple[SeekView, SeekView, GameChoice]]:
    """Greedy pairing of a whole queue: each seek, oldest first, with the oldest compatible
    seek still unpaired. A user's other seeks stop counting once one of them is paired."""
    ordered = sorted(open_seeks, key=lambda seek: seek.seek_id)
    paired_users: set[int] = set()
    taken: set[int] = set()
    pairs = []
    for index, seek in enumerate(ordered):
        if seek.seek_id in taken or seek.user_id in paired_users:
            continue
        for other in ordered[index + 1 :]:
            if other.seek_id in taken or other.user_id in paired_users:
                continue
            choice = shared_game(seek, other)
            if choice is not None:
                pairs.append((seek, other, choice))
                taken.update((seek.seek_id, other.seek_id))
                paired_users.update((seek.user_id, other.user_id))
                break
    return pairs
