"""Computer opponents' search: pure Python over the public rules API, no Django.

    from bots.search import LEVELS, think
    choice = think(rules, state, level=3, seed=7)          # deterministic for a seed
    choice = think(rules, state, level=5, seed=7, max_ms=800)  # a clock's share caps it
    choice.move, choice.playouts, choice.ms

The search is Monte Carlo tree search with UCT (mcts.py); what differs between the games is
data (policies.py: how candidate moves are drawn, how a playout moves, how a position is
scored when a playout is cut short); what differs between the five levels is a budget and a
few parameters (levels.py). Diffusion Chess is played a whole turn at a time instead, every
level keeping the race clean (chess_turns.py), the levels that read it reading the last
turns out (chess_endgame.py).
"""

from bots.search.levels import LEVELS, Level, level
from bots.search.mcts import Choice, think

__all__ = ["LEVELS", "Choice", "Level", "level", "think"]
