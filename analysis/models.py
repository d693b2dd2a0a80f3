"""An analysis: a tree of moves explored from a position, owned by the user who made it and
visible to anyone with its link. Nothing in it touches a real game."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_key() -> str:
    return secrets.token_urlsafe(9)  # 12 characters: a link no one guesses


class Analysis(models.Model):
    key = models.CharField(max_length=16, unique=True, default=new_key)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="analyses"
    )
    slug = models.CharField(max_length=40)
    options = models.JSONField(default=dict, blank=True)
    # Where it came from, if from a game: the game and the move it started after.
    game = models.ForeignKey(
        "games.Game", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ply = models.PositiveIntegerField(null=True, blank=True)
    tree = models.JSONField()  # analysis.tree.Tree.to_json()
    current = models.PositiveIntegerField(default=0)  # the node its owner looked at last
    version = models.PositiveIntegerField(default=0)  # one step per change
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-updated"])]

    def __str__(self) -> str:
        return f"analysis {self.key} of {self.slug}"


class Review(models.Model):
    """The computer's review of a finished game: every position evaluated in the bots
    worker's search pool (bots/searches.py, purpose "review:<game id>"), then the win chance
    after each move and the moves where it dropped most (analysis/reviews.py)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    game = models.OneToOneField("games.Game", on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    positions = models.PositiveIntegerField()  # the game's moves + 1
    ms = models.PositiveIntegerField()  # the search's time for each position
    plies = models.JSONField(null=True, blank=True)  # once done: see reviews.review_json
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"review of game {self.game_id} ({self.status})"


class ExplorerMove(models.Model):
    """The opening explorer's sums (analysis/explorer.py): the games in which `move` was
    played from `position` (a 64-bit hash of the variant and the engine's position key), for
    one rating band and one speed, and how they went for the player who played it.

    The key is the row's primary key, whose index is the only one: a lookup reads one range
    of it (a position's rows), and counting a game updates at most explorer.PLIES rows."""

    pk = models.CompositePrimaryKey("position", "band", "speed", "move")
    position = models.BigIntegerField()
    band = models.PositiveSmallIntegerField()  # the rating band's lower bound
    speed = models.PositiveSmallIntegerField()  # explorer.SPEEDS
    move = models.CharField(max_length=100)
    games = models.PositiveIntegerField()
    wins = models.PositiveIntegerField()
    draws = models.PositiveIntegerField()
    losses = models.PositiveIntegerField()
    rating_sum = models.BigIntegerField()  # the mean ratings of the games' players, added up
    last_game = models.BigIntegerField()  # the newest game counted (a game id, for a link)

    def __str__(self) -> str:
        return f"{self.position}/{self.band}/{self.speed} {self.move}: {self.games}"
