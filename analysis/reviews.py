"""The computer's review of a finished game: each position of the game searched by the bots
worker (bots/searches.py), then, move by move, the mover's win chance before and after it.
A move that lowered it by a threshold or more is marked, with the move the search preferred:

| mark | the mover's win chance dropped by at least |
|---|---|
| inaccuracy | 10 points (0.10) |
| mistake | 20 points |
| blunder | 30 points |

Requested once per game (by anyone signed in who can see it), computed in the background,
stored, and shown to everyone who looks at the game.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from analysis.models import Review
from bots import searches
from bots.models import SearchJob
from games import selectors as games
from games.engine import rules_for
from games.models import Game
from realtime.errors import ServiceError

MARKS = (("blunder", 0.30), ("mistake", 0.20), ("inaccuracy", 0.10))
LONGEST_SEARCH_MS = 400
SHORTEST_SEARCH_MS = 40


def search_ms(positions: int) -> int:
    """A whole game within settings.REVIEW_MS of one search process: shorter searches for
    longer games, within bounds."""
    share = settings.REVIEW_MS // max(1, positions)
    return max(SHORTEST_SEARCH_MS, min(LONGEST_SEARCH_MS, share))


def purpose(game_id: int) -> str:
    return f"review:{game_id}"


def request(*, user: Any, game_id: int) -> Review:
    """The game's review: started now, or the one already there (a failed one starts again).
    A user has one review computed at a time."""
    game = games.load_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    if game.status == Game.Status.ACTIVE:
        raise ServiceError("game_not_over", _("A game is reviewed once it is over."))
    with transaction.atomic():
        existing = Review.objects.select_for_update().filter(game=game).first()
        if existing is not None and existing.status != Review.Status.FAILED:
            return existing
        if Review.objects.filter(requested_by=user, status=Review.Status.RUNNING).exists():
            raise ServiceError(
                "review_running", _("Your other review is still being computed: wait for it first.")
            )
        states = games.positions(game)
        ms = search_ms(len(states))
        searches.cancel(purpose=purpose(game.pk))
        searches.ask_many(
            owner=user,
            purpose=purpose(game.pk),
            slug=game.slug,
            options=game.options,
            states=states,
            ms=ms,
        )
        if existing is not None:
            existing.delete()
        return Review.objects.create(
            game=game, requested_by=user, positions=len(states), ms=ms, status=Review.Status.RUNNING
        )


def finish_ready() -> int:
    """Reviews whose searches are all done, compiled and stored (the worker's tick calls
    this, and so does a reader: whoever comes first)."""
    finished = 0
    for review_id in Review.objects.filter(status=Review.Status.RUNNING).values_list(
        "id", flat=True
    ):
        finished += _finish(review_id)
    return finished


def _finish(review_id: int) -> int:
    with transaction.atomic():
        review = Review.objects.select_for_update().select_related("game").get(pk=review_id)
        if review.status != Review.Status.RUNNING:
            return 0
        jobs = list(
            SearchJob.objects.filter(purpose=purpose(review.game_id))
            .exclude(status=SearchJob.Status.CANCELLED)
            .order_by("index", "-id")
        )
        latest: dict[int, SearchJob] = {}
        for job in jobs:
            latest.setdefault(job.index, job)
        if any(job.status == SearchJob.Status.FAILED for job in latest.values()):
            review.status = Review.Status.FAILED
        elif len(latest) < review.positions or any(
            job.status != SearchJob.Status.DONE for job in latest.values()
        ):
            return 0
        else:
            review.plies = compile_review(review.game, [latest[i].result for i in sorted(latest)])
            review.status = Review.Status.DONE
        review.finished = timezone.now()
        review.save(update_fields=["status", "plies", "finished"])
        return 1


def compile_review(game: Game, results: list[Any]) -> list[dict[str, Any]]:
    """Per position: player 1's win chance; per move: who made it, the drop in the mover's
    chance, the mark, and the move the search preferred before it."""
    rules = rules_for(game.slug, game.options)
    states = [rules.from_json(state) for state in games.positions(game)]
    moves = [move for _, move in games.played(game)]
    first: list[float] = []
    for state, result in zip(states, results, strict=True):
        mover = rules.to_move(state)
        win = float(result["win"])
        first.append(win if mover == 1 else 1.0 - win)
    plies: list[dict[str, Any]] = [{"ply": 0, "win": round(first[0], 4)}]
    for ply, move in enumerate(moves, 1):
        mover = rules.to_move(states[ply - 1])
        before = first[ply - 1] if mover == 1 else 1.0 - first[ply - 1]
        after = first[ply] if mover == 1 else 1.0 - first[ply]
        drop = before - after
        best = results[ply - 1]["best"]
        mark = None
        if best is not None and best != move:
            mark = next((name for name, least in MARKS if drop >= least), None)
        plies.append(
            {
                "ply": ply,
                "move": move,
                "player": mover,
                "win": round(first[ply], 4),
                "drop": round(drop, 4),
                "mark": mark,
                "best": best if mark else None,
                "line": results[ply - 1]["line"] if mark else None,
            }
        )
    return plies


def review_json(review: Review | None) -> dict[str, Any] | None:
    if review is None:
        return None
    done = review.positions
    if review.status == Review.Status.RUNNING:
        done = SearchJob.objects.filter(
            purpose=purpose(review.game_id), status=SearchJob.Status.DONE
        ).count()
    return {
        "game": review.game_id,
        "status": review.status,
        "done": min(done, review.positions),
        "of": review.positions,
        "ms": review.ms,
        "plies": review.plies,
        "thresholds": {name: least for name, least in MARKS},
    }


def of_game(game_id: int) -> Review | None:
    finish_ready_for(game_id)
    return Review.objects.filter(game_id=game_id).first()


def finish_ready_for(game_id: int) -> None:
    review_id = (
        Review.objects.filter(game_id=game_id, status=Review.Status.RUNNING)
        .values_list("id", flat=True)
        .first()
    )
    if review_id is not None:
        _finish(review_id)


def on_tick(**_: Any) -> None:
    """The bots worker's tick: reviews whose searches are done are stored at once."""
    finish_ready()
