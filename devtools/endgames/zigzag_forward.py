"""An independent check of the ZigZag databases: a plain memoised minimax over the pure
engine's own moves (games/rules/zigzag.py `legal_moves`, `play`, and its end of the game),
reading nothing of a database and sharing nothing with the retrograde builder but the
engine. docs/ENDGAMES.md, "ZigZag".

A position's value here is the seeds South will still get minus North's ("from here"),
each side playing for its own final margin. A capture leads to a position with fewer seeds
on the board, searched (and remembered) first; the positions reachable without a capture
are gathered, and their values are found by iterating "the best move" from every one of
them worth its cycle value (what an endless play is worth: the seeds left to the last
capturer) until nothing changes. After n rounds a value is that of the game cut after n
moves and scored as if it went round for ever, which equals the true value once n passes
the number of positions (whoever gains by leaving forces it within that many moves), so
the iteration stops at the true values. Positions are searched with an empty repetition
history, as the database assumes (docs/ENDGAMES.md).
"""

from __future__ import annotations

from games.rules.zigzag import NORTH, SOUTH, ZigZagRules, ZigZagState

# (board, player to move, forbidden pit, last capturer): what a position's future depends on.
Key = tuple[int, int, int, int]


class Forward:
    """The values of positions of one option set, remembered across calls."""

    def __init__(self, rules: ZigZagRules) -> None:
        self.rules = rules
        self.memo: dict[Key, int] = {}

    def state(
        self, pits: tuple[int, ...], to_move: int, forbidden: int, last_capturer: int
    ) -> ZigZagState:
        """The engine's state of a position, the seeds off the board all in the last
        capturer's store (the future does not depend on how they were split), its end
        decided by the engine (`end` set when the game is over)."""
        rules = self.rules
        off = rules.total - sum(pits)
        captured = (off, 0) if last_capturer == SOUTH else (0, off)
        state = ZigZagState(rules.pack(pits), captured, to_move, forbidden, last_capturer)
        return rules._settled(state)

    def margin(self, state: ZigZagState) -> int:
        """What the player to move will still get minus what the opponent will."""
        south = self.south(state)
        return south if state.to_move == SOUTH else -south

    def south(self, state: ZigZagState) -> int:
        """South's seeds from here minus North's, both playing their best."""
        if state.end:
            return 0  # the leftover seeds are already in the stores
        key = _key(state)
        known = self.memo.get(key)
        if known is not None:
            return known
        self._solve(state)
        return self.memo[key]

    def _cycle(self, state: ZigZagState) -> int:
        """South's share of an endless play from here: the seeds left go to the last
        capturer (nobody's while nobody has captured)."""
        left = self.rules.total - sum(state.captured)
        return {SOUTH: left, NORTH: -left}.get(state.last_capturer, 0)

    def _solve(self, root: ZigZagState) -> None:
        """Every position reachable from `root` without a capture, solved together."""
        rules = self.rules
        states = {_key(root): root}
        # Per position: the values of its moves that leave (captures, the end of the game)
        # and the positions its other moves lead to.
        fixed: dict[Key, list[int]] = {}
        inner: dict[Key, list[Key]] = {}
        queue = [root]
        while queue:
            state = queue.pop()
            key = _key(state)
            fixed[key], inner[key] = [], []
            here = _diff(state)
            for move in rules.legal_moves(state):
                after = rules.play(state, move)
                if after.end or _diff(after) != here:
                    # Scored by the engine (captures, the leftovers at the end) and below.
                    fixed[key].append(_diff(after) - here + self.south(after))
                    continue
                after = after._replace(history=())  # the database's positions: no history
                child = _key(after)
                inner[key].append(child)
                if child not in states and child not in self.memo:
                    states[child] = after
                    queue.append(after)
        values = {key: self._cycle(state) for key, state in states.items()}

        def value(key: Key) -> int:
            return self.memo[key] if key in self.memo else values[key]

        changed = True
        while changed:
            changed = False
            for key, state in states.items():
                options = fixed[key] + [value(child) for child in inner[key]]
                best = max(options) if state.to_move == SOUTH else min(options)
                if best != values[key]:
                    values[key] = best
                    changed = True
        self.memo.update(values)


def _key(state: ZigZagState) -> Key:
    return (state.board, state.to_move, state.no_return, state.last_capturer)


def _diff(state: ZigZagState) -> int:
    return state.captured[0] - state.captured[1]
