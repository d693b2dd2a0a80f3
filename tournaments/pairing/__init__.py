"""Pairing for tournaments: pure functions from players and results to the next games.

No Django, no I/O: frozen dataclasses and tuples in, the same out, so that the tournament app
stores and schedules and this package only decides. docs/TOURNAMENTS.md describes the rules.

- Round robin (`round_robin`): `round_robin(n, double=False)` gives every round as
  `RoundRobinRound(number, pairs, bye)`, players numbered 1..n, by the FIDE Berger tables
  (`berger_table(n)` is the published table itself).
- Arena (`arena`): `pair_wave(waiting)` pairs the `ArenaPlayer`s waiting into an `ArenaWave`
  (pairs (white, black), and who waits on); `score_sheet(results)` scores a player's games by
  lichess's arena points, streaks included, as a `ScoreSheet(total, points, on_fire)`.
- Swiss (`swiss`): `pair_round(players, rounds=..., initial_colour="W")` pairs the next round
  of `SwissPlayer`s by the FIDE (Dutch) system into a `SwissRound` (pairs, bye, floats).
- Tie-breaks (`tiebreaks`): `tiebreaks(crosstable)` gives each player's Buchholz, Buchholz
  Cut-1 and Sonneborn-Berger, with FIDE's virtual opponent for unplayed rounds.

Every bad input raises `PairingError`, a ValueError.
"""

from tournaments.pairing.arena import ArenaPlayer, ArenaWave, ScoreSheet, pair_wave, score_sheet
from tournaments.pairing.errors import PairingError
from tournaments.pairing.round_robin import RoundRobinRound, berger_table, round_robin
from tournaments.pairing.swiss import SwissPlayer, SwissRound, pair_round
from tournaments.pairing.tiebreaks import Game, Tiebreaks, tiebreaks

__all__ = [
    "ArenaPlayer",
    "ArenaWave",
    "Game",
    "PairingError",
    "RoundRobinRound",
    "ScoreSheet",
    "SwissPlayer",
    "SwissRound",
    "Tiebreaks",
    "berger_table",
    "pair_round",
    "pair_wave",
    "round_robin",
    "score_sheet",
    "tiebreaks",
]
