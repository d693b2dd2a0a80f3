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
