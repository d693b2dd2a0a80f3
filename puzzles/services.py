"""Changes to puzzles (docs/PUZZLES.md): adding verified ones (the dev-only generator's door),
and a player's answer, rated for the player and the puzzle in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from games.engine import rules_for
from games.messages import translated
from games.rules import IllegalMove
from games.rules.notation import parse_position
from puzzles import selectors
from puzzles.models import Attempt, Puzzle, PuzzleRating
from ratings.glicko import Glicko, after_game
from realtime.errors import ServiceError


def add_verified(
    *,
    slug: str,
    options: dict[str, Any],
    position: str,
    solution: str,
    goal: str,
    line: list[str],
    verified: str,
    themes: list[str],
    game_id: int | None = None,
    ply: int = 0,
) -> Puzzle | None:
    """Store a puzzle the generator verified (None when that position is a puzzle already).
    The position and the solution are checked by the rules once more: a puzzle that does
    not parse or whose answer is not a legal move is a bug of the generator, not a puzzle."""
    rules = rules_for(slug, options)
    state = parse_position(rules, position)
    after = rules.play(state, solution)  # IllegalMove: refused
    del after
    try:
        with transaction.atomic():
            return Puzzle.objects.create(
                slug=slug,
                options=options,
                position=position,
                to_move=rules.to_move(state),
                solution=rules.canonical_move(state, solution),
                goal=goal,
                line=line,
                verified=verified,
                themes="," + ",".join(sorted(set(themes))) + "," if themes else "",
                game_id=game_id,
                ply=ply,
            )
    except IntegrityError:  # the same position found twice
        return None


@dataclass(frozen=True)
class Answered:
    """What an answer did: whether it was the solution, and (for a player's first answer
    to the puzzle) both ratings after it."""

    puzzle: Puzzle
    move: str  # as the rules write it
    correct: bool
    rated: bool
    rating: PuzzleRating | None
    change: float  # the player's rating change (0 when not rated)


def answer(*, user: Any, puzzle_id: int, move: str) -> Answered:
    """Judge `move` against the puzzle (the rules read it: "c" and " C " are the same pit). A
    signed-in player's first answer rates the player and the puzzle, each as the other's
    opponent (Glicko-2: solving is a win for the player, missing a win for the puzzle), in
    one transaction with the attempt; later answers, and anyone not signed in, are told
    whether it was right and rated nothing."""
    puzzle = selectors.load(puzzle_id)
    rules = rules_for(puzzle.slug, puzzle.options)
    state = parse_position(rules, puzzle.position)
    if not isinstance(move, str) or not move.strip():
        raise ServiceError("bad_message", _('An answer needs "move": a move, as text.'))
    try:
        rules.play(state, move)
        played = str(rules.canonical_move(state, move))
    except IllegalMove as error:
        raise ServiceError("illegal_move", translated(error)) from None
    correct = played == puzzle.solution
    if not getattr(user, "is_authenticated", False):
        return Answered(puzzle, played, correct, False, None, 0.0)
    with transaction.atomic():
        locked = Puzzle.objects.select_for_update().get(pk=puzzle.pk)
        mine, _made = PuzzleRating.objects.select_for_update().get_or_create(
            user=user, slug=puzzle.slug
        )
        if Attempt.objects.filter(user=user, puzzle=locked).exists():
            return Answered(locked, played, correct, False, mine, 0.0)
        player = Glicko(mine.rating, mine.deviation, mine.volatility)
        problem = Glicko(locked.rating, locked.deviation, locked.volatility)
        score = 1.0 if correct else 0.0
        player_after = after_game(player, problem, score)
        problem_after = after_game(problem, player, 1.0 - score)
        Attempt.objects.create(
            user=user,
            puzzle=locked,
            move=played,
            solved=correct,
            rating_before=player.rating,
            rating_after=player_after.rating,
        )
        _store(mine, player_after)
        mine.attempts += 1
        mine.solved += int(correct)
        mine.save()
        _store(locked, problem_after)
        locked.plays += 1
        locked.solved += int(correct)
        locked.save()
    return Answered(locked, played, correct, True, mine, player_after.rating - player.rating)


def _store(row: Puzzle | PuzzleRating, glicko: Glicko) -> None:
    row.rating, row.deviation, row.volatility = glicko.rating, glicko.deviation, glicko.volatility
