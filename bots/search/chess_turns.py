"""Diffusion Chess played a whole turn at a time: every level keeps the race clean.

A turn must end with exactly one more group than it began with to waste nothing
(docs/DIFFUSION-CHESS-STRATEGY.md, sections 1 and 2): a second new group is a turn given
away, and one wasted group decides a race between two clean players. Whether a move wastes
is a matter of the whole turn, not of the move, so the computer plans the turn: a beam search
over its remaining moves in which every move is first judged by the exact change it makes to
the mover's group count (chess_groups.py: microseconds, where playing the move and scoring
the result costs a hundred times more), and only the moves that keep the turn clean are
played and scored. Of the turn's completions the clean
ones come first; among them, what a level can see decides:

- `width`, `sample`: partial turns kept a move, and moves played from each (the rest of the
  clean moves are not looked at: a weaker level plays a worse clean turn, never a wasteful one);
- `threat`: the opponent's captures next turn counted against a completion (each stone
  taken is a group lost: section 4);
- `reading`: in the endgame, the mover's own later turns searched as if the opponent
  passed (bots/search/chess_endgame.py), the completion after which the most can still be
  completed preferred;
- `judged`: how many of the best-scored clean completions are judged so (in the endgame, up
  to ENDGAME_JUDGED);
- `choice`: how many of the best judged the level draws its turn from;
- `attack`: while the mover is behind in the race (chess_threats.py: its turns would run out
  first were nobody to capture again), outside the endgame, the beam walks its small groups
  towards the stones they could take, and the finished turns that leave such a capture open
  are preferred.

The plan's later moves are kept (`Plans`) so that the next four answers of the turn cost
nothing; a process that did not plan the turn plans its rest from where it is.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bots.search.chess_echoes import echo_captures
from bots.search.chess_endgame import (
    ENDGAME_STONES,
    OutOfTime,
    Reader,
    most_groups,
    movable_stones,
    turn_moves,
)
from bots.search.chess_groups import clean_moves, move_ends
from bots.search.chess_threats import attack, behind, march
from games.rules.chess import INDEX, count_groups


@dataclass(frozen=True)
class TurnLevel:
    width: int
    sample: int
    threat: bool
    reading: bool
    judged: int
    choice: int
    attack: bool = False  # behind in the race, march and threaten (chess_threats.py)


TURN_LEVELS = (
    TurnLevel(width=1, sample=8, threat=False, reading=False, judged=4, choice=4),
    TurnLevel(width=1, sample=16, threat=False, reading=False, judged=2, choice=2),
    TurnLevel(width=2, sample=24, threat=True, reading=False, judged=4, choice=1),
    TurnLevel(width=3, sample=40, threat=True, reading=True, judged=6, choice=1),
    TurnLevel(width=4, sample=64, threat=True, reading=True, judged=8, choice=1, attack=True),
)
BEAM_SHARE = 0.5  # of the turn's time, for the beam; the rest judges its completions
HURRIED_SAMPLE = 8  # moves played from a partial turn once time is up
WON = float("inf")
CAPTURE_WEIGHT = 1.0  # a stone the opponent can take next turn, in groups
READING_WEIGHT = 3.0  # a later turn that can still be completed, in groups
ENDGAME_JUDGED = 64  # completions read in the endgame, at the levels that read
LOOK_MS = 200.0  # the least time given to looking for a clean turn the beam missed
ENDGAME_NODES = 20_000  # moves tried in listing an endgame turn's completions, at most


@dataclass(frozen=True)
class Plan:
    """The rest of a turn, and the positions played to find it."""

    moves: list[str]
    played: int


@dataclass
class Completion:
    moves: list[str]
    end: Any
    value: float
    clean: bool


class Planner:
    def __init__(
        self, rules: Any, me: int, score: Any, rng: random.Random, deadline: float
    ) -> None:
        self.rules = rules
        self.me = me
        self.score = score  # the mover's chance, 0 to 1 (bots/search/policies.chess_score)
        self.rng = rng
        self.deadline = deadline
        self.played = 0  # positions the planning played (its playouts, as it were)
        # What a position is worth beyond its score while the turn is planned (the march of
        # a side behind in the race: chess_threats.py).
        self.shape: Callable[[Any], float] | None = None

    def _mine(self, position: Any) -> float:
        value = self.score(self.rules, position)
        value = value if self.me == 1 else 1.0 - value
        if self.shape is not None:
            value += self.shape(position)
        return value

    def _steps(self, position: Any, need: int, sample: int, echoes: bool) -> list[list[str]]:
        """The moves after which the turn can still end with `need` groups, `sample` of
        them at most (drawn at random; captures and the echo always kept): all moves when
        none can. With `echoes`, also each route whose echo captures, played with its echo
        as one step (the route alone scores as a stone walked off: a beam would drop it)."""
        everything = turn_moves(self.rules, position)
        kept = clean_moves(position.board, self.me, everything, need)
        captures: list[str] = []  # and the echo
        fitting: list[str] = []
        for move in kept:
            taking = move == "echo" or position.board[move_ends(move)[1]]
            (captures if taking else fitting).append(move)
        steps = [[route, "echo"] for route in echo_captures(self.rules, position)] if echoes else []
        if not fitting and not captures:
            return steps + [[move] for move in everything]
        if len(fitting) > sample:
            fitting = self.rng.sample(fitting, sample)
        return steps + [[move] for move in captures + fitting]

    def completions(self, state: Any, level: TurnLevel) -> list[Completion]:
        """The turn's completions the beam finds from `state` (a turn started or begun).
        Once the deadline has passed, the beam narrows to one partial turn and few moves:
        a turn is always completed, and never wastefully for want of time."""
        rules, me = self.rules, self.me
        need = state.start_groups + 1
        width, sample = level.width, level.sample
        frontier: list[tuple[list[str], Any]] = [([], state)]
        done: list[Completion] = []
        lost: list[Completion] = []
        while frontier:
            following: dict[Any, tuple[float, list[str], Any]] = {}
            for moves, position in frontier:
                if time.perf_counter() > self.deadline:
                    width, sample = 1, HURRIED_SAMPLE
                for step in self._steps(position, need, sample, level.threat):
                    after = position
                    for move in step:
                        after = rules.play(after, move)
                    self.played += len(step)
                    line = [*moves, *step]
                    outcome = rules.outcome(after)
                    if outcome is not None:
                        if outcome.winner == me:
                            return [Completion(line, after, WON, True)]
                        draw = outcome.winner is None
                        lost.append(Completion(line, after, 0.5 if draw else 0.0, False))
                        continue
                    value = self._mine(after)
                    if after.to_move != me:
                        clean = count_groups(after.board, me) == need
                        done.append(Completion(line, after, value, clean))
                        continue
                    key = after.board
                    if key not in following or following[key][0] < value:
                        following[key] = (value, line, after)
                if width == 1 and following and time.perf_counter() > self.deadline:
                    break
            ranked = sorted(following.values(), key=lambda entry: -entry[0])[:width]
            frontier = [(line, after) for _, line, after in ranked]
        return done or sorted(lost, key=lambda completion: -completion.value)

    def every_completion(self, state: Any, first: bool = False) -> list[Completion]:
        """Every completion of the turn (one a board) among the moves that keep it clean,
        depth first, within ENDGAME_NODES moves and the deadline; with `first`, only the
        first clean one found. In the endgame a sampled beam can miss the one clean turn
        that keeps the king company, and the few stones left make the whole turn cheap to
        list; anywhere, a beam that found no clean turn may have kept only partial turns
        that cannot end cleanly, where another can."""
        rules, me = self.rules, self.me
        need = state.start_groups + 1
        done: dict[Any, Completion] = {}
        seen: set[Any] = set()
        stack: list[tuple[list[str], Any]] = [([], state)]
        nodes = ENDGAME_NODES
        while stack and nodes > 0 and time.perf_counter() < self.deadline:
            moves, position = stack.pop()
            for move in clean_moves(position.board, me, turn_moves(rules, position), need):
                nodes -= 1
                after = rules.play(position, move)
                self.played += 1
                line = [*moves, move]
                outcome = rules.outcome(after)
                if outcome is not None:
                    if outcome.winner == me:
                        return [Completion(line, after, WON, True)]
                    continue
                if after.to_move != me:
                    if after.board not in done:
                        clean = count_groups(after.board, me) == need
                        done[after.board] = Completion(line, after, self._mine(after), clean)
                        if clean and first:
                            return [done[after.board]]
                    continue
                key = (after.board, after.moved, after.last, after.last_path)
                if key not in seen:
                    seen.add(key)
                    stack.append((line, after))
        return list(done.values())

    def judge(self, completion: Completion, level: TurnLevel) -> float:
        """A completion's worth before any reading: the score, less the captures open to the
        opponent (where the level looks at them)."""
        value = completion.value
        if level.threat and self.rules.outcome(completion.end) is None:
            value -= CAPTURE_WEIGHT * threatened(self.rules, completion.end)
        return value

    def read(self, kept: list[Completion], until: float) -> list[int]:
        """For each completion, the mover's later turns that can still be completed (the
        endgame's reading, chess_endgame.py; 0 outside the endgame), read one more turn
        deep at a time for all of them (a completion already short of the last depth is not
        read deeper), so that time running out leaves them read nearly equally far."""
        rules, me = self.rules, self.me
        starts: list[tuple[Any, int] | None] = []
        for completion in kept:
            end = completion.end
            if rules.outcome(end) is not None or movable_stones(end.board, me) > ENDGAME_STONES:
                starts.append(None)
                continue
            wanted = most_groups(end.board, me) - count_groups(end.board, me)
            starts.append((rules.own_next_turn(end), wanted))
        found = [0] * len(kept)
        deepest = max((start[1] for start in starts if start is not None), default=0)
        reader = Reader(rules, me, until)
        for depth in range(1, deepest + 1):
            # Best-scored first; when time runs out part-way through a depth, the ones read
            # to it keep what it found (at least as much as the depth before).
            for index, start in enumerate(starts):
                if start is None or found[index] < depth - 1:
                    continue  # outside the endgame, or short of the depth before already
                try:
                    found[index] = reader.turns(start[0], min(depth, start[1]))
                except OutOfTime:
                    return found
            if any(
                start is not None and n >= start[1] for n, start in zip(found, starts, strict=True)
            ):
                break  # one completion keeps every later turn possible: none does better
        return found


def threatened(rules: Any, end: Any) -> int:
    """The mover's stones the opponent (to move in `end`, its turn starting) can capture:
    by a move, or by a move and its echo (chess_echoes.py)."""
    board, target = end.board, 3 - end.to_move
    cells = {
        INDEX[cell]
        for targets in rules.client_moves(end)["destinations"].values()
        for cell in targets
        if board[INDEX[cell]] == target
    }
    return len(cells | set(echo_captures(rules, end).values()))


def plan_turn(
    rules: Any,
    state: Any,
    number: int | TurnLevel,
    score: Any,
    seed: int,
    ms: float,
    bonus: Callable[[Any, Any], float] | None = None,
) -> Plan:
    """The rest of the turn a level `number` plays from `state`, within about `ms`
    milliseconds (the whole turn's share of the clock; a greedy turn if time runs out
    before the beam is through). `bonus(rules, end)`, added to each completion judged: what
    an experiment values beyond the levels' judgement (devtools/chess_attack.py)."""
    started = time.perf_counter()
    level = number if isinstance(number, TurnLevel) else TURN_LEVELS[number - 1]
    rng = random.Random(seed)
    planner = Planner(rules, state.to_move, score, rng, started + BEAM_SHARE * ms / 1000)
    endgame = level.reading and movable_stones(state.board, state.to_move) <= ENDGAME_STONES
    attacking = level.attack and not endgame and behind(state)
    if attacking:
        me, king = state.to_move, state.kings[state.to_move - 1]
        planner.shape = lambda position: march(position.board, me, king)
    found = planner.every_completion(state) if endgame else []
    if not any(completion.clean for completion in found):
        found = planner.completions(state, level)
    if found[0].value != WON and not any(completion.clean for completion in found):
        # No clean turn among those the beam kept: look for one depth first, with the rest
        # of the turn's time (never a group wasted for want of looking).
        planner.deadline = max(started + ms / 1000, time.perf_counter() + LOOK_MS / 1000)
        found = planner.every_completion(state, first=True) or found
    if found[0].value == WON:
        return Plan(found[0].moves, planner.played)
    found.sort(key=lambda completion: (completion.clean, completion.value), reverse=True)
    clean = [completion for completion in found if completion.clean] or found[:1]
    boards: set[Any] = set()
    distinct = []  # one completion a board, the best-scored, best first
    for completion in clean:
        if completion.end.board not in boards:
            boards.add(completion.end.board)
            distinct.append(completion)
    judged = level.judged
    if endgame:
        # The score hardly tells clean endgame turns apart; the reading does, and a reading
        # of one turn ahead stops at the first turn it completes: read many.
        judged = max(judged, ENDGAME_JUDGED)
    kept = distinct[:judged]
    values = [planner.judge(completion, level) for completion in kept]
    if level.reading:
        later = planner.read(kept, started + ms / 1000)
        values = [value + READING_WEIGHT * n for value, n in zip(values, later, strict=True)]
    if attacking and bonus is None:
        bonus = attack
    if bonus is not None:
        values = [
            value + (bonus(rules, c.end) if rules.outcome(c.end) is None else 0.0)
            for value, c in zip(values, kept, strict=True)
        ]
    ranked = sorted(range(len(kept)), key=lambda index: (-values[index], index))
    return Plan(kept[rng.choice(ranked[: level.choice])].moves, planner.played)


class Plans:
    """The moves planned for the rest of a turn, by the position before each: the next
    answers of the turn, in the process that planned it."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.known: OrderedDict[tuple[Any, int], str] = OrderedDict()

    def next_move(self, state: Any, number: int) -> str | None:
        return self.known.get((state, number))

    def keep(self, rules: Any, state: Any, number: int, moves: list[str]) -> None:
        for move in moves:
            self.known[(state, number)] = move
            self.known.move_to_end((state, number))
            state = rules.play(state, move)
        while len(self.known) > self.size:
            self.known.popitem(last=False)


PLANS = Plans()


def turn_move(
    rules: Any, state: Any, number: int, score: Any, seed: int, ms: float
) -> tuple[str, int]:
    """The move level `number` plays now, the next of its plan for this turn, and the
    positions played to plan it (0: the plan was made at an earlier move)."""
    known = PLANS.next_move(state, number)
    if known is not None:
        return known, 0
    plan = plan_turn(rules, state, number, score, seed, ms)
    PLANS.keep(rules, state, number, plan.moves)
    return plan.moves[0], plan.played
