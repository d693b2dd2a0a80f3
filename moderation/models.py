"""Reports from players, what moderators did (the audit log), and what the users were told."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy


class Report(models.Model):
    """A player's report of a chat line, a user or a game, waiting for a moderator."""

    class Kind(models.TextChoices):
        CHAT = "chat", gettext_lazy("a chat line")
        USER = "user", gettext_lazy("a user")
        GAME = "game", gettext_lazy("a game")

    class Reason(models.TextChoices):
        ABUSE = "abuse", gettext_lazy("Insults, harassment or hate")
        NAME = "name", gettext_lazy("An offensive name")
        CHEATING = "cheating", gettext_lazy("Help from a computer or another person")
        SPAM = "spam", gettext_lazy("Spam or advertising")
        OTHER = "other", gettext_lazy("Something else")

    class Status(models.TextChoices):
        OPEN = "open"
        HANDLED = "handled"
        DISMISSED = "dismissed"

    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=4, choices=Kind.choices)
    # "chat:12", "user:5", "game:9": one open report per reporter and target.
    target = models.CharField(max_length=32)
    # What was reported: the user (the chat line's author, or the reported user), the game
    # (the chat line's, or the reported game) and the chat line.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    game = models.ForeignKey("games.Game", null=True, blank=True, on_delete=models.CASCADE)
    line = models.ForeignKey("games.ChatLine", null=True, blank=True, on_delete=models.CASCADE)
    reason = models.CharField(max_length=10, choices=Reason.choices)
    text = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        permissions = [("moderate", "Can read reports and act as a moderator")]
        constraints = [
            models.UniqueConstraint(
                fields=["reporter", "target"],
                condition=models.Q(status="open"),
                name="moderation_one_open_report_per_target",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            models.Index(fields=["reporter", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"report {self.pk} of {self.target} ({self.status})"


class Action(models.Model):
    """One moderator's action, with its written reason: the audit log staff read."""

    class Kind(models.TextChoices):
        WARN = "warn", gettext_lazy("Warn")
        MUTE = "mute", gettext_lazy("Mute chat")
        UNMUTE = "unmute", gettext_lazy("Lift the chat mute")
        FORBID_RATED = "forbid_rated", gettext_lazy("Forbid rated play")
        ALLOW_RATED = "allow_rated", gettext_lazy("Allow rated play again")
        RENAME = "rename", gettext_lazy("Rename")
        REMOVE_LINE = "remove_line", gettext_lazy("Remove a chat line")
        ABORT_GAME = "abort_game", gettext_lazy("Abort the game")
        ANNUL_GAME = "annul_game", gettext_lazy("Annul the game")
        CLOSE_ACCOUNT = "close_account", gettext_lazy("Close the account")
        REVOKE_TOKENS = "revoke_tokens", gettext_lazy("Revoke the API tokens")
        DISMISS = "dismiss", gettext_lazy("Dismiss a report")

    moderator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=14, choices=Kind.choices)
    reason = models.CharField(max_length=500)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    game = models.ForeignKey("games.Game", null=True, blank=True, on_delete=models.SET_NULL)
    line = models.ForeignKey("games.ChatLine", null=True, blank=True, on_delete=models.SET_NULL)
    report = models.ForeignKey(Report, null=True, blank=True, on_delete=models.SET_NULL)
    # What the action changed, for the log: {"until": ..., "old_name": ..., "new_name": ...}.
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.kind} by {self.moderator_id} on {self.user_id or self.game_id}"


class Notice(models.Model):
    """What a user is told of an action: shown on their next page, once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.ForeignKey(Action, on_delete=models.CASCADE, related_name="notices")
    text = models.CharField(max_length=800)
    created_at = models.DateTimeField(auto_now_add=True)
    shown_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["user"], condition=models.Q(shown_at__isnull=True), name="notice_pending"
            )
        ]

    def __str__(self) -> str:
        return f"notice to {self.user_id}: {self.text[:30]}"
