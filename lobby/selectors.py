"""Reads for the lobby: its snapshot, the stored feed, the live games list and the pages'
listings. Reads import no service (lobby.services import these): the wire views of rows come
from lobby.payloads."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import msgspec
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from games import reasons
from games.models import Game, GameConnection
from games.rules import available_games
from games.selectors import title_for
from lobby import protocol
from lobby.models import Challenge, LobbyConnection, LobbyEvent, LobbyVersion, Seek
from lobby.payloads import challenge_payload, live_game, seek_payload
from realtime.presence import HANDED_OVER
from realtime.protocol import encode

LIVE_GAMES_SHOWN = 50
# A game nobody has moved in (or otherwise acted on) for this long is not live any more: it
# stays in its players' lists, off the live ones (an untimed game has no clock to end it).
LIVE_IDLE = timedelta(hours=1)


def online_count() -> int:
    """People in the lobby: signed-in users once however many tabs, each anonymous socket."""
    counts = LobbyConnection.objects.aggregate(
        users=Count("user_id", distinct=True),
        # A visitor's socket handed over by a restarting process is back on another one.
        anonymous=Count("pk", filter=Q(user_id__isnull=True) & ~Q(server__startswith=HANDED_OVER)),
    )
    return int(counts["users"]) + int(counts["anonymous"])


def _active_games(limit: int) -> Any:
    """Games in progress and played in the last LIVE_IDLE, most recently active first, with
    their spectator counts."""
    # A subquery, not a join and GROUP BY: the database then counts spectators for the
    # `limit` games shown only, not for every active game before sorting (measured: with
    # 6,700 active games the join made every lobby snapshot a 30 ms query).
    spectators = (
        GameConnection.objects.filter(game=OuterRef("pk"), player__isnull=True)
        .order_by()
        .values("game")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return (
        Game.objects.filter(status=Game.Status.ACTIVE, updated_at__gte=timezone.now() - LIVE_IDLE)
        .select_related("player1", "player2")
        .annotate(spectators=Coalesce(Subquery(spectators), 0))
        .order_by("-updated_at")[:limit]
    )


def live_games() -> list[protocol.LiveGame]:
    return [live_game(game) for game in _active_games(LIVE_GAMES_SHOWN)]


# --- the stored feed ------------------------------------------------------------------------


def current_version() -> int:
    return LobbyVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0


# A socket further behind than this gets one snapshot instead of the events.
MAX_REPLAY = 50


def events_since(version: int, limit: int = MAX_REPLAY) -> list[dict[str, Any]] | None:
    """The public events after `version` as lobby.services.feed stamps them ({"v", "text"}),
    or None when a snapshot is the better answer."""
    latest = current_version()
    if version == latest:
        return []
    # A version from the future (a client cannot have seen it) or too far back: a snapshot.
    if version < 0 or version > latest or latest - version > limit:
        return None
    stored = (
        LobbyEvent.objects.filter(version__gt=version, version__lte=latest)
        .order_by("version")
        .values_list("version", "payload")
    )
    return [{"v": v, "text": encode(payload)} for v, payload in stored]


# The public part of the lobby snapshot is the same for everyone: in a reconnection storm
# each process builds it once per feed version (and at most this old), not once per socket.
PUBLIC_SNAPSHOT_SECONDS = 1.0
_public: tuple[float, protocol.Lobby] | None = None


def public_snapshot() -> protocol.Lobby:
    """The feed version with the seeks, live games and online count as of that version
    (a snapshot for nobody: no user, no challenges, no games of theirs)."""
    global _public
    version = current_version()
    cached = _public
    if cached is not None:
        built_at, public = cached
        if public.v == version and time.monotonic() - built_at < PUBLIC_SNAPSHOT_SECONDS:
            return public
    seeks = (
        Seek.objects.filter(status=Seek.Status.OPEN, announced=True)
        .select_related("user")
        .order_by("created_at")
    )
    public = protocol.Lobby(
        v=version,
        user=None,
        seeks=[seek_payload(s) for s in seeks[:200]],
        challenges=protocol.Challenges(incoming=[], outgoing=[]),
        games=live_games(),
        my_games=[],
        online=online_count(),
    )
    _public = (time.monotonic(), public)
    return public


def snapshot(user: Any) -> protocol.Lobby:
    return snapshots([user])[0]


# A user's own games shown in their snapshot, most recent first.
MY_GAMES_SHOWN = 20


def snapshots(users: list[Any]) -> list[protocol.Lobby]:
    """`snapshot` for many sockets at once, in order: one read of the feed's version and a
    query each for all the users' challenges and games, where each socket read them alone
    (a storm of 10,000 sockets opening spent 45% of a process's samples reading the feed's
    version for each)."""
    public = public_snapshot()
    signed_in = {user.pk: user for user in users if user is not None and user.is_authenticated}
    if not signed_in:
        return [public] * len(users)
    ids = list(signed_in)
    incoming: dict[int, list[protocol.ChallengeView]] = {pk: [] for pk in ids}
    outgoing: dict[int, list[protocol.ChallengeView]] = {pk: [] for pk in ids}
    # Challenges past their expiry are not offered, even before anyone marks them.
    pending = (
        Challenge.objects.filter(status=Challenge.Status.PENDING, expires_at__gt=timezone.now())
        .filter(Q(challenged_id__in=ids) | Q(challenger_id__in=ids))
        .select_related("challenger", "challenged")
        .order_by("created_at")
    )
    for challenge in pending:
        payload = challenge_payload(challenge)
        if challenge.challenged_id in incoming:
            incoming[challenge.challenged_id].append(payload)
        if challenge.challenger_id in outgoing:
            outgoing[challenge.challenger_id].append(payload)
    games: dict[int, list[int]] = {pk: [] for pk in ids}
    active = (
        Game.objects.filter(
            Q(player1_id__in=ids) | Q(player2_id__in=ids), status=Game.Status.ACTIVE
        )
        .order_by("-created_at")
        .values_list("pk", "player1_id", "player2_id")
    )
    for pk, *players in active:
        for player in dict.fromkeys(players):
            mine = games.get(player)
            if mine is not None and len(mine) < MY_GAMES_SHOWN:
                mine.append(pk)
    made = {
        pk: msgspec.structs.replace(
            public,
            user=protocol.Account(
                username=user.username,
                is_guest=user.is_guest,
                is_bot_account=user.bot_since is not None,
            ),
            challenges=protocol.Challenges(incoming=incoming[pk], outgoing=outgoing[pk]),
            my_games=games[pk],
        )
        for pk, user in signed_in.items()
    }
    return [
        made[user.pk] if user is not None and user.is_authenticated else public for user in users
    ]


# --- pages: the live games page and profiles (server-rendered) ---------------------------

LIVE_PAGE_SHOWN = 200
PROFILE_GAMES_SHOWN = 100


def live_games_for_page(limit: int = LIVE_PAGE_SHOWN) -> list[dict[str, Any]]:
    """Games in progress, most recently active first, with their display name and watchers."""
    games = _active_games(limit)
    return [
        {
            "id": game.pk,
            "slug": game.slug,
            "name": title_for(game.slug, game.options),
            "player1": game.player1.username,
            "player2": game.player2.username,
            "player1_is_bot_account": game.player1.bot_since is not None,
            "player2_is_bot_account": game.player2.bot_since is not None,
            "ply": game.ply,
            "spectators": game.spectators,
            "updated_at": game.updated_at,
        }
        for game in games
    ]


def user_by_name(username: str) -> Any:
    """The user with this name (any case), or None."""
    return User.objects.filter(username__iexact=username).first()


def _outcome_for(game: Game, number: int) -> str:
    """won / lost / draw / aborted, from the point of view of player `number`."""
    if game.status == Game.Status.ABORTED:
        return "aborted"
    if game.winner is None:
        return "draw"
    return "won" if game.winner == number else "lost"


def records(user: Any) -> list[dict[str, Any]]:
    """Won, lost and drawn per game (aborted games do not count), rated or not."""
    finished = Game.objects.filter(
        Q(player1=user) | Q(player2=user), status=Game.Status.FINISHED
    ).values_list("slug", "winner", "player1_id")
    names = {game["slug"]: game["name"] for game in available_games()}
    tally: dict[str, dict[str, int]] = {}
    for slug, winner, player1_id in finished:
        number = 1 if player1_id == user.pk else 2
        outcome = "drawn" if winner is None else "won" if winner == number else "lost"
        counts = tally.setdefault(slug, {"won": 0, "lost": 0, "drawn": 0})
        counts[outcome] += 1
    return [
        {"slug": slug, "name": names.get(slug, slug), **tally[slug]}
        for slug in names
        if slug in tally
    ]


def playing_now(user: Any) -> dict[str, Any] | None:
    """The game a player is playing now, for their profile: of their games in progress and
    played in the last LIVE_IDLE, a real-time one first, then the most recently active;
    None when there is none. Games against the computer count: people watch them too."""
    games = Game.objects.filter(
        Q(player1=user) | Q(player2=user),
        status=Game.Status.ACTIVE,
        updated_at__gte=timezone.now() - LIVE_IDLE,
    ).select_related("player1", "player2")
    found = max(
        games.order_by("-updated_at")[:20],
        key=lambda game: (game.time_control.realtime, game.updated_at),
        default=None,
    )
    if found is None:
        return None
    opponent = found.player2 if found.player1_id == user.pk else found.player1
    return {
        "id": found.pk,
        "name": title_for(found.slug, found.options),
        "opponent": opponent.username,
        "ply": found.ply,
    }


def last_finished_game(user: Any) -> int | None:
    """The id of the player's most recent finished game (its last position previews their
    profile when they play nothing now)."""
    return (
        Game.objects.filter(Q(player1=user) | Q(player2=user), status=Game.Status.FINISHED)
        .order_by("-updated_at")
        .values_list("pk", flat=True)
        .first()
    )


def user_games(user: Any, limit: int = PROFILE_GAMES_SHOWN) -> dict[str, list[dict[str, Any]]]:
    """A user's games: the running ones and the finished (or aborted) ones, newest first."""
    games = (
        Game.objects.filter(Q(player1=user) | Q(player2=user))
        .select_related("player1", "player2")
        .order_by("-updated_at")
    )
    listings = {
        "running": games.filter(status=Game.Status.ACTIVE),
        "finished": games.exclude(status=Game.Status.ACTIVE),
    }
    rows: dict[str, list[dict[str, Any]]] = {"running": [], "finished": []}
    for key, chosen in listings.items():
        for game in chosen[:limit]:
            number = 1 if game.player1_id == user.pk else 2
            opponent = game.player2 if number == 1 else game.player1
            rows[key].append(
                {
                    "id": game.pk,
                    "slug": game.slug,
                    "name": title_for(game.slug, game.options),
                    "side": number,
                    "opponent": opponent.username,
                    "opponent_is_guest": opponent.is_guest,
                    "opponent_is_bot": opponent.is_bot,
                    "opponent_is_bot_account": opponent.bot_since is not None,
                    "ply": game.ply,
                    "status": game.status,
                    "outcome": None if key == "running" else _outcome_for(game, number),
                    "reason": reasons.translate(game.reason),
                    "updated_at": game.updated_at,
                }
            )
    return rows
