"""Tie-breaks for a Swiss (or any) crosstable: Buchholz, Buchholz Cut-1 and Sonneborn-Berger.

Unplayed games follow FIDE's "virtual opponent" rule (Handbook C.07, the tie-break
regulations of 2009-2023), so that a bye or a forfeit neither rewards nor punishes anyone's
tie-break:

- A player's own round without a game (a bye, a forfeit won or lost, an absence) counts as a
  game against a virtual opponent who starts the round with the player's score, gets the
  opposite of the player's result in it and draws every later round:
  Svon = SPR + (1 - SfPR) + 0.5 * (n - R), SPR the player's score before round R, SfPR his
  points in it, n the number of rounds (the player's own: a sit-out is none, below).
- When an opponent's score is counted, his own unplayed games count as draws, whatever they
  scored him: a player is not paid for his opponents' byes.

A round robin's sit-out (the odd player drawn against the Berger table's dummy) is no round of
the player's at all: it is given as None and left out of everything, so that a round robin's
Sonneborn-Berger is the classical sum over the games played (every player sits out as often).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from tournaments.pairing.errors import PairingError


@dataclass(frozen=True, slots=True)
class Game:
    """A player's round: his points (1, 0.5 or 0), his opponent (None: none at all, as for a
    bye) and whether it was played (False for a forfeit, which has an opponent)."""

    points: float
    opponent: Hashable | None = None
    played: bool = True

    @property
    def unplayed(self) -> bool:
        return self.opponent is None or not self.played


# Each player's rounds in order: a Game, or None for a round robin's sit-out.
Crosstable = Mapping[Hashable, Sequence[Game | None]]


@dataclass(frozen=True, slots=True)
class Tiebreaks:
    """The tie-break scores of one player."""

    buchholz: float
    buchholz_cut1: float
    sonneborn_berger: float


def tiebreaks(table: Crosstable) -> dict[Hashable, Tiebreaks]:
    """Every player's tie-breaks; each player's list of games is by round, all equally long
    (None for a round robin's sit-out)."""
    rounds = {len(games) for games in table.values()}
    if len(rounds) > 1:
        raise PairingError(
            "every player needs one entry per round (a Game for a bye or an absence too)"
        )
    for player, entries in table.items():
        for game in entries:
            if game is not None and not game.unplayed and game.opponent not in table:
                raise PairingError(f"{player!r:.30} met {game.opponent!r:.30}, not in the table")
    # A sit-out is no round of the player's: dropped before anything is counted.
    rounds_of = {
        player: [game for game in entries if game is not None] for player, entries in table.items()
    }
    # What each player counts for as an opponent: his unplayed games as draws.
    as_opponent = {
        player: sum(0.5 if game.unplayed else game.points for game in games)
        for player, games in rounds_of.items()
    }
    result = {}
    for player, games in rounds_of.items():
        opponents = _opponent_scores(games, as_opponent)
        weighted = sum(game.points * score for game, score in zip(games, opponents, strict=True))
        result[player] = Tiebreaks(
            buchholz=sum(opponents),
            buchholz_cut1=sum(opponents) - min(opponents, default=0.0),
            sonneborn_berger=weighted,
        )
    return result


def buchholz(table: Crosstable, player: Hashable) -> float:
    """The sum of the player's opponents' scores (virtual opponents for unplayed rounds)."""
    return tiebreaks(table)[player].buchholz


def buchholz_cut1(table: Crosstable, player: Hashable) -> float:
    """Buchholz without the lowest of those scores."""
    return tiebreaks(table)[player].buchholz_cut1


def sonneborn_berger(table: Crosstable, player: Hashable) -> float:
    """The sum of the scores of the opponents beaten and half those of the opponents drawn."""
    return tiebreaks(table)[player].sonneborn_berger


def _opponent_scores(games: Sequence[Game], as_opponent: Mapping[Hashable, float]) -> list[float]:
    rounds = len(games)
    scores = []
    before = 0.0  # the player's score before the round (SPR)
    for number, game in enumerate(games, start=1):
        if game.unplayed:
            scores.append(before + (1 - game.points) + 0.5 * (rounds - number))
        else:
            scores.append(as_opponent[game.opponent])
        before += game.points
    return scores
