"""Starting, pairing and ending tournaments: the arena's waves, the Swiss's and the round
robin's rounds. The pairing itself is the pure tournaments.pairing; this saves what it
decided (the games through games' own services, announced to the players as every new game
is) under the tournament's row lock, so that one wave or round is paired once whichever
process asks."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Hashable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from games import services as game_services
from games.models import Game
from realtime import metrics
from tournaments.models import Entry, Pairing, Tournament
from tournaments.pairing import arena, swiss
from tournaments.pairing.errors import PairingError
from tournaments.pairing.round_robin import round_robin
from tournaments.pairing.tiebreaks import Game as Played
from tournaments.pairing.tiebreaks import tiebreaks
from tournaments.services import publish, saving
from tournaments.services.locking import locked

logger = logging.getLogger(__name__)

# Half points: a win, a draw, a Swiss's bye (FIDE: a pairing-allocated bye scores as a win),
# a round robin's sit-out (nothing: the odd field's player drawn against the table's dummy).
WIN, DRAW, BYE, SIT_OUT = 2, 1, 2, 0
# The letters an entry keeps per round, as the pairing library reads them.
_COLOURS: dict[str, swiss.Colour] = {"W": "W", "B": "B"}
_FLOATS: dict[str, swiss.Float] = {"U": "up", "D": "down"}


def start(tournament_id: int) -> None:
    """Start a tournament whose time has come (a Swiss or round robin with fewer than two
    players is cancelled)."""
    with transaction.atomic():
        tournament = locked(tournament_id)
        if tournament.status != Tournament.Status.UPCOMING:
            return
        entries = list(Entry.objects.filter(tournament=tournament, withdrawn=False))
        now = timezone.now()
        if len(entries) < 2 and tournament.kind != Tournament.Kind.ARENA:
            # An arena starts whoever is there: players join it late and are paired as they
            # come. A Swiss or round robin cannot make its first round.
            tournament.status = Tournament.Status.CANCELLED
            tournament.ends_at = now
            tournament.save(update_fields=["status", "ends_at"])
            publish.changed(tournament)
            return
        # Pairing numbers by rating (FIDE C.04.3 A.2: the initial ranking).
        entries.sort(key=lambda e: (-e.rating, e.joined_at, e.user_id))
        for number, entry in enumerate(entries, 1):
            entry.seed = number
            entry.free_since = now
        saving.update_entries(entries, ["seed", "free_since"])
        tournament.status = Tournament.Status.RUNNING
        tournament.starts_at = min(tournament.starts_at, now)
        if tournament.kind == Tournament.Kind.ARENA:
            tournament.ends_at = now + timedelta(minutes=tournament.minutes or 0)
        elif tournament.kind == Tournament.Kind.SWISS:
            tournament.first_colour = random.choice("WB")
        else:
            tournament.rounds = len(round_robin(len(entries), double=tournament.double))
        tournament.save(update_fields=["status", "starts_at", "ends_at", "first_colour", "rounds"])
        if tournament.kind == Tournament.Kind.ARENA:
            _wave(tournament)
        else:
            next_round(tournament)


def arena_wave(tournament_id: int) -> int:
    """Pair the arena's free players; how many games began."""
    with transaction.atomic():
        tournament = locked(tournament_id)
        if (
            tournament.status != Tournament.Status.RUNNING
            or tournament.kind != Tournament.Kind.ARENA
        ):
            return 0
        if tournament.ends_at is not None and timezone.now() >= tournament.ends_at:
            finish(tournament)
            return 0
        return _wave(tournament)


