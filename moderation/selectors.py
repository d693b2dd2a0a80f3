"""What moderators read: the queue, a report with its context, a user's record, the log."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from accounts.models import User
from games.models import ChatLine, Game
from moderation.models import Action, Report

# Chat lines shown on each side of a reported one, and a user's recent lines.
AROUND = 6
RECENT = 20
LOG_PAGE = 200


def open_reports() -> QuerySet[Report]:
    """The queue: open reports, oldest first."""
    return (
        Report.objects.filter(status=Report.Status.OPEN)
        .select_related("reporter", "user", "game", "line")
        .order_by("created_at", "pk")
    )


def chat_around(line: ChatLine) -> list[ChatLine]:
    """The reported line with the lines before and after it in its room (removed ones too:
    the moderator sees what was said)."""
    room = ChatLine.objects.filter(game_id=line.game_id, room=line.room).select_related("user")
    before = list(room.filter(pk__lt=line.pk).order_by("-pk")[:AROUND])
    after = list(room.filter(pk__gt=line.pk).order_by("pk")[:AROUND])
    return [*reversed(before), line, *after]


def user_record(user: User) -> dict[str, Any]:
    """A user's recent chat lines, the actions taken on them, and the reports about them."""
    return {
        "lines": list(
            ChatLine.objects.filter(user=user).select_related("game").order_by("-pk")[:RECENT]
        ),
        "actions": list(
            Action.objects.filter(user=user).select_related("moderator").order_by("-pk")[:RECENT]
        ),
        "reports": list(
            Report.objects.filter(user=user).select_related("reporter").order_by("-pk")[:RECENT]
        ),
        "games": list(
            (Game.objects.filter(player1=user) | Game.objects.filter(player2=user))
            .select_related("player1", "player2")
            .order_by("-pk")[:RECENT]
        ),
    }


def report_context(report: Report) -> dict[str, Any]:
    context: dict[str, Any] = {"report": report}
    if report.line is not None:
        context["around"] = chat_around(report.line)
    if report.game is not None:
        context["game"] = Game.objects.select_related("player1", "player2").get(pk=report.game_id)
    if report.user is not None:
        context["record"] = user_record(report.user)
    context["others"] = (
        Report.objects.filter(target=report.target).exclude(pk=report.pk).select_related("reporter")
    )
    return context


def audit_log() -> QuerySet[Action]:
    return Action.objects.select_related("moderator", "user", "game", "report").order_by("-pk")[
        :LOG_PAGE
    ]
