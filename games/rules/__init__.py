"""The rule engines: pure Python, no Django.

rules = get_rules("diffusion")             # "four-rank-diffusion", "zigzag" (pits=, seeds=),
                                           # "diffusion-chess"; options as keywords
state = rules.initial_state()              # states are immutable and hashable
rules.to_move(state)                       # 1 or 2; player 1 (South) moves first
rules.legal_moves(state)                   # canonical move strings; empty once over (chess:
                                           # a generator; it also has client_moves,
                                           # is_legal and random_move)
state = rules.play(state, "I")             # a NEW state, or IllegalMove saying why
rules.outcome(state)                       # None, or Outcome(winner, reason)
rules.to_json(state) / rules.from_json(d)  # exact round trip; ValueError on a bad dict
rules.canonical_move(state, " i ")         # "I": how a move is written down
rules.render_text(state)                   # the pbmserv-style board (whose turn is not shown)
rules.position_key(state)                  # bytes, equal for positions the rules cannot
                                           # tell apart however reached (transpositions)
available_games()                          # slug, name, summary and options of every game
game_info("zigzag").draws                  # whether the game can end in a draw

A game joins by registering a `GameInfo` (games/rules/base.py) from its module, imported
below; the conformance tests then play it like every other game.
"""

# Registration order is the order the games are offered in (lobby forms, listings).
from games.rules import diffusion as _diffusion  # noqa: F401, I001  (registers its games)
from games.rules import chess as _chess  # noqa: F401
from games.rules import zigzag as _zigzag  # noqa: F401
from games.rules.base import (
    IllegalMove,
    InvalidOptions,
    OptionSpec,
    Outcome,
    Rules,
    available_games,
    game_info,
    get_rules,
)

__all__ = [
    "IllegalMove",
    "InvalidOptions",
    "OptionSpec",
    "Outcome",
    "Rules",
    "available_games",
    "game_info",
    "get_rules",
]
