"""A computer opponent is a user (User.is_bot) with a level; the worker plays its moves."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Bot(models.Model):
    """The account of the computer at one level (1 to 5)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="bot"
    )
    level = models.PositiveSmallIntegerField(unique=True)

    def __str__(self) -> str:
        return f"bot level {self.level}"


class SearchJob(models.Model):
    """A position the computer is asked to evaluate for a person (the analysis board, a game
    review), searched in the bots worker's own pool of processes, apart from the computer
    players' moves. It is searched in rounds of growing length (`budgets`, ms): each round a
    fresh search, its result in `result` at once, so the asker sees the view firm up."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        CANCELLED = "cancelled"
        FAILED = "failed"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="search_jobs"
    )
    # What it is for, read by the app that asked ("analysis", "review:<game id>"): the
    # worker does not look at it.
    purpose = models.CharField(max_length=40)
    index = models.PositiveIntegerField(default=0)  # the position's place in its purpose
    slug = models.CharField(max_length=40)
    options = models.JSONField(default=dict, blank=True)
    state = models.JSONField()  # the engine's JSON of the position
    budgets = models.JSONField()  # ms of each round, growing
    rounds = models.PositiveSmallIntegerField(default=0)  # rounds done
    result = models.JSONField(null=True, blank=True)  # bots.search.evaluate.Evaluation
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "id"]),
            models.Index(fields=["purpose", "index"]),
        ]

    def __str__(self) -> str:
        return f"search {self.pk} for {self.purpose} ({self.status})"
