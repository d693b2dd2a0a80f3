"""Whether a position is a puzzle: one move wins (or saves the game) and no other does
(docs/PUZZLES-FINDING.md). Pure Python on the engine API; the generator stores what this
accepts through puzzles.services.add_verified.

    verdict = examine(rules, state, limits_for(rules.slug))
    verdict.found          # a Found, or None
    verdict.reason         # "accepted", or why not ("not-unique", "no-win", ...)
    find(rules, state)     # the Found alone, or None

A "win" is accepted on proof when the prover (prover.py) shows that one move forces a win
within `depth` own moves, that no other move does within as many, and that no other move
does within `depth + margin` either (so a slower win elsewhere cannot make a second answer
within that horizon). Where the prover's budget does not reach, the computer's search
decides, twice: at `search_ms` and again at `confirm_ms` with another seed, the answer must
keep a win chance of at least `high` and every other move at most `low`, each read from
the position after the move. A "save" is accepted on proof only: every other move lets the
opponent force a win within `depth`, the answer does not within `depth + margin`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from devtools.puzzles.prover import Exact, OutOfBudget, Prover, first_wins

WIN, SAVE = "win", "save"
# Why a position was not taken (the generator counts them).
OVER = "over"  # the game is over there
FORCED = "forced"  # a single legal move: no choice, no puzzle
NOT_UNIQUE = "not-unique"  # two moves or more win within the same number of moves
SLOWER_WIN = "slower-win"  # another move wins too, within the larger horizon
NO_WIN = "no-win"  # no move wins within the horizon (nor saves)
UNKNOWN = "unknown"  # the prover's budget ran out and no search was allowed
TOO_MANY = "too-many-moves"  # more moves than the search may weigh one by one
UNCLEAR = "search-unclear"  # the search found no move clearly best
UNCONFIRMED = "unconfirmed"  # the deeper search disagreed
ACCEPTED = "accepted"

# Stones (Diffusion) or seeds (ZigZag) on the board, as a share of the start, at most: the
# "endgame" theme.
ENDGAME_SHARE = 0.25
# Diffusion Chess's endgame: the mover can move at most this many stones
# (bots/search/chess_endgame.py's own bound).
CHESS_ENDGAME_STONES = 10


@dataclass(frozen=True)
class Limits:
    """How hard a position is checked. `depth`: own moves within which the answer must win
    (or the opponent must win after every other move, for a save); `margin`: own moves more
    within which no other move may win; `nodes`: the prover's budget per position;
    `search_ms`/`confirm_ms`: the two searches of the fallback (0: no fallback);
    `search_moves`: the most legal moves the fallback weighs one by one; `high`/`low`: its
    thresholds; `save`: whether save puzzles are looked for; `seconds`: a deadline for the
    whole position (the prover stops there; the search, once begun, runs its course)."""

    depth: int = 3
    margin: int = 2
    nodes: int = 200_000
    search_ms: float = 0.0
    confirm_ms: float = 0.0
    search_moves: int = 16
    high: float = 0.85
    low: float = 0.45
    save: bool = True
    seconds: float = 20.0
    save_depth: int | None = None  # for a save: the opponent's own moves (None: `depth`)


# Measured per game (docs/PUZZLES-FINDING.md): the horizons the prover reaches within its
# budget on the candidates the generator draws. The review searches 40-400 ms a position
# (analysis/reviews.py): the fallback searches 1.5 s, confirmed at 6 s (four times).
LIMITS: dict[str, Limits] = {
    "diffusion": Limits(depth=5, margin=3, nodes=300_000),
    "four-rank-diffusion": Limits(depth=4, margin=2, nodes=300_000),
    "zigzag": Limits(depth=5, margin=3, nodes=300_000),
    "diffusion-chess": Limits(depth=1, margin=1, nodes=60_000, save_depth=0),
}
SEARCH_MS, CONFIRM_MS = 1500.0, 6000.0


def limits_for(slug: str, search: bool = False) -> Limits:
    """The game's limits; with `search`, the fallback searches switched on."""
    limits = LIMITS.get(slug, Limits())
    if search:
        limits = replace(limits, search_ms=SEARCH_MS, confirm_ms=CONFIRM_MS)
    return limits


@dataclass(frozen=True)
class Found:
    """An accepted puzzle: the answer, what it achieves, the line that shows it (the answer
    first), what was checked, its themes, and how many own moves the proved win takes
    (0 when the search decided)."""

    solution: str
    goal: str
    line: tuple[str, ...]
    verified: str
    themes: tuple[str, ...]
    moves: int = 0
    method: str = "proof"


@dataclass(frozen=True)
class Verdict:
    found: Found | None
    reason: str
    seconds: float = 0.0
    nodes: int = 0
    notes: dict[str, Any] = field(default_factory=dict)


def find(
    rules: Any, state: Any, limits: Limits | None = None, seed: int = 0, exact: Exact | None = None
) -> Found | None:
    """The puzzle in `state`, or None when it is not one (see `examine`)."""
    return examine(rules, state, limits, seed, exact).found


