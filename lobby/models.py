from __future__ import annotations

from django.db import models
from django.utils import timezone

from accounts.models import User
from games.fields import TimeControlField


class Seek(models.Model):
    """A wish to play now: one or more games, paired automatically with a compatible seek."""

    class Status(models.TextChoices):
        OPEN = "open"
        PAIRED = "paired"
        CANCELLED = "cancelled"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="seeks")
    # [{"slug": ..., "options": {... defaults filled in ...}}, ...] in order of preference
    games = models.JSONField()
    time_control = TimeControlField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # Both seeks of a pairing point at the one game it created.
    game = models.ForeignKey(
        "games.Game", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Realtime seeks vanish when their owner's last lobby socket closes.
    realtime = models.BooleanField(default=True)
    # Shown in the lobby feed (a seek paired the moment it arrives never is).
    announced = models.BooleanField(default=False)
    # Rated seeks pair only with rated seeks; [min, max]: the opponent's rating must be in it.
    rated = models.BooleanField(default=False)
    rating_range = models.JSONField(null=True, blank=True)
    # "If nobody pairs within 30 s, play the computer" at this level (None: wait for a person).
    computer_level = models.PositiveSmallIntegerField(null=True, blank=True)
    # A person's seek pairs with a bot account's only when it asks to ("Play bots too");
    # bot accounts' seeks pair with each other regardless (docs/API.md, "Bot accounts").
    bots = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["status", "created_at"])]
        constraints = [
            # A paired seek has exactly one game, and an open one none.
            models.CheckConstraint(
                condition=models.Q(status="paired", game__isnull=False)
                | (~models.Q(status="paired") & models.Q(game__isnull=True)),
                name="lobby_seek_paired_has_a_game",
            ),
        ]

    def __str__(self) -> str:
        return f"seek {self.pk} by {self.user_id} ({self.status})"


class Challenge(models.Model):
    """pbmserv's challenge, made live: to one user, or open to the first who accepts."""

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        DECLINED = "declined"
        CANCELLED = "cancelled"
        EXPIRED = "expired"

    class Side(models.TextChoices):
        FIRST = "first"  # the challenger moves first
        SECOND = "second"
        RANDOM = "random"

    challenger = models.ForeignKey(User, on_delete=models.CASCADE, related_name="challenges_sent")
    # None: an open challenge, joined through its link by the first other user who accepts.
    challenged = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.CASCADE, related_name="challenges_received"
    )
    slug = models.CharField(max_length=40)
    options = models.JSONField(default=dict, blank=True)
    side = models.CharField(max_length=6, choices=Side.choices, default=Side.RANDOM)
    time_control = TimeControlField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decline_reason = models.CharField(max_length=100, blank=True)
    rated = models.BooleanField(default=False)
    token = models.CharField(max_length=32, unique=True)
    game = models.OneToOneField(
        "games.Game", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["status", "expires_at"])]

    def __str__(self) -> str:
        return f"challenge {self.pk} ({self.status})"


class LobbyConnection(models.Model):
    """An open lobby socket, for the online count and for seeks that end with their socket."""

    channel_name = models.CharField(max_length=200, unique=True)
    user = models.ForeignKey(User, null=True, blank=True, on_delete=models.CASCADE)
    # The client's address as the server sees it (behind a proxy, from X-Forwarded-For).
    address = models.CharField(max_length=64, blank=True, default="", db_index=True)
    # The server process holding the socket, and when it last vouched for it
    # (realtime/presence.py removes rows of processes that died).
    server = models.CharField(max_length=80, blank=True, db_index=True)
    seen_at = models.DateTimeField(default=timezone.now, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.channel_name


class LobbyEvent(models.Model):
    """The public lobby feed, one version per event, kept so clients can catch up."""

    version = models.PositiveIntegerField(unique=True)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"lobby v{self.version} {self.payload.get('type')}"


class LobbyVersion(models.Model):
    """A single row whose lock hands out feed versions in commit order."""

    version = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"lobby at v{self.version}"
