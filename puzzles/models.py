"""Puzzles cut from finished games (docs/PUZZLES.md): a position where one move wins (or saves
the game) and no other does, proved by the rules or confirmed by the computer before it is
ever shown; and the players' and the puzzles' ratings (Glicko-2, each solving an attempt
between the two, as lichess rates both)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ratings.glicko import INITIAL_DEVIATION, INITIAL_RATING, INITIAL_VOLATILITY


class Puzzle(models.Model):
    class Goal(models.TextChoices):
        WIN = "win"  # the move wins; every other loses or does not win
        SAVE = "save"  # the move holds the game; every other loses

    slug = models.CharField(max_length=40)
    options = models.JSONField(default=dict, blank=True)
    # The position as text (docs/NOTATION.md), the side to move, and the one move asked for.
    position = models.TextField()
    to_move = models.PositiveSmallIntegerField()
    solution = models.CharField(max_length=100)
    goal = models.CharField(max_length=4, choices=Goal.choices, default=Goal.WIN)
    # The line that shows it (the solution first): the proof's or the search's.
    line = models.JSONField(default=list, blank=True)
    # What was checked: "proved in 5 moves" or "searched 2 s, confirmed 8 s" (docs/PUZZLES.md).
    verified = models.CharField(max_length=200)
    # Its themes as ",capture,endgame," (docs/PUZZLES.md): a theme is found with LIKE on every
    # database, where a JSON list is not searchable on SQLite.
    themes = models.CharField(max_length=200, blank=True, default="")
    # Where it comes from: the game (None once that game is gone) and the moves before it.
    game = models.ForeignKey(
        "games.Game", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ply = models.PositiveIntegerField(default=0)
    rating = models.FloatField(default=INITIAL_RATING)
    deviation = models.FloatField(default=INITIAL_DEVIATION)
    volatility = models.FloatField(default=INITIAL_VOLATILITY)
    plays = models.PositiveIntegerField(default=0)
    solved = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["slug", "rating"], name="puzzles_by_game_rating")]
        constraints = [
            models.UniqueConstraint(fields=["slug", "position"], name="puzzles_one_per_position")
        ]

    def __str__(self) -> str:
        return f"puzzle {self.pk} ({self.slug})"


class PuzzleRating(models.Model):
    """A player's puzzle rating in one game (puzzles of each game are their own skill)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    slug = models.CharField(max_length=40)
    rating = models.FloatField(default=INITIAL_RATING)
    deviation = models.FloatField(default=INITIAL_DEVIATION)
    volatility = models.FloatField(default=INITIAL_VOLATILITY)
    attempts = models.PositiveIntegerField(default=0)
    solved = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "slug"], name="puzzle_rating_one_per_game")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.slug} {self.rating:.0f}"


class Attempt(models.Model):
    """A player's first answer to a puzzle: the one that is rated (later tries are not)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="+")
    move = models.CharField(max_length=100)
    solved = models.BooleanField()
    rating_before = models.FloatField()
    rating_after = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "puzzle"], name="puzzle_attempt_one_per_user")
        ]
        indexes = [models.Index(fields=["user", "-created"], name="puzzle_attempts_by_user")]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.puzzle_id}: {'solved' if self.solved else 'missed'}"
