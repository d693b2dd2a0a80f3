"""An exact forced-win prover on the engine API (no Django, any game of games.rules).

    prover = Prover(rules, me=rules.to_move(state), nodes=200_000)
    prover.wins(state, 3)      # True: `me` forces a win within 3 of its own moves;
                               # False: proved that it does not; None: the budget ran out
    prover.distance(state, 5)  # the fewest own moves that force the win (None: not within 5)

An AND-OR search: at a position where `me` is to move, one move must win (OR); where the
opponent is to move, every reply must still lose for them (AND). Only `me`'s moves count
towards the horizon: the opponent's are free, so a line where the opponent must give the win
away ("zugzwang") is found. Diffusion Chess plays turns of several moves: consecutive moves
of the same player are each one of that player's moves, so a turn of five is five own moves
for `me` and five AND levels for the opponent; nothing game-specific is needed for that,
since the side to move is read from each state.

The memo is keyed by the state itself, not by `position_key`: ZigZag's states carry the
positions seen since the last capture (threefold repetition), which position_key leaves
out, so two states with one key can have different futures. What is memoised per state is
monotone in the horizon: the fewest own moves known to win, and the most known not to.

A node budget (positions made by `play`) and an optional deadline bound the search; past
either, the answer is None ("unknown"), never a guess.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

# A move generator: the engine's legal moves by default.
Moves = Callable[[Any], Iterable[str]]
# An exact answer where one is known (Diffusion's endgame database, games/endgames.py): the
# result for the player to move ("win", "loss", "draw") and the moves of both players to the
# end, or None where the position is not covered.
Exact = Callable[[Any], tuple[str, int | None] | None]


class OutOfBudget(Exception):
    """The node budget or the deadline ran out: the answer is unknown."""


class Prover:
    """Forced wins for player `me` (1 or 2) in one game, with a memo shared by all the
    questions asked of one prover (a candidate position and the positions after its moves).

    `nodes`: positions the prover may make (each `play`), over its whole life; `deadline`:
    a time.perf_counter() value after which it stops. Both give "unknown" (None)."""

    def __init__(
        self,
        rules: Any,
        me: int,
        nodes: int = 200_000,
        deadline: float | None = None,
        moves: Moves | None = None,
        exact: Exact | None = None,
    ) -> None:
        self.rules = rules
        self.exact = exact
        self.me = me
        self.budget = nodes
        self.deadline = deadline
        self.made = 0  # positions made so far
        self._moves: Moves = moves or rules.legal_moves
        # state -> fewest own moves known to force the win / most own moves known not to.
        self._win_at: dict[Any, int] = {}
        self._no_within: dict[Any, int] = {}
        # state -> its children (move, state after it), made once.
        self._children: dict[Any, list[tuple[str, Any]]] = {}

    # --- questions ---------------------------------------------------------------------------

    def wins(self, state: Any, within: int) -> bool | None:
        """Whether `me` forces a win from `state` within `within` of its own moves (the
        opponent's moves are free); None when the budget ran out first."""
        try:
            return self._wins(state, within)
        except OutOfBudget:
            return None

    def distance(self, state: Any, most: int) -> int | None:
        """The fewest own moves within which `me` forces a win (iterative deepening up to
        `most`); None when there is none within `most` or the budget ran out (see `wins`)."""
        for within in range(0, most + 1):
            answer = self.wins(state, within)
            if answer is None:
                return None
            if answer:
                return within
        return None

    def children(self, state: Any) -> list[tuple[str, Any]]:
        """Every legal move of `state` with the state after it (counted against the budget)."""
        known = self._children.get(state)
        if known is not None:
            return known
        made = []
        play = self.rules.play
        for move in self._moves(state):
            self._spend()
            made.append((move, play(state, move)))
        self._children[state] = made
        return made

    def line(self, state: Any, within: int) -> list[str]:
        """A line proving a win found within `within` own moves: `me` plays a move that wins
        soonest, the opponent the reply that holds out longest (then the first listed)."""
        line: list[str] = []
        while self.rules.outcome(state) is None and len(line) < 4 * within + 20:
            mine = self.rules.to_move(state) == self.me
            best: tuple[int, str, Any] | None = None
            for move, after in self.children(state):
                if mine:
                    spent = 1
                    left = within - 1
                else:
                    spent = 0
                    left = within
                need = self._need(after, left)
                if need is None:
                    continue
                score = need + spent
                if best is None or (score < best[0] if mine else score > best[0]):
                    best = (score, move, after)
            if best is None:  # not a proved win after all (budget): stop the line here
                break
            line.append(best[1])
            if mine:
                within -= 1
            state = best[2]
        return line

    # --- the search --------------------------------------------------------------------------

    def _need(self, state: Any, most: int) -> int | None:
        """The fewest own moves (at most `most`) that win from `state`; None if none."""
        for within in range(0, most + 1):
            if self._wins(state, within):
                return within
        return None

    def _spend(self) -> None:
        self.made += 1
        if self.made > self.budget:
            raise OutOfBudget
        if (
            self.deadline is not None
            and not self.made % 256
            and time.perf_counter() > self.deadline
        ):
            raise OutOfBudget

    @staticmethod
    def _exactly(mine: bool, result: str, plies: int | None, within: int) -> bool:
        """A known result read as "`me` wins within `within` own moves": of `plies` moves to
        the end, `me` makes every other one, the first when it is to move."""
        if plies is None or result == "draw":
            return False
        if mine:
            return result == "win" and (plies + 1) // 2 <= within
        return result == "loss" and plies // 2 <= within

    def _wins(self, state: Any, within: int) -> bool:
        rules = self.rules
        outcome = rules.outcome(state)
        if outcome is not None:
            return outcome.winner == self.me
        if self.exact is not None:
            answer = self.exact(state)
            if answer is not None:
                return self._exactly(rules.to_move(state) == self.me, *answer, within)
        known = self._win_at.get(state)
        if known is not None and known <= within:
            return True
        known = self._no_within.get(state)
        if known is not None and known >= within:
            return False
        mine = rules.to_move(state) == self.me
        if mine and within == 0:
            return False
        children = self.children(state)
        left = within - 1 if mine else within
        # One ply looked at first: a game over decides at once (a win found, a refutation).
        ended = [rules.outcome(after) for _, after in children]
        result: bool
        if mine:
            if any(o is not None and o.winner == self.me for o in ended):
                result = True
            else:
                result = any(
                    self._wins(after, left)
                    for (_, after), o in zip(children, ended, strict=True)
                    if o is None
                )
        elif any(o is not None and o.winner != self.me for o in ended):
            result = False
        else:
            # Every reply must lose for the opponent. (No legal move at all cannot happen
            # to a game still going on: each engine ends the game first.)
            result = bool(children) and all(
                self._wins(after, left)
                for (_, after), o in zip(children, ended, strict=True)
                if o is None
            )
        if result:
            self._win_at[state] = min(within, self._win_at.get(state, within))
        else:
            self._no_within[state] = max(within, self._no_within.get(state, within))
        return result


def first_wins(rules: Any, state: Any, within: int, prover: Prover) -> list[str] | None:
    """The moves of `state` after which its mover forces a win within `within` own moves
    (the move itself counted), or None when the budget ran out before every move was
    decided."""
    winners = []
    for move, after in prover.children(state):
        answer = prover.wins(after, within - 1)
        if answer is None:
            return None
        if answer:
            winners.append(move)
    return winners