def _wave(tournament: Tournament) -> int:
    began = _now()
    free = list(
        Entry.objects.filter(tournament=tournament, withdrawn=False, playing=False).select_related(
            "user"
        )
    )
    if len(free) < 2:
        return 0
    waiting = [
        arena.ArenaPlayer(
            id=entry.user_id,
            rating=round(entry.rating),
            score=entry.points,
            last_opponent=entry.last_opponent_id,
            colours=tuple("white" if c == "W" else "black" for c in entry.colours if c in "WB"),
        )
        for entry in free
    ]
    wave = arena.pair_wave(waiting)
    if not wave.pairs:
        return 0
    tournament.round += 1
    tournament.save(update_fields=["round"])
    by_user = {entry.user_id: entry for entry in free}
    pairings = _create_games(tournament, [(by_user[a], by_user[b]) for a, b in wave.pairs])
    publish.changed(
        tournament,
        entries=[e for pair in wave.pairs for e in (by_user[pair[0]], by_user[pair[1]])],
        pairings=pairings,
    )
    _timed(tournament, len(pairings), began, free=len(free))
    return len(pairings)


def _now() -> tuple[float, float]:
    """(wall clock, this process's CPU time): where a wave's or round's time is counted from."""
    return time.perf_counter(), time.process_time()


def _timed(
    tournament: Tournament, games: int, began: tuple[float, float], free: int | None = None
) -> None:
    """Count and time a wave or round once it is committed. Registered last, so that the
    after-commit work registered before it (the games' announcements, the pages' update) is
    in the time: the pairing is done for the players when they have heard of their games.

    The log line gives the CPU time the process spent meanwhile beside the wall time, so that
    a slow wave can be told from a busy machine (the rest is waiting: for a core, the
    database, Redis); in a server process it includes whatever else the process did."""
    kind, number = str(tournament.kind), tournament.round

    def done() -> None:
        seconds = metrics.tournament_paired(kind, games, began[0])
        cpu = time.process_time() - began[1]
        left = ""
        if free is not None:
            metrics.TOURNAMENT_LEFT_WAITING.observe(free - 2 * games)
            left = f" of {free} free ({free - 2 * games} left waiting)"
        logger.info(
            "tournament %s: %s %s paired: %s game(s)%s in %.3f s (CPU %.3f s)",
            tournament.pk,
            "wave" if kind == Tournament.Kind.ARENA else "round",
            number,
            games,
            left,
            seconds,
            cpu,
        )

    transaction.on_commit(done)


def _create_games(tournament: Tournament, pairs: list[tuple[Entry, Entry]]) -> list[Pairing]:
    """The games of a wave or round (first of each pair moves first), their pairings, and
    the players marked as playing."""
    games = [
        game_services.new_game(
            slug=tournament.slug,
            options=dict(tournament.options),
            player1=first.user,
            player2=second.user,
            time_control=tournament.time_control,
            rated=tournament.rated,
        )
        for first, second in pairs
    ]
    created = game_services.create_games(games)
    pairings = Pairing.objects.bulk_create(
        Pairing(
            tournament=tournament,
            round=tournament.round,
            game=game,
            first=first.user,
            second=second.user,
        )
        for game, (first, second) in zip(created, pairs, strict=True)
    )
    for first, second in pairs:
        for entry, colour in ((first, "W"), (second, "B")):
            entry.playing = True
            if tournament.kind == Tournament.Kind.ARENA:
                entry.colours = (entry.colours + colour)[-100:]
    saving.update_entries([e for pair in pairs for e in pair], ["playing", "colours"])
    return pairings


def round_complete(tournament: Tournament) -> bool:
    return not Pairing.objects.filter(
        tournament=tournament, round=tournament.round, result=Pairing.Result.PENDING
    ).exists()


def next_round(tournament: Tournament) -> None:
    """Pair the next round of a Swiss or round robin (the tournament locked), or finish it."""
    if tournament.round >= (tournament.rounds or 0):
        finish(tournament)
        return
    if tournament.kind == Tournament.Kind.SWISS:
        paired = _swiss_round(tournament)
    else:
        paired = _round_robin_round(tournament)
    if not paired:
        finish(tournament)