def examine(
    rules: Any, state: Any, limits: Limits | None = None, seed: int = 0, exact: Exact | None = None
) -> Verdict:
    """Whether `state` is a puzzle for the side to move, and if not, why not. With `exact`
    (Diffusion's endgame database, `endgame_oracle`), positions it covers are not searched:
    the proofs of a single winning or saving move are exact there."""
    limits = limits or limits_for(rules.slug)
    started = time.perf_counter()
    deadline = started + limits.seconds
    if rules.outcome(state) is not None:
        return Verdict(None, OVER)
    me = rules.to_move(state)
    prover = Prover(rules, me, limits.nodes, deadline, exact=exact)
    reason, found = _proved_win(rules, state, prover, limits)
    if found is None and reason == NO_WIN and limits.save:
        reason, found = _proved_save(rules, state, prover, limits, deadline)
    if found is None and reason == UNKNOWN and limits.search_ms > 0:
        reason, found = _searched(rules, state, prover, limits, seed)
    return Verdict(
        found,
        ACCEPTED if found is not None else reason,
        time.perf_counter() - started,
        prover.made,
    )


# --- proofs --------------------------------------------------------------------------------


def _proved_win(rules: Any, state: Any, prover: Prover, limits: Limits) -> tuple[str, Found | None]:
    children = _children(prover, state)
    if children is None:
        return UNKNOWN, None
    if len(children) < 2:
        return FORCED, None
    for within in range(1, limits.depth + 1):
        winners = first_wins(rules, state, within, prover)
        if winners is None:
            return UNKNOWN, None
        if len(winners) > 1:
            return NOT_UNIQUE, None
        if winners:
            answer = winners[0]
            horizon = within + limits.margin
            for move, after in children:
                if move == answer:
                    continue
                other = prover.wins(after, horizon - 1)
                if other is None:
                    return UNKNOWN, None
                if other:
                    return SLOWER_WIN, None
            line = _proof_line(prover, state, within)
            verified = (
                f"proved: wins in {within} move{'s' * (within != 1)}; "
                f"no other move wins in {horizon}"
            )
            themes = _themes(rules, state, answer, WIN, line, within)
            return ACCEPTED, Found(answer, WIN, tuple(line), verified, themes, within)
    return NO_WIN, None


def _proved_save(
    rules: Any, state: Any, prover: Prover, limits: Limits, deadline: float
) -> tuple[str, Found | None]:
    """One move, and only one, keeps the opponent from forcing a win within `depth`."""
    me = rules.to_move(state)
    children = _children(prover, state)
    if children is None:
        return UNKNOWN, None
    budget = max(0, limits.nodes - prover.made)
    opponent = Prover(rules, 3 - me, budget, deadline, exact=prover.exact)
    depth = limits.depth if limits.save_depth is None else limits.save_depth
    holding = []
    for move, after in children:
        outcome = rules.outcome(after)
        if outcome is not None:
            if outcome.winner != 3 - me:
                holding.append(move)  # a win or a draw at once holds (no win was found)
            continue
        loses = opponent.wins(after, depth)
        if loses is None:
            return UNKNOWN, None
        if not loses:
            holding.append(move)
            if len(holding) > 1:
                return NO_WIN, None
    if len(holding) != 1:
        return NO_WIN, None
    answer = holding[0]
    after = dict(children)[answer]
    horizon = depth + limits.margin
    if rules.outcome(after) is None:
        holds = opponent.wins(after, horizon)
        if holds is None:
            return UNKNOWN, None
        if holds:
            return NO_WIN, None  # it only delays the loss
    verified = (
        f"proved: every other move loses within {depth} of the opponent's moves; "
        f"the answer does not within {horizon}"
    )
    if depth == 0:
        verified = (
            "proved: after every other move the turn cannot be completed without losing; "
            f"the answer does not lose within {horizon} of the opponent's moves"
        )
    line = (answer,)
    themes = _themes(rules, state, answer, SAVE, list(line), 0)
    return ACCEPTED, Found(answer, SAVE, line, verified, themes, 0)


def _children(prover: Prover, state: Any) -> list[tuple[str, Any]] | None:
    try:
        return prover.children(state)
    except OutOfBudget:  # the budget ran out listing the moves
        return None


def _proof_line(prover: Prover, state: Any, within: int) -> list[str]:
    try:
        return prover.line(state, within)
    except OutOfBudget:  # a line is shown, not proved: the proof's first move will do
        return []


# --- the search's fallback -----------------------------------------------------------------


