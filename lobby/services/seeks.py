"""Seeks and automatic pairing.

A seek is committed first and paired afterwards, in a matchmaking pass that holds one lock
(PostgreSQL's advisory lock) and pairs the whole queue: every committed seek is visible to
the next pass, so a compatible pair never stays unpaired, and passes never overlap. The row
locks and a conditional update are the backstop against pairing a seek twice. Lobby sockets
leave the pass to the per-process matchmaker (lobby/matchmaker.py), which batches bursts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from accounts import restrictions
from accounts.models import User
from bots import services as bots
from games import services as game_services
from games.engine import normalized_options
from games.messages import translated
from games.models import Game
from games.rules import InvalidOptions
from lobby import matching, protocol
from lobby.models import Seek
from lobby.payloads import game_summary, seek_payload, speed_of
from lobby.services import feed
from ratings import selectors as rating_selectors
from realtime import metrics
from realtime.errors import ServiceError

MAX_OPEN_SEEKS = 3
MAX_GAMES_PER_SEEK = 8
QUEUE_SCANNED = 2000
# Any fixed number: the key of PostgreSQL's advisory lock around matchmaking.
MATCHMAKING_LOCK = 7_260_001


def check_games(games: Any) -> list[dict[str, Any]]:
    """The games of a seek, validated by the engines, with their defaults filled in."""
    if isinstance(games, dict):
        games = [games]
    if not isinstance(games, list) or not games or len(games) > MAX_GAMES_PER_SEEK:
        raise ServiceError(
            "bad_message",
            _('A seek needs "games": 1 to %(most)s of {"slug": ..., "options": {}}.')
            % {"most": MAX_GAMES_PER_SEEK},
        )
    checked = []
    for entry in games:
        if not isinstance(entry, dict) or not isinstance(entry.get("slug"), str):
            raise ServiceError(
                "bad_message", _('Each game needs a "slug" (and may have "options").')
            )
        options = entry.get("options") or {}
        if not isinstance(options, dict):
            raise ServiceError("bad_message", _('"options" must be an object.'))
        try:
            full = normalized_options(entry["slug"], options)
        except InvalidOptions as error:
            raise ServiceError("invalid_options", translated(error)) from None
        choice = {"slug": entry["slug"], "options": full}
        if choice not in checked:
            checked.append(choice)
    return checked


def seek_view(
    seek: Seek, known: dict[tuple[int, str], tuple[float, bool]] | None = None
) -> matching.SeekView:
    """What matching needs of a seek; `known` are the seekers' ratings at its speed."""
    if known is None:
        known = rating_selectors.current([seek.user_id], speed_of(seek.time_control))
    return matching.SeekView(
        seek_id=seek.pk,
        user_id=seek.user_id,
        games=tuple(matching.GameChoice.of(g["slug"], g["options"]) for g in seek.games),
        time_control=seek.time_control.code,
        rated=seek.rated,
        ratings={
            g["slug"]: known[(seek.user_id, g["slug"])][0]
            for g in seek.games
            if (seek.user_id, g["slug"]) in known
        },
        rating_range=tuple(seek.rating_range) if seek.rating_range else None,
        bot_account=seek.user.bot_since is not None,
        bots=seek.bots,
    )


def check_rating_range(value: Any) -> list[int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
        or not 0 <= value[0] <= value[1] <= 4000
    ):
        raise ServiceError(
            "bad_rating_range",
            _("rating_range is [lowest, highest], whole numbers from 0 to 4000, lowest first."),
        )
    return [value[0], value[1]]


@dataclass(frozen=True)
class SeekRequest:
    """One seek as asked for, before any check."""

    user: User
    games: list[dict[str, Any]] | dict[str, Any]
    time_control: str = ""
    rated: bool = False
    rating_range: Any = None
    computer: Any = None
    bots: bool = False


def create_seek(
    *,
    user: User,
    games: list[dict[str, Any]] | dict[str, Any],
    time_control: str = "",
    rated: bool = False,
    rating_range: Any = None,
    computer: Any = None,
    bots: bool = False,
    pair_now: bool = True,
) -> tuple[Seek, Game | None]:
    """Open a seek; with pair_now, pair it at once if a compatible one is waiting (else the
    lobby's matchmaker pairs it moments later)."""
    (made,) = create_seeks(
        [SeekRequest(user, games, time_control, rated, rating_range, computer, bots)]
    )
    if isinstance(made, ServiceError):
        raise made
    return made, pair(made.pk) if pair_now else None


