"""The rule engines: pure Python, no Django.

rules = get_rules("diffusion")             # or "four-rank-diffusion", with **options
state = rules.initial_state()
rules.to_move(state)                       # 1 or 2; player 1 (South) moves first
rules.legal_moves(state)                   # canonical move strings; empty once over
state = rules.play(state, "I")             # a NEW state, or IllegalMove saying why
rules.outcome(state)                       # None, or Outcome(winner, reason)
rules.to_json(state) / rules.from_json(d)  # exact round trip
rules.render_text(state)                   # pbmserv-style board
available_games()                          # slug, name and options of every game
"""

from games.rules import diffusion as _diffusion  # noqa: F401  (registers its games)
from games.rules.base import (
    IllegalMove,
    InvalidOptions,
    OptionSpec,
    Outcome,
    Rules,
    available_games,
    get_rules,
)

__all__ = [
    "IllegalMove",
    "InvalidOptions",
    "OptionSpec",
    "Outcome",
    "Rules",
    "available_games",
    "get_rules",
]
