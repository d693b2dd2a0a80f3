"""Following games and players: the only code that changes follows, and the news they bring.

News goes to the follower's sockets as a personal `followed` frame (the lobby socket and the
notification socket of every page), and by e-mail to correspondence players who asked for it
(`User.email_on_follow`; queued, sent by the sweeper).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from accounts import restrictions
from accounts.language import for_user
from accounts.models import User
from follows.models import Follow, FollowMail
from games import reasons
from games.models import Game
from games.selectors import title_for
from lobby import protocol
from lobby.payloads import bot_seats
from lobby.services import feed
from realtime import metrics, outgoing_mail
from realtime.errors import ServiceError

logger = logging.getLogger(__name__)

MAX_FOLLOWS = 500


def follows_player(follower_id: int, followed_id: int) -> bool:
    """accounts.circles' reader: "people I follow" (registered in FollowsConfig.ready)."""
    return Follow.objects.filter(user_id=follower_id, player_id=followed_id).exists()


def followed_names(follower_id: int) -> list[str]:
    """accounts.circles' second reader: the names of the players a user follows."""
    return list(
        Follow.objects.filter(user_id=follower_id, player__isnull=False).values_list(
            "player__username", flat=True
        )
    )


def _signed_in(user: Any) -> User:
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in (or play as a guest) to follow."))
    return user


def _room_for_one_more(user: User) -> None:
    if Follow.objects.filter(user=user).count() >= MAX_FOLLOWS:
        raise ServiceError(
            "too_many_follows",
            _("You can follow at most %(most)s games and players.") % {"most": MAX_FOLLOWS},
        )


def follow_game(*, user: Any, game_id: Any) -> Game:
    user = _signed_in(user)
    if not isinstance(game_id, int) or isinstance(game_id, bool):
        raise ServiceError("bad_message", _('Say which game: {"game": id}.'))
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        if not Follow.objects.filter(user=user, game=game).exists():
            _room_for_one_more(user)
            Follow.objects.create(user=user, game=game)
    return game


def follow_player(*, user: Any, username: Any) -> User:
    user = _signed_in(user)
    target = _named(username)
    if target.pk == user.pk:
        raise ServiceError("cannot_follow_yourself", _("You cannot follow yourself."))
    restrictions.check_may_follow(follower=user, target=target)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        if not Follow.objects.filter(user=user, player=target).exists():
            _room_for_one_more(user)
            Follow.objects.create(user=user, player=target)
    return target


def unfollow(*, user: Any, game_id: Any = None, username: Any = None) -> None:
    user = _signed_in(user)
    if game_id is not None:
        Follow.objects.filter(user=user, game_id=game_id).delete()
    elif username is not None:
        Follow.objects.filter(user=user, player=_named(username)).delete()
    else:
        raise ServiceError("bad_message", _('Say what: {"game": id} or {"user": name}.'))


def _named(username: Any) -> User:
    if not isinstance(username, str) or not username.strip():
        raise ServiceError("bad_message", _('Say whom: {"user": name}.'))
    target = User.objects.filter(username__iexact=username.strip()[:150]).first()
    if target is None:
        raise ServiceError(
            "unknown_user", _("Nobody is called %(name)s.") % {"name": repr(username.strip()[:40])}
        )
    return target


def following(user: Any) -> dict[str, list[Any]]:
    """What the user follows: game ids and player names."""
    rows = Follow.objects.filter(user=user).select_related("player")
    return {
        "games": sorted(row.game_id for row in rows if row.game_id),
        "players": sorted((row.player.username for row in rows if row.player), key=str.lower),
    }


# --- news (games.lifecycle's receivers, after the game's transaction committed) -------------


def _game_view(game: Game, follower: User) -> dict[str, Any]:
    """The game as a follower's news names it: its name with its options in the follower's
    language, not in that of whoever made the news (ZigZag (6 trous, 5 graines))."""
    with translation.override(for_user(follower)):
        name = title_for(game.slug, game.options)
    return {
        "id": game.pk,
        "name": name,
        "players": {"1": game.player1.username, "2": game.player2.username},
        "bot_accounts": bot_seats(game),
    }


