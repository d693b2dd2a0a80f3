"""A moderator's actions. Each takes a written reason, changes what it changes through the
owning app's service, writes one audit-log row (Action), tells the users concerned
(moderation/notify.py) and, when it answers a report, closes the report as handled. All of
it in one transaction: an action that fails leaves no trace but its error."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import services as accounts
from accounts import tokens
from accounts.models import User
from games import services as games
from games.models import ChatLine, Game
from lobby.models import Seek
from lobby.services import seeks
from moderation import notify, reports, roles
from moderation.models import Action, Report
from privacy import closure
from ratings import services as ratings
from realtime.errors import ServiceError

# How long a chat mute may last, in minutes, and how the form names each.
MUTE_MINUTES = {
    60: gettext_lazy("an hour"),
    24 * 60: gettext_lazy("a day"),
    7 * 24 * 60: gettext_lazy("a week"),
    30 * 24 * 60: gettext_lazy("30 days"),
}


@dataclass(frozen=True)
class Request:
    """An action as the form (or a test) asks for it; which fields count depends on `kind`."""

    moderator: User
    kind: str
    reason: str
    username: str = ""
    game_id: Any = None
    line_id: Any = None
    minutes: Any = None
    new_name: str = ""
    report_id: Any = None


def act(request: Request) -> Action:
    roles.check_moderator(request.moderator)
    reason = reports.check_reason(request.reason)
    handler = HANDLERS.get(request.kind)
    if handler is None:
        raise ServiceError(
            "bad_message", _("Unknown action %(action)s.") % {"action": repr(request.kind[:20])}
        )
    with transaction.atomic():
        report = None
        if request.report_id not in (None, ""):
            report = reports.locked_open_report(request.report_id)
        action = handler(request, reason)
        if report is not None:
            reports.close(report, moderator=request.moderator, status=Report.Status.HANDLED)
            action.report = report
            action.save(update_fields=["report"])
    return action


def _user(request: Request) -> User:
    name = str(request.username or "").strip()[:40]
    user = User.objects.filter(username__iexact=name).first() if name else None
    if user is None:
        raise ServiceError("unknown_user", _("Nobody is called %(name)s.") % {"name": repr(name)})
    if user.pk == request.moderator.pk:
        raise ServiceError("cannot_moderate_yourself", _("Ask another moderator."))
    return user


def _game(request: Request) -> Game:
    try:
        game_id = int(request.game_id)
    except (TypeError, ValueError):
        raise ServiceError("bad_message", _("Say which game.")) from None
    game = Game.objects.select_related("player1", "player2").filter(pk=game_id).first()
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    return game


def _log(request: Request, kind: str, reason: str, **fields: Any) -> Action:
    return Action.objects.create(moderator=request.moderator, kind=kind, reason=reason, **fields)


def warn(request: Request, reason: str) -> Action:
    user = _user(request)
    action = _log(request, str(Action.Kind.WARN), reason, user=user)
    notify.tell(action, [user], lambda: _("A moderator warns you: %(reason)s") % {"reason": reason})
    return action


def mute(request: Request, reason: str) -> Action:
    user = _user(request)
    try:
        minutes = int(request.minutes)
    except (TypeError, ValueError):
        minutes = 0
    if minutes not in MUTE_MINUTES:
        raise ServiceError("bad_message", _("Mute for an hour, a day, a week or 30 days."))
    until = timezone.now() + timedelta(minutes=minutes)
    accounts.do_mute_chat(user_id=user.pk, until=until)
    action = _log(
        request, str(Action.Kind.MUTE), reason, user=user, details={"until": until.isoformat()}
    )
    notify.tell(
        action,
        [user],
        lambda: (
            _("A moderator muted your chat for %(span)s (until %(until)s UTC): %(reason)s")
            % {"span": MUTE_MINUTES[minutes], "until": f"{until:%Y-%m-%d %H:%M}", "reason": reason}
        ),
        chat_muted_until=until,
    )
    return action


def unmute(request: Request, reason: str) -> Action:
    user = _user(request)
    accounts.do_mute_chat(user_id=user.pk, until=None)
    action = _log(request, str(Action.Kind.UNMUTE), reason, user=user)
    notify.tell(
        action,
        [user],
        lambda: _("A moderator lifted your chat mute: %(reason)s") % {"reason": reason},
    )
    return action


def forbid_rated(request: Request, reason: str) -> Action:
    user = _user(request)
    accounts.do_forbid_rated(user_id=user.pk, forbidden=True)
    # Rated seeks already waiting would still pair: they are cancelled with the ban.
    waiting = Seek.objects.filter(user=user, rated=True, status=Seek.Status.OPEN)
    for seek_id in waiting.values_list("pk", flat=True):
        with suppress(ServiceError):  # paired or cancelled meanwhile
            seeks.cancel_seek(user=user, seek_id=seek_id)
    action = _log(request, str(Action.Kind.FORBID_RATED), reason, user=user)
    notify.tell(
        action,
        [user],
        lambda: _("A moderator barred you from rated games: %(reason)s") % {"reason": reason},
    )
    return action


def allow_rated(request: Request, reason: str) -> Action:
    user = _user(request)
    accounts.do_forbid_rated(user_id=user.pk, forbidden=False)
    action = _log(request, str(Action.Kind.ALLOW_RATED), reason, user=user)
    notify.tell(
        action,
        [user],
        lambda: _("You may play rated games again: %(reason)s") % {"reason": reason},
    )
    return action


def rename(request: Request, reason: str) -> Action:
    user = _user(request)
    old, new = accounts.do_rename(
        user_id=user.pk, username=request.new_name, by=request.moderator, reason=reason
    )
    action = _log(
        request,
        str(Action.Kind.RENAME),
        reason,
        user=user,
        details={"old_name": old, "new_name": new},
    )
    notify.tell(
        action,
        [user],
        lambda: (
            _("A moderator renamed you from %(old)s to %(new)s: %(reason)s")
            % {"old": old, "new": new, "reason": reason}
        ),
    )
    return action


def remove_line(request: Request, reason: str) -> Action:
    try:
        line_id = int(request.line_id)
    except (TypeError, ValueError):
        raise ServiceError("bad_message", _("Say which chat line.")) from None
    line: ChatLine = games.remove_line(line_id=line_id)
    action = _log(
        request,
        str(Action.Kind.REMOVE_LINE),
        reason,
        user=line.user,
        game=line.game,
        line=line,
        details={"text": line.text},
    )
    notify.tell(
        action,
        [line.user],
        lambda: (
            _("A moderator removed your chat line “%(line)s” in game %(game)s: %(reason)s")
            % {"line": line.text, "game": line.game_id, "reason": reason}
        ),
    )
    return action


def abort_game(request: Request, reason: str) -> Action:
    game = _game(request)
    games.abort_by_moderator(game_id=game.pk)
    action = _log(request, str(Action.Kind.ABORT_GAME), reason, game=game)
    notify.tell(
        action,
        [game.player1, game.player2],
        lambda: (
            _("A moderator aborted game %(game)s: %(reason)s") % {"game": game.pk, "reason": reason}
        ),
    )
    return action


def annul_game(request: Request, reason: str) -> Action:
    game = _game(request)
    games.annul(game_id=game.pk)
    if game.rated:
        # As `manage.py ratings --recompute` does: every rating replayed without the game.
        ratings.rebuild(ratings.recompute())
    action = _log(request, str(Action.Kind.ANNUL_GAME), reason, game=game)
    notify.tell(
        action,
        [game.player1, game.player2],
        lambda: (
            _("A moderator annulled game %(game)s: it counts for no rating. %(reason)s")
            % {"game": game.pk, "reason": reason}
        ),
    )
    return action


def close_account(request: Request, reason: str) -> Action:
    user = _user(request)
    do_close_account(user=user, reason=reason, by=request.moderator)
    action = _log(request, str(Action.Kind.CLOSE_ACCOUNT), reason, user=user)
    notify.tell(
        action,
        [user],
        lambda: _("A moderator closed your account: %(reason)s") % {"reason": reason},
    )
    return action


def revoke_tokens(request: Request, reason: str) -> Action:
    """Every API token of the user ends (accounts.tokens.revoke_all): the programs acting
    for them stop at once, their open streams too. The user may make new ones."""
    user = _user(request)
    count = tokens.revoke_all(user_id=user.pk, why="moderator")
    action = _log(
        request, str(Action.Kind.REVOKE_TOKENS), reason, user=user, details={"tokens": count}
    )
    notify.tell(
        action,
        [user],
        lambda: _("A moderator revoked your API tokens: %(reason)s") % {"reason": reason},
    )
    return action


def do_close_account(*, user: User, reason: str, by: User) -> None:
    """The one door from moderation to closing an account: the same closing as the player's
    own (renamed, name retired, games ended, seeks and challenges withdrawn)."""
    closure.close_account(user=user, reason=reason, by=by)


HANDLERS: dict[str, Callable[[Request, str], Action]] = {
    str(Action.Kind.WARN): warn,
    str(Action.Kind.MUTE): mute,
    str(Action.Kind.UNMUTE): unmute,
    str(Action.Kind.FORBID_RATED): forbid_rated,
    str(Action.Kind.ALLOW_RATED): allow_rated,
    str(Action.Kind.RENAME): rename,
    str(Action.Kind.REMOVE_LINE): remove_line,
    str(Action.Kind.ABORT_GAME): abort_game,
    str(Action.Kind.ANNUL_GAME): annul_game,
    str(Action.Kind.CLOSE_ACCOUNT): close_account,
    str(Action.Kind.REVOKE_TOKENS): revoke_tokens,
}