def create_seeks(requests: list[SeekRequest]) -> list[Seek | ServiceError]:
    """Open many seeks in one transaction, each seek or the error that refused it, in order.

    A lobby's burst (everyone seeking when a round ends) comes through here from the
    sockets (lobby.consumers): the owners' rows locked in one statement and their open seeks
    counted in one, then one INSERT, where each seek was a transaction of five round trips.
    The matchmaker pairs them afterwards."""
    results: list[Seek | ServiceError] = []
    for request in requests:
        try:
            results.append(_unsaved_seek(request))
        except ServiceError as error:
            results.append(error)
    wanted = [seek for seek in results if isinstance(seek, Seek)]
    if not wanted:
        return results
    owners = sorted({seek.user_id for seek in wanted})
    with transaction.atomic():
        # Lock the owners' rows (in one order: batches of other processes lock them too) so
        # two tabs cannot both slip under the limit; a statement counting without the locks
        # would count from before the other tab's commit.
        list(User.objects.select_for_update().filter(pk__in=owners).order_by("pk").values("pk"))
        # A bot account with BOT_MAX_GAMES games going seeks no more (read under the locks).
        full = game_services.bots_without_room(
            {seek.user_id for seek in wanted if seek.user.bot_since is not None}
        )
        open_now = dict(
            Seek.objects.filter(user_id__in=owners, status=Seek.Status.OPEN)
            .order_by()
            .values("user_id")
            .annotate(n=Count("pk"))
            .values_list("user_id", "n")
        )
        for index, seek in enumerate(results):
            if not isinstance(seek, Seek):
                continue
            if seek.user_id in full:
                results[index] = ServiceError(
                    "too_many_games",
                    _("A bot account plays at most %(most)s games at once: finish one first.")
                    % {"most": game_services.bot_max_games()},
                )
                continue
            if open_now.get(seek.user_id, 0) >= MAX_OPEN_SEEKS:
                results[index] = ServiceError(
                    "too_many_seeks",
                    _("You can have at most %(most)s open seeks.") % {"most": MAX_OPEN_SEEKS},
                )
                continue
            open_now[seek.user_id] = open_now.get(seek.user_id, 0) + 1
        Seek.objects.bulk_create([seek for seek in results if isinstance(seek, Seek)])
    return results


def _unsaved_seek(request: SeekRequest) -> Seek:
    """The checks of a seek that need no lock, and its row, not yet saved."""
    user = request.user
    if not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest to seek a game."))
    checked = check_games(request.games)
    control = game_services.check_time_control(request.time_control)
    span = check_rating_range(request.rating_range)
    computer_level = None if request.computer is None else bots.check_level(request.computer)
    if request.rated and user.is_guest:
        raise ServiceError(
            "guests_play_casual", _("Guests play casual games only: sign up to play rated.")
        )
    if request.rated:
        restrictions.check_may_play_rated(user)
    # Announced by pair() only if it has to wait: a seek paired at once never shows.
    # A correspondence seek waits for a partner after its owner leaves the lobby.
    return Seek(
        user=user,
        games=checked,
        time_control=control,
        realtime=not control.correspondence,
        rated=bool(request.rated),
        rating_range=span,
        computer_level=computer_level,
        bots=bool(request.bots),
    )


def pair(seek_id: int) -> Game | None:
    """Pair the queue now, waiting for the matchmaking lock; the game `seek_id` got, if any."""
    with transaction.atomic():
        _lock_matchmaking(wait=True)
        return _pair_queue().get(seek_id)


def pair_all() -> int:
    """One matchmaking pass, unless another process is running one: how many games started.

    The lobby's matchmaker calls this after seeks arrive: a burst of seeks is paired in a
    few statements by one pass instead of one locked transaction per seek.
    """
    with transaction.atomic():
        if not _lock_matchmaking(wait=False):
            return -1  # busy elsewhere: the caller tries again in a moment
        return len(set(_pair_queue().values()))


def _pair_queue() -> dict[int, Game]:
    """Under the matchmaking lock: pair every compatible open seek, announce the rest."""
    waiting = list(
        Seek.objects.select_for_update()
        .filter(status=Seek.Status.OPEN)
        .select_related("user")
        .order_by("pk")[:QUEUE_SCANNED]
    )
    # Bot accounts with BOT_MAX_GAMES games going are not paired: their seeks wait for a
    # game of theirs to end. Their rows are locked, so that a challenge accepted meanwhile
    # counts this pass's game (games.services.create_game locks them too).
    full = game_services.bots_without_room(
        {s.user_id for s in waiting if s.user.bot_since is not None}, lock=True
    )
    if full:
        waiting = [s for s in waiting if s.user_id not in full]
    by_id = {s.pk: s for s in waiting}
    known: dict[tuple[int, str], tuple[float, bool]] = {}
    for speed in {speed_of(s.time_control) for s in waiting}:
        users = [s.user_id for s in waiting if speed_of(s.time_control) == speed]
        known.update(rating_selectors.current(users, speed))
    pairs = [
        (by_id[older.seek_id], by_id[newer.seek_id], choice)
        for older, newer, choice in matching.pair_up(
            [seek_view(s, {k: v for k, v in known.items() if k[0] == s.user_id}) for s in waiting]
        )
    ]
    games = game_services.create_games(
        [
            game_services.new_game(
                slug=choice.slug,
                options=choice.options_dict(),
                player1=first,
                player2=second,
                time_control=a.time_control,  # pair_up pairs equal controls only
                rated=a.rated,  # and rated with rated only
            )
            for a, b, choice in pairs
            for first, second in [random.sample([a.user, b.user], 2)]
        ]
    )
    events: list[protocol.FeedEvent] = []
    paired: dict[int, Game] = {}
    for (a, b, _choice), game in zip(pairs, games, strict=True):
        paired[a.pk] = paired[b.pk] = game
        events += [_removed(s) for s in (a, b) if s.announced]
    if paired:
        # One statement for the whole pass; the backstop: a seek is paired once or not at all.
        updated = _mark_paired({seek_id: game.pk for seek_id, game in paired.items()})
        if updated != len(paired):
            raise RuntimeError(f"seeks {sorted(paired)} changed under the matchmaking lock")
        metrics.seeks_paired("person", [s.created_at for a, b, _ in pairs for s in (a, b)])
    fresh = [s for s in waiting if s.pk not in paired and not s.announced]
    if fresh:
        Seek.objects.filter(pk__in=[s.pk for s in fresh]).update(announced=True)
        events += [protocol.SeekAdded(v=feed.UNSTAMPED, seek=seek_payload(s)) for s in fresh]
    if events:
        feed.publish(*events)
    return paired