def _swiss_round(tournament: Tournament) -> bool:
    began = _now()
    entries = list(Entry.objects.filter(tournament=tournament).select_related("user"))
    present = [e for e in entries if not e.withdrawn]
    players = [
        swiss.SwissPlayer(
            id=entry.user_id,
            pairing_number=entry.seed or 10**6 + entry.pk,
            score=entry.points / 2,
            colours=tuple(_COLOURS.get(c) for c in entry.colours),
            opponents=frozenset(entry.opponents),
            had_bye=entry.byes > 0,
            floats=tuple(_FLOATS.get(f) for f in entry.floats),
        )
        for entry in present
    ]
    if len(players) < 2:
        return False
    try:
        paired = swiss.pair_round(
            players,
            rounds=tournament.rounds or 0,
            initial_colour=_COLOURS.get(tournament.first_colour) or "W",
        )
    except PairingError as error:
        # No pairing meets the absolute criteria (a small field late in a long event): the
        # tournament ends here, as an arbiter would end it.
        logger.info("tournament %s: round not paired (%s): finished", tournament.pk, error)
        return False
    tournament.round += 1
    tournament.save(update_fields=["round"])
    by_user = {entry.user_id: entry for entry in entries}
    floats = dict(paired.floats)
    for entry in entries:
        entry.floats += {"up": "U", "down": "D"}.get(floats.get(entry.user_id, ""), "-")
    pairs = [(by_user[a], by_user[b]) for a, b in paired.pairs]
    for first, second in pairs:
        first.colours += "W"
        second.colours += "B"
        first.opponents = [*first.opponents, second.user_id]
        second.opponents = [*second.opponents, first.user_id]
    in_round = {e.user_id for pair in pairs for e in pair}
    bye_pairings = []
    for entry in entries:
        if entry.user_id in in_round:
            continue
        entry.colours += "-"
        if entry.user_id == paired.bye:
            entry.points += BYE
            entry.byes += 1
            entry.sheet += "+"
            bye_pairings.append(_bye(tournament, entry, BYE))
        else:
            entry.sheet += "-"  # withdrawn, or not paired: no game this round
    saving.update_entries(entries, ["floats", "colours", "opponents", "points", "byes", "sheet"])
    pairings = _create_games(tournament, pairs) + Pairing.objects.bulk_create(bye_pairings)
    publish.changed(tournament, entries=entries if len(entries) <= 50 else [], pairings=pairings)
    _timed(tournament, len(pairs), began)
    return True


def _bye(tournament: Tournament, entry: Entry, points: int) -> Pairing:
    """The round's pairing of a player without an opponent: a Swiss's bye, a round robin's
    sit-out (its points say which)."""
    return Pairing(
        tournament=tournament,
        round=tournament.round,
        first=entry.user,
        result=Pairing.Result.BYE,
        first_points=points,
    )


def _round_robin_round(tournament: Tournament) -> bool:
    began = _now()
    entries = sorted(
        Entry.objects.filter(tournament=tournament).select_related("user"),
        key=lambda e: e.seed or 10**6,
    )
    seeded = [e for e in entries if e.seed]
    rounds = round_robin(len(seeded), double=tournament.double)
    table = rounds[tournament.round]
    tournament.round += 1
    tournament.save(update_fields=["round"])
    number = {entry.seed: entry for entry in seeded}
    pairs: list[tuple[Entry, Entry]] = []
    forfeits: list[Pairing] = []
    for white, black in table.pairs:
        first, second = number[white], number[black]
        first.opponents = [*first.opponents, second.user_id]
        second.opponents = [*second.opponents, first.user_id]
        if first.withdrawn or second.withdrawn:
            # A withdrawn player's games are lost by forfeit (no game is played).
            forfeits.append(_forfeit(tournament, first, second))
        else:
            pairs.append((first, second))
    if table.bye is not None:
        # Sitting out (an odd field, the Berger table's dummy): a bye without points, as round
        # robins count it, marked as a round without a game (docs/TOURNAMENTS.md).
        sitting = number[table.bye]
        sitting.sheet += "-"
        sitting.byes += 1
        forfeits.append(_bye(tournament, sitting, SIT_OUT))
    saving.update_entries(
        seeded, ["opponents", "points", "wins", "losses", "games", "byes", "sheet"]
    )
    pairings = _create_games(tournament, pairs) + Pairing.objects.bulk_create(forfeits)
    publish.changed(tournament, entries=seeded, pairings=pairings)
    _timed(tournament, len(pairs), began)
    if not pairs and round_complete(tournament):
        next_round(tournament)
    return True


