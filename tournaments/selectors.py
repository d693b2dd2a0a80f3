"""Reading tournaments: the standings, the views the pages and the socket send."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from games.rules import available_games
from tournaments import protocol
from tournaments.models import Entry, Pairing, Tournament

TOP = 20  # standings lines a page is sent; a player is also sent their own
LIST_LIMIT = 50


def order_key(tournament: Tournament) -> Any:
    """How entries rank: more points first; ties by the format's tie-breaks
    (docs/TOURNAMENTS.md), then by rating and seed so that the order is total."""
    if tournament.kind == Tournament.Kind.ARENA:
        return lambda e: (-e.points, -e.wins, -e.rating, e.user_id)
    return lambda e: (-e.points, -e.tiebreak, -e.tiebreak2, e.seed or 10**9, e.user_id)


def ranked(tournament: Tournament) -> list[Entry]:
    """Every entry, best first (the withdrawn keep their place: their points stay)."""
    entries = list(
        Entry.objects.filter(tournament=tournament).select_related("user").only(*ENTRY_FIELDS)
    )
    entries.sort(key=order_key(tournament))
    return entries


ENTRY_FIELDS = (
    "id",
    "tournament_id",
    "user_id",
    "user__username",
    "user__bot_since",
    "rating",
    "seed",
    "points",
    "games",
    "wins",
    "draws",
    "losses",
    "streak",
    "playing",
    "withdrawn",
    "tiebreak",
    "tiebreak2",
    "sheet",
)


def row(entry: Entry, rank: int, tournament: Tournament) -> protocol.Row:
    arena = tournament.kind == Tournament.Kind.ARENA
    return protocol.Row(
        rank=rank,
        name=entry.user.username,
        rating=round(entry.rating),
        points=entry.points,
        games=entry.games,
        wins=entry.wins,
        draws=entry.draws,
        losses=entry.losses,
        fire=arena and entry.streak >= 2,
        playing=entry.playing,
        withdrawn=entry.withdrawn,
        tiebreak=round(entry.tiebreak, 2),
        sheet=entry.sheet[-60:],
        is_bot_account=entry.user.bot_since is not None,
    )


def standings(
    tournament: Tournament, *, concerning: set[int] | None = None, limit: int = TOP
) -> tuple[list[protocol.Row], list[protocol.Row], int]:
    """(the top lines, the lines of the users in `concerning`, how many players)."""
    # Every result sends this to the pages: rank the entries on the fields the order reads
    # (plain tuples), and load whole rows only for the lines sent, not for a thousand players.
    keys = list(Entry.objects.filter(tournament=tournament).values_list(*ORDER_FIELDS, named=True))
    keys.sort(key=order_key(tournament))
    wanted = concerning or set()
    ranks = {
        key.id: rank for rank, key in enumerate(keys, 1) if rank <= limit or key.user_id in wanted
    }
    rows = {
        entry.pk: entry
        for entry in Entry.objects.filter(pk__in=list(ranks))
        .select_related("user")
        .only(*ENTRY_FIELDS)
    }
    top = [row(rows[key.id], rank, tournament) for rank, key in enumerate(keys[:limit], 1)]
    mine = [row(rows[key.id], ranks[key.id], tournament) for key in keys if key.user_id in wanted]
    return top, mine, sum(1 for key in keys if not key.withdrawn)


# What order_key reads, and the row's id.
ORDER_FIELDS = (
    "id",
    "user_id",
    "points",
    "wins",
    "rating",
    "tiebreak",
    "tiebreak2",
    "seed",
    "withdrawn",
)


def pairing_view(pairing: Pairing) -> protocol.PairingView:
    return protocol.PairingView(
        round=pairing.round,
        game_id=pairing.game_id,
        first=pairing.first.username,
        second=pairing.second.username if pairing.second else None,
        result=pairing.result,
    )


def current_pairings(tournament: Tournament, limit: int = 100) -> list[protocol.PairingView]:
    """The games in play, and the rest of the current round's pairings (Swiss, RR)."""
    query: QuerySet[Pairing] = Pairing.objects.filter(tournament=tournament).select_related(
        "first", "second"
    )
    if tournament.kind == Tournament.Kind.ARENA:
        query = query.filter(result="")
    else:
        query = query.filter(Q(round=tournament.round) | Q(result=""))
    return [pairing_view(p) for p in query.order_by("-round", "id")[:limit]]