def _searched(
    rules: Any, state: Any, prover: Prover, limits: Limits, seed: int
) -> tuple[str, Found | None]:
    """The computer's search, where the prover's budget does not reach: the answer's win
    chance at least `high` and every other move's at most `low`, twice."""
    from bots.search.evaluate import evaluate

    moves = prover._children.get(state)
    if moves is None:
        listed: list[str] = []
        for move in rules.legal_moves(state):
            listed.append(move)
            if len(listed) > limits.search_moves:
                return TOO_MANY, None
        moves = [(move, rules.play(state, move)) for move in listed]
    if len(moves) > limits.search_moves:
        return TOO_MANY, None
    if len(moves) < 2:
        return FORCED, None
    me = rules.to_move(state)

    def chances(ms: float, seed: int) -> list[tuple[float, str, tuple[str, ...]]]:
        rated: list[tuple[float, str, tuple[str, ...]]] = []
        for move, after in moves:
            outcome = rules.outcome(after)
            if outcome is not None:
                chance = 0.5 if outcome.winner is None else float(outcome.winner == me)
                rated.append((chance, move, ()))
                continue
            seen = evaluate(rules, after, ms, seed)
            chance = seen.win if rules.to_move(after) == me else 1.0 - seen.win
            rated.append((chance, move, seen.line))
        rated.sort(key=lambda entry: -entry[0])
        return rated

    first = chances(limits.search_ms, seed)
    if first[0][0] < limits.high or first[1][0] > limits.low:
        return UNCLEAR, None
    second = chances(limits.confirm_ms, seed + 7919)
    if second[0][1] != first[0][1] or second[0][0] < limits.high or second[1][0] > limits.low:
        return UNCONFIRMED, None
    answer = first[0][1]
    verified = (
        f"searched {limits.search_ms:.0f} ms, confirmed {limits.confirm_ms:.0f} ms: "
        f"{second[0][0]:.2f} vs at most {max(first[1][0], second[1][0]):.2f}"
    )
    line = (answer, *second[0][2])
    themes = _themes(rules, state, answer, WIN, list(line), 0)
    return ACCEPTED, Found(answer, WIN, line, verified, themes, 0, "search")


# --- themes --------------------------------------------------------------------------------


def _themes(
    rules: Any, state: Any, answer: str, goal: str, line: list[str], within: int
) -> tuple[str, ...]:
    """The puzzle's themes (docs/PUZZLES-FINDING.md has the definitions)."""
    themes: list[str] = []
    me = rules.to_move(state)
    after = rules.play(state, answer)
    slug = rules.slug
    if goal == WIN and 0 < within <= 2:
        themes.append("short")
    if _endgame(rules, state):
        themes.append("endgame")
    if slug == "zigzag" and after.captured[me - 1] > state.captured[me - 1]:
        themes.append("capture")
    end, last_mover = _line_end(rules, state, line)
    if slug in ("diffusion", "four-rank-diffusion") and end is not None:
        if end.winner == me and last_mover == me:
            themes.append("empty-block")  # the solver empties its own block itself
        elif end.winner == me:
            themes.append("zugzwang")  # the opponent must empty it for them
    if slug == "diffusion-chess" and goal == SAVE:
        themes.append("race")  # every other move loses before this turn is over
    if slug == "diffusion-chess" and goal == WIN and end is not None and end.winner == me:
        if _turns_used(rules, state, line) <= 1:
            themes.append("race")
        themes.append("strand" if "stranded" in end.reason else "no-new-group")
    return tuple(themes)


def _endgame(rules: Any, state: Any) -> bool:
    slug = rules.slug
    if slug in ("diffusion", "four-rank-diffusion"):
        return sum(state.pits) <= ENDGAME_SHARE * rules.total
    if slug == "zigzag":
        return sum(rules.unpack(state.board)) <= ENDGAME_SHARE * rules.total
    if slug == "diffusion-chess":
        from bots.search.chess_endgame import movable_stones

        return movable_stones(state.board, state.to_move) <= CHESS_ENDGAME_STONES
    return False


def _line_end(rules: Any, state: Any, line: list[str]) -> tuple[Any, int]:
    """How the line ends (the outcome, None if it does not) and who played its last move."""
    mover = rules.to_move(state)
    for move in line:
        mover = rules.to_move(state)
        state = rules.play(state, move)
    return rules.outcome(state), mover


def _turns_used(rules: Any, state: Any, line: list[str]) -> int:
    """How many of the solver's turns begin after this one before the line ends."""
    me = rules.to_move(state)
    turns = 0
    for move in line:
        before = rules.to_move(state)
        state = rules.play(state, move)
        if rules.outcome(state) is None and before != me and rules.to_move(state) == me:
            turns += 1
    return turns


def endgame_oracle(slug: str) -> Exact | None:
    """Diffusion's endgame database as the prover's exact answers (games/endgames.py), when
    this checkout has one (ENDGAMES_DIR, `make endgames`); None otherwise."""
    from games import endgames

    found = endgames.table() if slug == "diffusion" else None
    if found is None:
        return None

    def exact(state: Any) -> tuple[str, int | None] | None:
        if state.winner:
            return None
        verdict = found.probe(tuple(state.pits), int(state.to_move))
        return None if verdict is None else (verdict.result, verdict.moves)

    return exact