def games_started(games: list[Game], **_: Any) -> None:
    """Tell the followers of each new game's players."""
    # One query for the whole burst (a tournament's wave starts hundreds of games at once).
    followers: dict[int, list[Follow]] = {}
    everyone = {player for game in games for player in (game.player1_id, game.player2_id)}
    for follow in Follow.objects.filter(player_id__in=list(everyone)).select_related("user"):
        followers.setdefault(follow.player_id, []).append(follow)
    for game in games:
        players = {game.player1_id: game.player1, game.player2_id: game.player2}
        follows = [
            follow
            for player_id in players
            for follow in followers.get(player_id, [])
            if follow.user_id not in players
        ]
        if not follows:
            continue
        for follow in follows:
            player = players[follow.player_id]
            event = protocol.Followed(
                news="game_started",
                player=player.username,
                game=protocol.FollowedGame(**_game_view(game, follow.user)),
                result=None,
            )
            feed.tell([follow.user_id], event)
            if not game.time_control.realtime:
                _started_mail(follow.user, player, game)


def game_ended(game: Game, **_: Any) -> None:
    """Tell the followers of a game that ended (aborted games too: they are over)."""
    result = game.result()
    follows = Follow.objects.filter(game=game).select_related("user")
    for follow in follows:
        with translation.override(for_user(follow.user)):  # the reason, in each one's language
            shown = reasons.translate_result(result)
        event = protocol.Followed(
            news="game_ended",
            player=None,
            game=protocol.FollowedGame(**_game_view(game, follow.user)),
            result=None if shown is None else protocol.FollowedResult(**shown),
        )
        feed.tell([follow.user_id], event)
        if not game.time_control.realtime:
            _ended_mail(follow.user, game, result)


# The mails are written when the news happens, in each follower's language (not the language
# of whoever made the news happen), and sent later as they were written.


def _started_mail(user: User, player: User, game: Game) -> None:
    if not user.email or not user.email_on_follow:
        return
    with translation.override(for_user(user)):
        words = {"name": player.username, "game": title_for(game.slug, game.options)}
        subject = _("%(name)s started %(game)s #%(number)s") % {**words, "number": game.pk}
        opening = _("%(name)s, whom you follow, started a game:") % words
        _queue_mail(user, subject, opening, game)


def _ended_mail(user: User, game: Game, result: dict[str, Any] | None) -> None:
    if not user.email or not user.email_on_follow:
        return
    with translation.override(for_user(user)):
        reason = reasons.translate(result["reason"]) if result else pgettext("a game", "over")
        words = {"game": title_for(game.slug, game.options), "number": game.pk, "reason": reason}
        subject = _("%(game)s #%(number)s is over: %(reason)s") % words
        opening = _("The game you follow is over (%(reason)s):") % words
        _queue_mail(user, subject, opening, game)


def _queue_mail(user: User, subject: str, opening: str, game: Game) -> None:
    """Store the mail; the caller has made the follower's language the active one."""
    if not user.email or not user.email_on_follow:
        return
    link = f"{settings.SITE_URL.rstrip('/')}/games/{game.pk}/"
    body = _("%(opening)s\n\n%(link)s\n\nStop these e-mails on your profile: %(profile)s\n") % {
        "opening": opening,
        "link": link,
        "profile": f"{settings.SITE_URL.rstrip('/')}/@{user.username}/",
    }
    FollowMail.objects.create(user=user, subject=subject[:200], body=body)


def send_mails(limit: int = 100, **_: Any) -> int:
    """Send the queued follow e-mails (the sweeper's pass); each is taken by one sender."""
    began = _retry.begin()
    if began is None:  # the outgoing mail server failed a moment ago: the mails wait
        return 0
    with transaction.atomic():
        pending = list(
            FollowMail.objects.select_for_update(skip_locked=True)
            .select_related("user")
            .order_by("pk")[:limit]
        )
        FollowMail.objects.filter(pk__in=[mail.pk for mail in pending]).delete()
    sent = 0
    for index, mail in enumerate(pending):
        try:
            send_mail(mail.subject, mail.body, None, [mail.user.email])
            sent += 1
            metrics.MAILS.labels("follow", "sent").inc()
        except OSError as error:
            metrics.MAILS.labels("follow", "failed").inc()
            if not outgoing_mail.server_failed(error):  # this mail's own fault: dropped
                logger.warning(
                    "could not e-mail %s about a followed game (%r)", mail.user.username, error
                )
                continue
            # The server's failure: this mail and the rest wait for the next try.
            FollowMail.objects.bulk_create(
                [
                    FollowMail(user_id=m.user_id, subject=m.subject, body=m.body)
                    for m in pending[index:]
                ]
            )
            wait = _retry.failed(began)
            if wait is not None:
                logger.warning(
                    "the follow mails wait: the outgoing mail server failed (%r); "
                    "next try in %.0f s",
                    error,
                    wait,
                )
            return sent
    _retry.succeeded()
    return sent


# Mails wait for a failing outgoing mail server as the mail door's replies do
# (realtime/outgoing_mail.py).
_retry = outgoing_mail.Backoff()
