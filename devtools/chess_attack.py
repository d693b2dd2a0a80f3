"""White's attack in Diffusion Chess (issue 58, part 6; docs/DIFFUSION-CHESS-STRATEGY.md,
section 4): an experiment, not one of the site's levels.

A clean race is Black's, so White wins only by making Black lose a group: a capture (the
captured stone lands alone, most often) or a turn Black cannot complete cleanly. The attacker
plays level 5's clean turns (bots/search/chess_turns.py) and, among them, prefers:

- `THREATS`: each Black stone it could capture at its next turn if Black did nothing (one
  threat is parried by a Black that looks; two at once may not be);
- `FORCED`: each Black stone it can still capture after Black's answer, played by level 3's
  turn planning (which counts the captures it leaves open against its turns): a capture
  Black could not, or did not, parry;
- `APPROACH`: its movable groups (three to six stones: a pair cannot move without splitting)
  brought near the Black stones they could capture (a group of s stones walks s - 1 steps and
  takes stones of groups of at least s), each group's gap counted down from `FAR`;
- a wider turn search than level 5 (`ATTACK_LEVEL`) and `ATTACK_MS` a turn.

    python -m devtools.chess_trace attacker 5 --seed 700
"""

from __future__ import annotations

import random
from typing import Any

from bots.search.chess_threats import captures, nearness
from bots.search.chess_turns import Plans, TurnLevel, plan_turn
from bots.search.policies import chess_score

THREATS = 2.0
FORCED = 10.0
DEFENCE_LEVEL = 3
DEFENCE_MS = 400.0
APPROACH = 0.05
FAR = 12
ATTACK_LEVEL = TurnLevel(width=6, sample=96, threat=True, reading=True, judged=16, choice=1)
ATTACK_MS = 6_000.0


def threats(rules: Any, end: Any) -> int:
    """The opposing stones the side that just ended its turn in `end` could capture at the
    start of its next turn, were the opponent to pass."""
    return captures_now(rules, rules.own_next_turn(end))


def captures_now(rules: Any, state: Any) -> int:
    """The opposing stones the side to move in `state` can capture now."""
    return len({path.rsplit("-", 1)[-1] for path in captures(rules, state)})


def attack_bonus(rules: Any, end: Any) -> float:
    me = 3 - end.to_move
    value = THREATS * threats(rules, end) + APPROACH * nearness(end.board, me, 3, 6, far=FAR)
    answer = plan_turn(rules, end, DEFENCE_LEVEL, chess_score, 0, DEFENCE_MS)
    after = end
    for move in answer.moves:
        after = rules.play(after, move)
    outcome = rules.outcome(after)
    if outcome is not None:
        return value + (1000.0 if outcome.winner == me else -1000.0)
    return value + FORCED * captures_now(rules, after)


PLANS = Plans()


def attacker(rules: Any, state: Any, rng: random.Random) -> str:
    """The attacker's move now: the next of the turn it planned."""
    known = PLANS.next_move(state, 0)
    if known is not None:
        return known
    plan = plan_turn(
        rules, state, ATTACK_LEVEL, chess_score, rng.randrange(2**31), ATTACK_MS, attack_bonus
    )
    PLANS.keep(rules, state, 0, plan.moves)
    return plan.moves[0]
