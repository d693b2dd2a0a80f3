from __future__ import annotations

from django.conf import settings
from django.db import models


class Speed(models.TextChoices):
    REALTIME = "realtime"
    CORRESPONDENCE = "correspondence"  # and untimed games


class Rating(models.Model):
    """A player's Glicko-2 rating in one game at one speed: a cache of the rated games
    (`manage.py ratings --recompute` rebuilds it from them)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    slug = models.CharField(max_length=40)
    speed = models.CharField(max_length=16, choices=Speed.choices)
    rating = models.FloatField()
    deviation = models.FloatField()
    volatility = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "slug", "speed"], name="ratings_one_per_kind"),
        ]
        indexes = [models.Index(fields=["slug", "speed", "-rating"])]

    def __str__(self) -> str:
        return f"{self.user_id} {self.slug}/{self.speed} {self.rating:.0f}"


class RatingChange(models.Model):
    """What one rated game did to one player's rating (the graph and the game page)."""

    game = models.ForeignKey("games.Game", on_delete=models.CASCADE, related_name="+")
    player = models.PositiveSmallIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    slug = models.CharField(max_length=40)
    speed = models.CharField(max_length=16, choices=Speed.choices)
    before = models.FloatField()
    after = models.FloatField()
    deviation = models.FloatField()  # after the game
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "player"], name="ratings_change_once"),
        ]
        indexes = [models.Index(fields=["user", "slug", "speed", "id"])]

    def __str__(self) -> str:
        return f"game {self.game_id} player {self.player}: {self.before:.0f} -> {self.after:.0f}"