def _mark_paired(games: dict[int, int]) -> int:
    """Mark open seeks paired, each with its game (seek id -> game id), in one statement;
    how many were still open. Written out: the ORM's CASE of a WHEN per seek took 75 ms of a
    200-game pass to build."""
    table = connection.ops.quote_name(Seek._meta.db_table)
    cases = " ".join(["WHEN %s THEN %s"] * len(games))
    ids = ", ".join(["%s"] * len(games))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = %s, game_id = CASE id {cases} END "
            f"WHERE id IN ({ids}) AND status = %s",
            [
                Seek.Status.PAIRED,
                *(number for pair in games.items() for number in pair),
                *games,
                Seek.Status.OPEN,
            ],
        )
        return cursor.rowcount


def _removed(seek: Seek) -> protocol.SeekRemoved:
    return protocol.SeekRemoved(v=feed.UNSTAMPED, seek_id=seek.pk)


def _lock_matchmaking(*, wait: bool) -> bool:
    """Matchmaking is one critical section: PostgreSQL's advisory lock (SQLite's immediate
    transactions already let one writer in at a time)."""
    if connection.vendor != "postgresql":
        return True
    function = "pg_advisory_xact_lock" if wait else "pg_try_advisory_xact_lock"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)::text", [MATCHMAKING_LOCK])
        (result,) = cursor.fetchone()
    return wait or result == "true"


def announce_games(games: list[Game], **_: Any) -> None:
    """Tell the live-games list and both players (`you` says which side) of new games,
    from whichever source they came (games.lifecycle.games_started: after commit)."""
    with transaction.atomic():
        feed.tell_each(
            [
                (user_id, protocol.GameStarted(game_id=game.pk, you=number))
                for game in games
                for number, user_id in ((1, game.player1_id), (2, game.player2_id))
            ]
        )
        feed.publish(
            *(
                protocol.GameStarted(v=feed.UNSTAMPED, game_id=g.pk, game=game_summary(g))
                for g in games
            )
        )


def announce_end(game: Game, **_: Any) -> None:
    """Take a finished game off every lobby's live list (games.lifecycle.game_ended)."""
    with transaction.atomic():
        feed.publish(protocol.GameEnded(v=feed.UNSTAMPED, game_id=game.pk, status=game.status))


def cancel_seek(*, user: User, seek_id: int) -> None:
    if not isinstance(seek_id, int) or isinstance(seek_id, bool):
        raise ServiceError("bad_message", _('cancel_seek needs "seek_id", a number.'))
    with transaction.atomic():
        seek = Seek.objects.select_for_update().filter(pk=seek_id, user_id=user.pk).first()
        if seek is None:
            raise ServiceError("no_such_seek", _("You have no such seek."))
        if seek.status != Seek.Status.OPEN:
            closed = {
                Seek.Status.PAIRED: _("That seek is already paired."),
                Seek.Status.CANCELLED: _("That seek is already cancelled."),
            }
            raise ServiceError(
                "seek_closed", closed.get(seek.status, f"That seek is already {seek.status}.")
            )
        seek.status = Seek.Status.CANCELLED
        seek.save(update_fields=["status"])
        if seek.announced:
            feed.publish(_removed(seek))


def cancel_realtime_seeks(*, user_id: int) -> int:
    """Close a user's realtime seeks (their last lobby socket has gone)."""
    with transaction.atomic():
        seeks = list(
            Seek.objects.select_for_update().filter(
                user_id=user_id, status=Seek.Status.OPEN, realtime=True
            )
        )
        if not seeks:
            return 0
        Seek.objects.filter(pk__in=[s.pk for s in seeks]).update(status=Seek.Status.CANCELLED)
        removed = [_removed(s) for s in seeks if s.announced]
        if removed:
            feed.publish(*removed)
    return len(seeks)
