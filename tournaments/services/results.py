"""Counting a tournament game's result, once, whichever process ended the game."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from games.models import Game
from tournaments.models import Entry, Pairing, Tournament
from tournaments.pairing import arena
from tournaments.services import holding, publish, rounds, saving
from tournaments.services.locking import locked

# A pairing's result -> what each player got.
_OUTCOMES: dict[str, tuple[arena.Result, arena.Result]] = {
    "1": ("win", "loss"),
    "2": ("loss", "win"),
    "draw": ("draw", "draw"),
}


def game_ended(game: Game, **_: Any) -> None:
    """games.lifecycle.game_ended: count it if it is a tournament's (after its commit). A
    held tournament's is left for the sweeper to count once staff cleared the hold; one whose
    counting fails is held (tournaments/services/holding.py)."""
    found = (
        Pairing.objects.filter(game_id=game.pk)
        .values_list("tournament_id", "tournament__problem")
        .first()
    )
    if found is None or found[1]:
        return
    tournament_id = found[0]
    holding.guarded(
        tournament_id, f"counting game {game.pk}", lambda: count(tournament_id, game.pk)
    )


def count(tournament_id: int, game_id: int) -> bool:
    """Count the ended game in its tournament; False if it was counted already (or is still
    in play). Under the tournament's lock: a result is never counted twice."""
    with transaction.atomic():
        tournament = locked(tournament_id)
        pairing = Pairing.objects.select_for_update().filter(game_id=game_id).first()
        if pairing is None or pairing.result != Pairing.Result.PENDING:
            return False
        game = Game.objects.only("status", "winner", "annulled", "ply").get(pk=game_id)
        if game.status == Game.Status.ACTIVE:
            return False
        users = [pairing.first_id, pairing.second_id]
        entries = {
            e.user_id: e
            for e in Entry.objects.select_for_update().filter(
                tournament=tournament, user_id__in=users
            )
        }
        first, second = entries[pairing.first_id], entries[pairing.second_id]
        now = timezone.now()
        late = tournament.kind == Tournament.Kind.ARENA and (
            tournament.status != Tournament.Status.RUNNING
            or (tournament.ends_at is not None and now >= tournament.ends_at)
        )
        if game.status == Game.Status.ABORTED or late:
            # An aborted game, or an arena game that ended after the arena: not counted.
            pairing.result = Pairing.Result.VOID
        elif game.winner is None:
            pairing.result = Pairing.Result.DRAW
        else:
            pairing.result = Pairing.Result.FIRST if game.winner == 1 else Pairing.Result.SECOND
        if pairing.result != Pairing.Result.VOID:
            outcome = _OUTCOMES[pairing.result]
            pairing.first_points = _score(tournament, first, outcome[0])
            pairing.second_points = _score(tournament, second, outcome[1])
        for entry, other in ((first, second), (second, first)):
            entry.playing = False
            entry.free_since = now
            entry.last_opponent_id = other.user_id
        if (
            tournament.kind == Tournament.Kind.ARENA
            and game.status == Game.Status.ABORTED
            and game.ply <= 1
        ):
            # Aborted before both moved: whoever was to move is not at the board (gone, or
            # their page closed). As on lichess, they are paused, so that they are not paired
            # again and again with players who wait for them; one click on Join brings them
            # back.
            absent = first if game.ply == 0 else second
            absent.withdrawn = True
        pairing.save(update_fields=["result", "first_points", "second_points"])
        saving.update_entries(
            [first, second],
            [
                "points",
                "games",
                "wins",
                "draws",
                "losses",
                "streak",
                "sheet",
                "playing",
                "free_since",
                "last_opponent",
                "withdrawn",
            ],
        )
        publish.changed(tournament, entries=[first, second], pairings=[pairing])
        if (
            tournament.kind != Tournament.Kind.ARENA
            and tournament.status == Tournament.Status.RUNNING
            and rounds.round_complete(tournament)
        ):
            if tournament.kind == Tournament.Kind.SWISS:
                rounds.update_tiebreaks(tournament)
            rounds.next_round(tournament)
    return True


def _score(tournament: Tournament, entry: Entry, result: arena.Result) -> int:
    """Add a game to the entry's totals; the points it scored."""
    entry.games += 1
    if result == "win":
        entry.wins += 1
    elif result == "draw":
        entry.draws += 1
    else:
        entry.losses += 1
    if tournament.kind == Tournament.Kind.ARENA:
        points, entry.streak = arena.next_points(entry.streak, result)
        entry.sheet = (entry.sheet + str(points))[-600:]
    else:
        points = {"win": rounds.WIN, "draw": rounds.DRAW}.get(result, 0)
        entry.sheet += {"win": "1", "draw": "=", "loss": "0"}[result]
    entry.points += points
    return points
