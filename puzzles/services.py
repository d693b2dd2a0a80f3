"""Changes to puzzles (docs/PUZZLES.md): adding verified ones (the dev-only generator's door),
and a player's answer, rated for the player and the puzzle in one transaction."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from games.engine import rules_for
from games.rules.notation import parse_position
from puzzles.models import Puzzle


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
                themes=themes,
                game_id=game_id,
                ply=ply,
            )
    except IntegrityError:  # the same position found twice
        return None