def _forfeit(tournament: Tournament, first: Entry, second: Entry) -> Pairing:
    """The (unsaved) pairing of a game lost by forfeit, its points given."""
    if first.withdrawn and second.withdrawn:
        result, points = Pairing.Result.VOID, (0, 0)
    elif first.withdrawn:
        result, points = Pairing.Result.SECOND, (0, WIN)
    else:
        result, points = Pairing.Result.FIRST, (WIN, 0)
    for entry, got in ((first, points[0]), (second, points[1])):
        entry.points += got
        entry.sheet += "+" if got else "-"
    return Pairing(
        tournament=tournament,
        round=tournament.round,
        first=first.user,
        second=second.user,
        result=result,
        first_points=points[0],
        second_points=points[1],
    )


def finish(tournament: Tournament) -> None:
    """End the (locked) tournament: final tie-breaks, the winner. An arena's games still in
    play go on but no longer count (docs/TOURNAMENTS.md)."""
    if tournament.status != Tournament.Status.RUNNING:
        return
    if tournament.kind != Tournament.Kind.ARENA:
        update_tiebreaks(tournament)
    from tournaments.selectors import ranked

    order = ranked(tournament)
    tournament.status = Tournament.Status.FINISHED
    tournament.ends_at = timezone.now()
    tournament.winner_id = order[0].user_id if order else None
    tournament.save(update_fields=["status", "ends_at", "winner"])
    publish.changed(tournament, entries=order[:1])


def update_tiebreaks(tournament: Tournament) -> None:
    """Buchholz and Sonneborn-Berger of every entry, from the rounds counted so far (Swiss:
    Buchholz first; round robin: Sonneborn-Berger first).

    Every player has one entry in each round: his game, his bye, or, in a round he had no
    part in (joined later, withdrawn, not paired), a zero-point round without a game
    (docs/TOURNAMENTS.md). A round robin's sit-out is no round of his (None)."""
    entries = list(Entry.objects.filter(tournament=tournament))
    # The rounds whose every result is in: the current one only once it is complete.
    counted = tournament.round - (0 if round_complete(tournament) else 1)
    rounds: dict[Hashable, dict[int, Played | None]] = {entry.user_id: {} for entry in entries}
    for pairing in Pairing.objects.filter(tournament=tournament, round__lte=counted).exclude(
        result=Pairing.Result.PENDING
    ):
        first, second, number = pairing.first_id, pairing.second_id, pairing.round
        if pairing.result == Pairing.Result.BYE or second is None:
            if tournament.kind == Tournament.Kind.ROUND_ROBIN:
                rounds[first][number] = None  # sitting out the odd field's round
            else:
                rounds[first][number] = Played(points=pairing.first_points / 2)
            continue
        played = pairing.game_id is not None and pairing.result != Pairing.Result.VOID
        rounds[first][number] = Played(pairing.first_points / 2, second, played)
        rounds[second][number] = Played(pairing.second_points / 2, first, played)
    absent = Played(points=0.0)  # a round without a game and without points
    table = {
        user: [games.get(number, absent) for number in range(1, counted + 1)]
        for user, games in rounds.items()
    }
    scores = tiebreaks(table)
    for entry in entries:
        found = scores[entry.user_id]
        if tournament.kind == Tournament.Kind.SWISS:
            entry.tiebreak, entry.tiebreak2 = found.buchholz, found.sonneborn_berger
        else:
            entry.tiebreak, entry.tiebreak2 = found.sonneborn_berger, 0.0
    saving.update_entries(entries, ["tiebreak", "tiebreak2"])


def games_to_count() -> list[tuple[int, Game]]:
    """Tournament games that ended but were not counted (their end's receiver did not run:
    a process killed after the commit). The sweeper counts them, but not a held tournament's
    (tournaments/services/holding.py)."""
    pending = Pairing.objects.filter(
        result=Pairing.Result.PENDING,
        game__status__in=[Game.Status.FINISHED, Game.Status.ABORTED],
        tournament__problem="",
    ).select_related("game")[:500]
    return [(p.tournament_id, p.game) for p in pending if p.game is not None]
