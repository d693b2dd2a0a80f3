"""Reads of puzzles (docs/PUZZLES.md): a puzzle as the page draws it, the next one for a
player, the puzzle of the day, the themes."""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from django.db.models import Count, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from games.engine import client_moves, rules_for
from games.rules import available_games
from games.rules.notation import parse_position
from games.selectors import title_for
from puzzles.models import Attempt, Puzzle, PuzzleRating
from ratings.glicko import INITIAL_RATING, PROVISIONAL_DEVIATION
from realtime.errors import ServiceError

# The themes a puzzle may have (found by the generator, docs/PUZZLES.md), as people read them.
THEMES = {
    "capture": gettext_lazy("Captures"),
    "empty-block": gettext_lazy("Emptying a block"),
    "race": gettext_lazy("The last turns of the race"),
    "endgame": gettext_lazy("Endgames"),
    "short": gettext_lazy("Short wins"),
    "zugzwang": gettext_lazy("Forcing the opponent to empty your block"),
    "strand": gettext_lazy("Stranding the king"),
    "no-new-group": gettext_lazy("Leaving no new group"),
}
# The next puzzle is drawn from the few nearest the player's rating: not always the same one.
NEAREST = 6


def load(puzzle_id: int) -> Puzzle:
    """The puzzle, or ServiceError no_such_puzzle."""
    puzzle = Puzzle.objects.filter(pk=puzzle_id).first()
    if puzzle is None:
        raise ServiceError("no_such_puzzle", _("There is no such puzzle."))
    return puzzle


def puzzle_json(puzzle: Puzzle) -> dict[str, Any]:
    """The puzzle to solve: the position and what may be played, never the answer."""
    rules = rules_for(puzzle.slug, puzzle.options)
    state = parse_position(rules, puzzle.position)
    return {
        "id": puzzle.pk,
        "slug": puzzle.slug,
        "options": puzzle.options,
        "title": title_for(puzzle.slug, puzzle.options),
        "position": puzzle.position,
        "state": rules.to_json(state),
        "board": rules.board(),
        "to_move": puzzle.to_move,
        "legal": client_moves(rules, state),
        "goal": puzzle.goal,
        "themes": themes_of(puzzle),
        "rating": round(puzzle.rating),
        "plays": puzzle.plays,
        "game": puzzle.game_id,
        "ply": puzzle.ply,
    }


def themes_of(puzzle: Puzzle) -> list[str]:
    return [theme for theme in puzzle.themes.split(",") if theme]


def player_rating(user: Any, slug: str) -> dict[str, Any] | None:
    if not getattr(user, "is_authenticated", False):
        return None
    row = PuzzleRating.objects.filter(user=user, slug=slug).first()
    if row is None:
        return {"rating": round(INITIAL_RATING), "provisional": True, "attempts": 0, "solved": 0}
    return {
        "rating": round(row.rating),
        "provisional": row.deviation > PROVISIONAL_DEVIATION,
        "attempts": row.attempts,
        "solved": row.solved,
    }


def next_for(user: Any, slug: str, theme: str | None, rng: random.Random) -> Puzzle | None:
    """A puzzle of `slug` (and `theme`) the player has not answered, near their rating:
    one of the NEAREST above and below it, at random (anyone not signed in: near 1500)."""
    signed_in = getattr(user, "is_authenticated", False)
    rating = INITIAL_RATING
    if signed_in:
        row = PuzzleRating.objects.filter(user=user, slug=slug).first()
        rating = row.rating if row is not None else INITIAL_RATING
    found = Puzzle.objects.filter(slug=slug)
    if theme:
        found = found.filter(themes__contains=f",{theme},")
    if signed_in:
        answered = Attempt.objects.filter(user=user).values("puzzle_id")
        found = found.exclude(pk__in=answered)
    above = list(found.filter(rating__gte=rating).order_by("rating")[:NEAREST])
    below = list(found.filter(rating__lt=rating).order_by("-rating")[:NEAREST])
    near = sorted(above + below, key=lambda puzzle: abs(puzzle.rating - rating))[:NEAREST]
    return rng.choice(near) if near else None


def daily(today: date) -> Puzzle | None:
    """The puzzle of the day: the same for everyone all day, a new one each day, drawn from
    the puzzles of middling rating (of any, while there are none)."""
    middling = Puzzle.objects.filter(Q(rating__gte=1300) & Q(rating__lte=1900))
    pool = middling if middling.exists() else Puzzle.objects.all()
    count = pool.count()
    if not count:
        return None
    return pool.order_by("pk")[today.toordinal() % count]


def games_with_puzzles() -> list[dict[str, Any]]:
    """Each game that has puzzles: its name and how many."""
    counts = dict(Puzzle.objects.values("slug").annotate(n=Count("pk")).values_list("slug", "n"))
    return [
        {"slug": game["slug"], "name": title_for(game["slug"], {}), "puzzles": counts[game["slug"]]}
        for game in available_games()
        if game["slug"] in counts
    ]
