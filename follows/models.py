from __future__ import annotations

from django.conf import settings
from django.db import models


class Follow(models.Model):
    """A user follows a game (news when it ends) or a player (news when they start one)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    game = models.ForeignKey("games.Game", null=True, blank=True, on_delete=models.CASCADE)
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="followers",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(game__isnull=True, player__isnull=False)
                | models.Q(game__isnull=False, player__isnull=True),
                name="follows_one_target",
            ),
            models.UniqueConstraint(
                fields=["user", "game"],
                condition=models.Q(game__isnull=False),
                name="follows_game_once",
            ),
            models.UniqueConstraint(
                fields=["user", "player"],
                condition=models.Q(player__isnull=False),
                name="follows_player_once",
            ),
        ]
        indexes = [models.Index(fields=["game"]), models.Index(fields=["player"])]

    def __str__(self) -> str:
        return f"{self.user_id} follows {self.game_id or self.player_id}"


class FollowMail(models.Model):
    """An e-mail to send about a followed game or player: written when the news happens,
    sent by the sweeper, so a slow mail server never holds up a game."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"mail to {self.user_id}: {self.subject[:30]}"
