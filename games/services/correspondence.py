"""Long correspondence (pbmserv's 7 and 21 days): reminders and forfeits for stalled games,
and the "your move" e-mails."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage, send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.language import for_user
from games import clocks, messages, selectors
from games.engine import rules_for
from games.models import Game, GameConnection, MoveNotice, Vacation
from games.picture_cache import picture_name, png_of
from games.reply_address import reply_address
from games.services._core import locked
from games.services.ending import finish
from realtime import metrics, outgoing_mail

logger = logging.getLogger(__name__)


def _stalled_since(game: Game) -> datetime:
    return game.moved_at or game.created_at


def _waiting_player(game: Game) -> int:
    rules = rules_for(game.slug, game.options)
    return int(rules.to_move(rules.from_json(game.state)))


def stalled_games(days: float, now: datetime | None = None) -> list[int]:
    """Active correspondence and untimed games whose last move is `days` old or more."""
    now = now or timezone.now()
    rows = Game.objects.filter(
        status=Game.Status.ACTIVE, moved_at__lte=now - timedelta(days=days)
    ).only("pk", "time_control")
    return [game.pk for game in rows if not game.time_control.realtime]


def _stall(game: Game, player: int, now: datetime) -> timedelta:
    """How long the player to move has not moved, their days on vacation not counted (a
    vacation stops this countdown too: untimed games have no clock to pause)."""
    start = _stalled_since(game)
    user_id = game.player1_id if player == 1 else game.player2_id
    away = timedelta()
    for vacation in Vacation.objects.filter(user_id=user_id, ends_at__gt=start, starts_at__lt=now):
        away += min(vacation.ends_at, now) - max(vacation.starts_at, start)
    return now - start - away


def remind_stalled(now: datetime | None = None) -> int:
    """E-mail each player who has not moved for REMINDER_DAYS, once per stall; how many."""
    now = now or timezone.now()
    sent = 0
    began = _retry.begin()
    if began is None:  # the outgoing mail server failed a moment ago: not yet
        return 0
    for game_id in stalled_games(settings.REMINDER_DAYS, now):
        with transaction.atomic():
            game = locked(game_id)
            if game.status != Game.Status.ACTIVE or (
                game.reminded_at is not None and game.reminded_at > _stalled_since(game)
            ):
                continue
            player = _waiting_player(game)
            if _stall(game, player, now) < timedelta(days=settings.REMINDER_DAYS):
                continue
            earlier = game.reminded_at
            game.reminded_at = now
            game.save(update_fields=["reminded_at"])
        try:
            sent += _remind(game, player)
        except OSError as error:
            # Not reminded after all: the next pass after the wait tries this game again.
            Game.objects.filter(pk=game.pk, reminded_at=now).update(reminded_at=earlier)
            _waits("reminders", error, began)
            return sent
    _retry.succeeded()
    return sent


# The sweeper's mails wait for the outgoing mail server as the mail door's replies do: after
# a failure, 1 s, then twice as long each time up to 5 minutes (realtime/outgoing_mail.py).
_retry = outgoing_mail.Backoff()


def _waits(what: str, error: OSError, began: float) -> None:
    wait = _retry.failed(began)
    if wait is not None:
        logger.warning(
            "the %s wait: the outgoing mail server failed (%r); next try in %.0f s",
            what,
            error,
            wait,
        )


def _remind(game: Game, player: int) -> int:
    user = game.player1 if player == 1 else game.player2
    opponent = game.player2 if player == 1 else game.player1
    if not user.email or not user.email_on_move:
        return 0
    link = f"{settings.SITE_URL.rstrip('/')}/games/{game.pk}/"
    words = {
        "number": game.pk,
        "opponent": opponent.username,
        "days": f"{settings.REMINDER_DAYS:g}",
        "forfeit": f"{settings.FORFEIT_DAYS:g}",
        "link": link,
        "profile": f"{settings.SITE_URL.rstrip('/')}/@{user.username}/",
    }
    with translation.override(for_user(user)):  # the recipient's language, not the sweeper's
        # The game's name carries translated option names: built in the reader's language.
        words["game"] = selectors.title_for(game.slug, game.options)
        subject = _("Reminder: your move in %(game)s #%(number)s against %(opponent)s") % words
        text = (
            _(
                "You have not moved in %(game)s #%(number)s against %(opponent)s for "
                "%(days)s days. After %(forfeit)s days without a move the game "
                "is lost by forfeit.\n\n%(link)s\n\nGoing away? Take a vacation on your "
                "profile: %(profile)s\n"
            )
            % words
        )
    try:
        send_mail(
            subject=subject,
            message=text,
            from_email=None,
            recipient_list=[user.email],
        )
    except OSError as error:
        metrics.MAILS.labels("reminder", "failed").inc()
        if outgoing_mail.server_failed(error):
            raise  # the server's failure: the reminder is tried again (remind_stalled)
        logger.warning("could not remind %s about game %s (%r)", user.username, game.pk, error)
        return 0
    metrics.MAILS.labels("reminder", "sent").inc()
    return 1


def forfeit_stalled(now: datetime | None = None) -> int:
    """End by forfeit every game whose player to move has not moved for FORFEIT_DAYS
    (their days of vacation not counted); how many."""
    now = now or timezone.now()
    ended = 0
    for game_id in stalled_games(settings.FORFEIT_DAYS, now):
        with transaction.atomic():
            game = locked(game_id)
            if game.status != Game.Status.ACTIVE:
                continue
            player = _waiting_player(game)
            if _stall(game, player, now) < timedelta(days=settings.FORFEIT_DAYS):
                continue
            user = game.player1 if player == 1 else game.player2
            finish(
                game,
                winner=3 - player,
                termination=Game.Termination.FORFEIT,
                reason=messages.DID_NOT_MOVE
                % {"user": user.username, "days": f"{settings.FORFEIT_DAYS:g}"},
            )
            game.save()
            ended += 1
    return ended


def send_move_notices(limit: int = 100) -> int:
    """Send the pending "your move" e-mails (the sweeper calls this every pass); how many
    were sent. Each notice is taken by one sender only, even with several sweepers."""
    began = _retry.begin()
    if began is None:  # the outgoing mail server failed a moment ago: the notices wait
        return 0
    with transaction.atomic():
        pending = list(
            MoveNotice.objects.select_for_update(skip_locked=True).order_by("pk")[:limit]
        )
        # Taken out before sending (not locked while the mail server answers, which would
        # hold up a move writing the same notice); put back if the server fails.
        MoveNotice.objects.filter(pk__in=[notice.pk for notice in pending]).delete()
    sent = 0
    pending = _may_mail(pending)
    for index, notice in enumerate(pending):
        try:
            sent += notify_move(notice.game_id, notice.player)
        except OSError as error:
            left = [MoveNotice(game_id=n.game_id, player=n.player) for n in pending[index:]]
            # A newer move may have written the same notice meanwhile: one is enough.
            MoveNotice.objects.bulk_create(left, ignore_conflicts=True)
            _waits('"your move" mails', error, began)
            return sent
    _retry.succeeded()
    return sent


def _may_mail(notices: list[MoveNotice]) -> list[MoveNotice]:
    """The notices that may still become a mail, found in two queries for them all: a live
    game's moves write one each (untimed games), and most go to a player with no address, with
    these mails off, or watching the game; notify_move checks each one left in full."""
    games = Game.objects.select_related("player1", "player2").in_bulk(
        {notice.game_id for notice in notices}
    )
    watching = set(
        GameConnection.objects.filter(game_id__in=list(games), player__isnull=False).values_list(
            "game_id", "player"
        )
    )
    kept = []
    for notice in notices:
        game = games.get(notice.game_id)
        if game is None or game.status != Game.Status.ACTIVE:
            continue
        user = game.player1 if notice.player == 1 else game.player2
        if user.email and user.email_on_move and (game.pk, notice.player) not in watching:
            kept.append(notice)
    return kept


def _clock_sentence(game: Game) -> str:
    """What the clock asks of the player to move, in the active language: when a
    correspondence move is due, or that an untimed game has none (only the forfeit of a
    stalled game ends it)."""
    control = game.time_control
    due = clocks.due(game.clock)
    if control.correspondence and due is not None:
        when = datetime.fromtimestamp(due.at / 1000, tz=UTC)
        return _("Move by %(when)s UTC (%(time)s).") % {
            "when": f"{when:%Y-%m-%d %H:%M}",
            "time": selectors.time_label(control),
        }
    if control.kind == "untimed":
        return _(
            "This game has no clock, but a player who does not move for %(days)s days loses "
            "it by forfeit."
        ) % {"days": f"{settings.FORFEIT_DAYS:g}"}
    # Real-time games get no "your move" mail; should one be sent, it names the control.
    return _("The clock: %(time)s.") % {"time": selectors.time_label(control)}


def notify_move(game_id: int, player: int) -> bool:
    """E-mail `player` that it is their move, unless it no longer is (they moved before the
    sweeper's pass, by mail or on the page), a socket of theirs is on the game (they see it
    already), they have no address, or they turned these e-mails off."""
    game = Game.objects.select_related("player1", "player2").filter(pk=game_id).first()
    if game is None or game.status != Game.Status.ACTIVE:
        return False
    rules = rules_for(game.slug, game.options)
    if rules.to_move(rules.from_json(game.state)) != player:
        return False
    if GameConnection.objects.filter(game=game, player=player).exists():
        return False
    user = game.player1 if player == 1 else game.player2
    opponent = game.player2 if player == 1 else game.player1
    if not user.email or not user.email_on_move:
        return False
    link = f"{settings.SITE_URL.rstrip('/')}/games/{game.pk}/"
    with translation.override(for_user(user)):  # the recipient's language, not the mover's
        words = {
            "game": selectors.title_for(game.slug, game.options),
            "number": game.pk,
            "opponent": opponent.username,
            "link": link,
            "clock": _clock_sentence(game),
            "move": game.ply + 1,
            "board": selectors.game_text(game, last=10),
            "profile": f"{settings.SITE_URL.rstrip('/')}/@{user.username}/",
        }
        # Translators: keep "#%(number)s" as it is: a reply whose subject is left as it was
        # is known by it (pbm/handlers.py, reply_move).
        subject = _("Your move in %(game)s #%(number)s against %(opponent)s") % words
        body = (
            _(
                "%(opponent)s has moved in %(game)s #%(number)s. It is your move:\n\n"
                "%(link)s\n\n%(clock)s\n"
                "To move by mail, reply to this mail with your move as its subject (it is move "
                "#%(move)s).\n\n%(board)s\n"
                "Turn these e-mails off on your profile: %(profile)s\n"
            )
            % words
        )
        # The board above as a picture too, for a player who asked (docs/PICTURES.md).
        png = png_of(game.pk, game.ply) if user.mail_pictures else None
    message = EmailMessage(
        subject=subject,
        body=body,
        to=[user.email],
        # Replying with just the move plays it (the mail door checks the signature and ply).
        reply_to=[reply_address(user.pk, game.pk, game.ply)],
        headers={"Auto-Submitted": "auto-generated"},
    )
    if png is not None:
        message.attach(picture_name(game.pk, game.ply), png, "image/png")
    try:
        message.send()
    except OSError as error:
        metrics.MAILS.labels("move", "failed").inc()
        if outgoing_mail.server_failed(error):
            raise  # the server's failure, not this mail's: send_move_notices keeps it
        logger.warning("could not e-mail %s about game %s (%r)", user.username, game.pk, error)
        return False
    metrics.MAILS.labels("move", "sent").inc()
    return True