def game_name(slug: str) -> str:
    for game in available_games():
        if game["slug"] == slug:
            return str(game["name"])
    return slug


def view(tournament: Tournament, players: int) -> protocol.TournamentView:
    return protocol.TournamentView(
        id=tournament.pk,
        name=tournament.name,
        kind=tournament.kind,
        slug=tournament.slug,
        game=game_name(tournament.slug),
        options=dict(tournament.options),
        time_control=tournament.time_control,
        rated=tournament.rated,
        invite_only=bool(tournament.invite_token),
        status=tournament.status,
        starts_at=tournament.starts_at.isoformat(),
        ends_at=tournament.ends_at.isoformat() if tournament.ends_at else None,
        minutes=tournament.minutes,
        rounds=tournament.rounds,
        round=tournament.round,
        max_players=tournament.max_players,
        players=players,
        creator=tournament.creator.username if tournament.creator else None,
        allow_bots=tournament.allow_bots,
        winner=tournament.winner.username if tournament.winner else None,
    )


def load(tournament_id: int) -> Tournament | None:
    return Tournament.objects.select_related("creator", "winner").filter(pk=tournament_id).first()


def snapshot(tournament_id: int, user: Any) -> protocol.TournamentFrame | None:
    tournament = load(tournament_id)
    if tournament is None:
        return None
    user_id = user.pk if user is not None and user.is_authenticated else None
    top, mine, players = standings(tournament, concerning={user_id} if user_id else None)
    joined = (
        user_id is not None
        and Entry.objects.filter(tournament=tournament, user_id=user_id, withdrawn=False).exists()
    )
    return protocol.TournamentFrame(
        v=tournament.version,
        tournament=view(tournament, players),
        standings=top,
        pairings=current_pairings(tournament),
        you=mine[0] if mine else None,
        joined=joined,
    )


def listing() -> dict[str, list[protocol.TournamentView]]:
    """The tournaments page: upcoming, running and recently finished."""
    out: dict[str, list[protocol.TournamentView]] = {}
    groups = {
        "running": (Tournament.Status.RUNNING, "starts_at"),
        "upcoming": (Tournament.Status.UPCOMING, "starts_at"),
        "finished": (Tournament.Status.FINISHED, "-starts_at"),
    }
    for name, (status, order) in groups.items():
        rows = list(
            Tournament.objects.filter(status=status, invite_token="")
            .select_related("creator", "winner")
            .order_by(order)[:LIST_LIMIT]
        )
        counts = dict(
            Entry.objects.filter(tournament__in=rows, withdrawn=False)
            .values_list("tournament_id")
            .annotate(n=Count("id"))
            .values_list("tournament_id", "n")
        )
        out[name] = [view(t, counts.get(t.pk, 0)) for t in rows]
    return out


def of_game(game_id: int) -> dict[str, Any] | None:
    """The tournament a game was paired in ({"id", "name"}), or None: one indexed lookup."""
    found = (
        Pairing.objects.filter(game_id=game_id)
        .values_list("tournament_id", "tournament__name")
        .first()
    )
    return None if found is None else {"id": found[0], "name": found[1]}


def of_player(user: Any, limit: int = 20) -> list[dict[str, Any]]:
    """A player's tournaments, newest first, with their rank in each (for the profile)."""
    entries = list(
        Entry.objects.filter(user=user)
        .select_related("tournament")
        .order_by("-tournament__starts_at")[:limit]
    )
    out = []
    for entry in entries:
        tournament = entry.tournament
        ranks = [e.user_id for e in ranked(tournament)]
        out.append(
            {
                "tournament": tournament,
                "rank": ranks.index(entry.user_id) + 1,
                "players": len(ranks),
                "points": entry.points,
            }
        )
    return out
