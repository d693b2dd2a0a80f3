"""Players: the bottom of the app tree (games and the lobby build on accounts)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.db.models.functions import Lower

from accounts.usernames import validate_username


class Circle(models.TextChoices):
    """Who may do something to a player (challenge them, chat with them, follow them)."""

    EVERYONE = "everyone", "Everyone"
    FOLLOWED = "followed", "People I follow"
    NOBODY = "nobody", "Nobody"


def _circle() -> models.CharField:
    return models.CharField(
        max_length=8, choices=Circle.choices, default=Circle.EVERYONE, db_default=Circle.EVERYONE
    )


class User(AbstractUser):
    """A player. Guests are real accounts with a generated name and no password."""

    username = models.CharField(
        max_length=20,
        unique=True,
        validators=[validate_username],
        help_text="3 to 20 letters, digits, '_' or '-', starting with a letter.",
        error_messages={"unique": "That name is taken."},
    )
    is_guest = models.BooleanField(default=False)
    # Correspondence: "your move" e-mails when no socket of theirs is on the game.
    email_on_move = models.BooleanField(default=True)
    # Correspondence players may also hear of followed games and players by e-mail.
    email_on_follow = models.BooleanField(default=False, db_default=False)
    # The computer's accounts (bots/): they play through the services like anyone else.
    is_bot = models.BooleanField(default=False, db_default=False)
    # The player's own controls (docs/MODERATION.md), on top of blocks: who may challenge
    # them, whose lines they see in the players' room, who may follow them.
    may_challenge = _circle()
    may_chat = _circle()
    may_follow = _circle()
    # Restrictions a moderator sets (moderation/): kept here so that games and the lobby,
    # which enforce them, need not import the app above them.
    chat_muted_until = models.DateTimeField(null=True, blank=True)
    rated_forbidden = models.BooleanField(default=False, db_default=False)

    objects = UserManager()

    class Meta:
        constraints = [
            # "Alice" and "alice" are one player to the people who read the names.
            models.UniqueConstraint(Lower("username"), name="lobby_user_username_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.username


class Block(models.Model):
    """`blocker` wants nothing from `blocked`: no challenges, no chat lines."""

    blocker = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocks")
    blocked = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocked_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="accounts_block_once"),
            models.CheckConstraint(
                condition=~models.Q(blocker=models.F("blocked")), name="accounts_block_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.blocker_id} blocks {self.blocked_id}"
