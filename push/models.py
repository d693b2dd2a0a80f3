"""A browser's push subscription, the kinds of notice a player asked for, and the notices
waiting to be sent (written when the news happens, sent by the sweeper: docs/PROTOCOL.md,
"Push notices")."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy


class Kind:
    """What a notice is about (the protocol's names): each is turned on or off on the
    settings page."""

    MOVE_CORRESPONDENCE = "move_correspondence"
    MOVE_REALTIME = "move_realtime"
    CHALLENGE = "challenge"
    TOURNAMENT_GAME = "tournament_game"
    OFFER = "offer"


# Each kind as the settings page names it, in the settings page's order.
KIND_LABELS: dict[str, Any] = {
    Kind.MOVE_CORRESPONDENCE: gettext_lazy("Your move in a correspondence or untimed game"),
    Kind.MOVE_REALTIME: gettext_lazy(
        "Your move in a real-time game, when the game is not open on any of your screens"
    ),
    Kind.CHALLENGE: gettext_lazy("A challenge to you"),
    Kind.TOURNAMENT_GAME: gettext_lazy("Your tournament game has started"),
    Kind.OFFER: gettext_lazy("Your opponent offers a draw or asks to take a move back"),
}
KINDS = list(KIND_LABELS)


class Subscription(models.Model):
    """One browser's push subscription (PushSubscription.toJSON()): where its push service
    takes the notices, and the keys they are encrypted for."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions"
    )
    endpoint = models.CharField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=100)
    auth = models.CharField(max_length=50)
    # The page's language when it subscribed: the notices' language while the account has
    # not chosen one (accounts/language.py).
    language = models.CharField(max_length=8, blank=True, default="")
    # The session that subscribed: logging out of it removes the subscription.
    session_key = models.CharField(max_length=40, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(default=timezone.now)
    succeeded_at = models.DateTimeField(null=True, blank=True)
    # Failed sends in a row (a success resets it); push/sending.py drops a subscription that
    # failed DROP_AFTER_FAILURES times in a row.
    failures = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"push for {self.user_id}: {self.endpoint[:60]}"


class Choices(models.Model):
    """The kinds of notice a player wants. No row: none (push was never turned on); the
    first subscription makes one with every kind on."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    move_correspondence = models.BooleanField(default=True)
    move_realtime = models.BooleanField(default=True)
    challenge = models.BooleanField(default=True)
    tournament_game = models.BooleanField(default=True)
    offer = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"push choices of {self.user_id}"

    def as_dict(self) -> dict[str, bool]:
        return {kind: bool(getattr(self, kind)) for kind in KINDS}


class Notice(models.Model):
    """A notice to send: written after the news committed, sent (and deleted) by the sweeper's
    pass, which decides then whether it is still news and builds it in the reader's language.
    A notice for one `subscription` is a send to retry (`attempts` made, due at `due_at`)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=24, choices=list(KIND_LABELS.items()))
    game = models.ForeignKey("games.Game", null=True, blank=True, on_delete=models.CASCADE)
    # The reader's side in the game, and the game's ply when the news happened.
    player = models.PositiveSmallIntegerField(null=True, blank=True)
    ply = models.PositiveIntegerField(null=True, blank=True)
    # An offer's kind ("draw", "takeback").
    detail = models.CharField(max_length=16, blank=True, default="")
    challenge = models.ForeignKey(
        "lobby.Challenge", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    tournament = models.ForeignKey(
        "tournaments.Tournament",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    subscription = models.ForeignKey(
        Subscription, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    due_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["due_at", "id"], name="push_notice_due")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user_id}"
