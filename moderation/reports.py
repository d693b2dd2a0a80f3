"""Reports: any signed-in player (guests too) reports a chat line, a user or a game, with a
reason; moderators handle or dismiss them. Limits keep reports from being a flood: one open
report per reporter and target, and a few an hour per player and per address (settings
REPORTS_PER_USER, REPORTS_PER_GUEST, REPORTS_PER_ADDRESS; docs/MODERATION.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from games.models import ChatLine, Game
from moderation import roles
from moderation.models import Action, Report
from realtime import limits
from realtime.errors import ServiceError

MAX_TEXT = 500


@dataclass(frozen=True)
class Target:
    """What a report is about, resolved and checked: the reporter may see it."""

    kind: str
    key: str
    user: User | None = None
    game: Game | None = None
    line: ChatLine | None = None


def _number(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ServiceError("bad_message", _("That is not a number.")) from None
    if not 0 < number < 2**31:
        raise ServiceError("bad_message", _("That is not a number."))
    return number


def check_target(*, reporter: Any, kind: str, target: Any) -> Target:
    """The thing to report. A chat line must be one the reporter can read: the players' room
    of a game belongs to its two players, so nobody else may report (or read) its lines."""
    if reporter is None or not getattr(reporter, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in (or play as a guest) to report."))
    if kind == Report.Kind.CHAT:
        line = (
            ChatLine.objects.select_related("user", "game")
            .filter(pk=_number(target), removed_at__isnull=True)
            .first()
        )
        if line is None or (
            line.room == ChatLine.Room.PLAYERS and line.game.player_number(reporter) is None
        ):
            raise ServiceError("no_such_line", _("There is no such chat line."))
        if line.user_id == reporter.pk:
            raise ServiceError("cannot_report_yourself", _("That line is yours."))
        return Target(kind, f"chat:{line.pk}", user=line.user, game=line.game, line=line)
    if kind == Report.Kind.USER:
        name = str(target or "").strip()[:40]
        user = User.objects.filter(username__iexact=name).first() if name else None
        if user is None:
            raise ServiceError(
                "unknown_user", _("Nobody is called %(name)s.") % {"name": repr(name)}
            )
        if user.pk == reporter.pk:
            raise ServiceError("cannot_report_yourself", _("You cannot report yourself."))
        return Target(kind, f"user:{user.pk}", user=user)
    if kind == Report.Kind.GAME:
        game = Game.objects.select_related("player1", "player2").filter(pk=_number(target)).first()
        if game is None:
            raise ServiceError("no_such_game", _("There is no such game."))
        return Target(kind, f"game:{game.pk}", game=game)
    raise ServiceError("bad_message", _("Report a chat line, a user or a game."))


def do_report(
    *, reporter: Any, kind: str, target: Any, reason: str, text: str = "", address: str = ""
) -> Report:
    found = check_target(reporter=reporter, kind=kind, target=target)
    if reason not in Report.Reason.values:
        raise ServiceError(
            "bad_message",
            _("reason is one of %(choices)s.") % {"choices": ", ".join(Report.Reason.values)},
        )
    text = " ".join(str(text or "").split())
    if len(text) > MAX_TEXT:
        raise ServiceError(
            "report_too_long", _("Say it in at most %(most)s characters.") % {"most": MAX_TEXT}
        )
    open_reports = Report.objects.filter(reporter=reporter, status=Report.Status.OPEN)
    if open_reports.filter(target=found.key).exists():
        raise ServiceError(
            "already_reported", _("You reported that already: a moderator will look.")
        )
    rate = settings.REPORTS_PER_GUEST if reporter.is_guest else settings.REPORTS_PER_USER
    if limits.over_limit("report-user", str(reporter.pk), rate, increment=True) or (
        address
        and limits.over_limit(
            "report-address", address, settings.REPORTS_PER_ADDRESS, increment=True
        )
    ):
        raise ServiceError("too_many_reports", _("You have sent many reports lately: try later."))
    try:
        with transaction.atomic():
            return Report.objects.create(
                reporter=reporter,
                kind=found.kind,
                target=found.key,
                user=found.user,
                game=found.game,
                line=found.line,
                reason=reason,
                text=text,
            )
    except IntegrityError:  # the same report from two tabs at once
        raise ServiceError(
            "already_reported", _("You reported that already: a moderator will look.")
        ) from None


def locked_open_report(report_id: Any) -> Report:
    report = Report.objects.select_for_update().filter(pk=_number(report_id)).first()
    if report is None:
        raise ServiceError("no_such_report", _("There is no such report."))
    if report.status != Report.Status.OPEN:
        closed = {
            Report.Status.HANDLED: _("That report is handled already."),
            Report.Status.DISMISSED: _("That report is dismissed already."),
        }
        raise ServiceError(
            "report_closed", closed.get(report.status, f"That report is {report.status} already.")
        )
    return report


def close(report: Report, *, moderator: User, status: str) -> None:
    report.status = status
    report.closed_at = timezone.now()
    report.closed_by = moderator
    report.save(update_fields=["status", "closed_at", "closed_by"])


def do_dismiss(*, moderator: Any, report_id: Any, reason: str) -> Action:
    """Close a report without acting on what it reports; logged with its reason."""
    roles.check_moderator(moderator)
    reason = check_reason(reason)
    with transaction.atomic():
        report = locked_open_report(report_id)
        close(report, moderator=moderator, status=Report.Status.DISMISSED)
        return Action.objects.create(
            moderator=moderator,
            kind=Action.Kind.DISMISS,
            reason=reason,
            user=report.user,
            game=report.game,
            line=report.line,
            report=report,
        )


MAX_REASON = 500


def check_reason(reason: Any) -> str:
    """Every action is logged with why it was taken: the reason is required."""
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ServiceError(
            "reason_required", _("Write why: every action is logged with its reason.")
        )
    if len(reason) > MAX_REASON:
        raise ServiceError(
            "reason_too_long", _("Say why in at most %(most)s characters.") % {"most": MAX_REASON}
        )
    return reason
