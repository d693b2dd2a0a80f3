"""Positions the computer evaluates for people (the analysis board, game reviews): asked for
here, searched by the bots worker in its own pool (bots/worker.py), read back by the asker.

The computer players and the live games come first: the searches run in a pool of their own
(one process by default, in Linux's idle scheduling class: only on CPU time nothing else
wants), so no number of them slows a bot's answer, and each user has at most
`MOST_PER_USER` positions queued or searched at once for each purpose kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bots.models import SearchJob
from realtime.errors import ServiceError

MOST_PER_USER = 2  # positions of the analysis board at once (a tab or two)
MOST_QUEUED = 400  # all users together: beyond it, new requests wait for the queue to drain
ACTIVE = (SearchJob.Status.QUEUED, SearchJob.Status.RUNNING)
# A job still "running" this long after its last change was left by a worker that died.
STALE = timedelta(seconds=60)


def ask(
    *,
    owner: Any,
    purpose: str,
    slug: str,
    options: dict[str, Any],
    state: dict[str, Any],
    budgets: Sequence[int] | None = None,
    index: int = 0,
    most: int = MOST_PER_USER,
) -> SearchJob:
    """A search queued for `owner`. Past `most` active searches of theirs with this purpose
    kind (the text before ':'), the oldest are cancelled: what a person looks at now matters,
    not what they looked at a minute ago."""
    kind = purpose.split(":", 1)[0]
    with transaction.atomic():
        _make_room(1, MOST_QUEUED)
        mine = SearchJob.objects.select_for_update().filter(
            owner=owner, purpose__startswith=kind, status__in=ACTIVE
        )
        older = list(mine.order_by("-id").values_list("id", flat=True)[most - 1 :])
        if older:
            SearchJob.objects.filter(pk__in=older).update(status=SearchJob.Status.CANCELLED)
        return SearchJob.objects.create(
            owner=owner,
            purpose=purpose,
            index=index,
            slug=slug,
            options=options,
            state=state,
            # The analysis board's rounds (settings.COMPUTER_VIEW_MS): a first view at
            # once, then firmer.
            budgets=list(budgets or settings.COMPUTER_VIEW_MS),
        )


def ask_many(
    *, owner: Any, purpose: str, slug: str, options: dict[str, Any], states: Sequence[Any], ms: int
) -> int:
    """One single-round search per position (a game review), in order."""
    with transaction.atomic():
        _make_room(len(states), MOST_QUEUED * 2)  # a review is many positions at once
        SearchJob.objects.bulk_create(
            SearchJob(
                owner=owner,
                purpose=purpose,
                index=index,
                slug=slug,
                options=options,
                state=state,
                budgets=[ms],
            )
            for index, state in enumerate(states)
        )
    return len(states)


def _make_room(more: int, most: int) -> None:
    if SearchJob.objects.filter(status__in=ACTIVE).count() + more > most:
        raise ServiceError(
            "computer_busy", _("The computer has too many positions to look at: try again soon.")
        )


def cancel(*, purpose: str) -> int:
    return SearchJob.objects.filter(purpose=purpose, status__in=ACTIVE).update(
        status=SearchJob.Status.CANCELLED
    )


def progress(job: SearchJob) -> dict[str, Any]:
    """What the asker shows: the latest result, the rounds done of all, whether it goes on."""
    return {
        "id": job.pk,
        "status": job.status,
        "rounds": job.rounds,
        "of": len(job.budgets),
        "result": job.result,
    }


# --- the worker's side ----------------------------------------------------------------------


def claim(limit: int) -> list[SearchJob]:
    """Up to `limit` queued searches, now this worker's (another worker may have taken one
    first: it is skipped)."""
    claimed = []
    for job in SearchJob.objects.filter(status=SearchJob.Status.QUEUED).order_by("id")[:limit]:
        taken = SearchJob.objects.filter(pk=job.pk, status=SearchJob.Status.QUEUED).update(
            status=SearchJob.Status.RUNNING, updated=timezone.now()
        )
        if taken:
            claimed.append(job)
    return claimed


def record(job_id: int, rounds: int, result: dict[str, Any] | None, last: bool) -> None:
    """A round's result; the next round is queued unless it was the last (a search cancelled
    meanwhile stays cancelled)."""
    status = SearchJob.Status.DONE if last else SearchJob.Status.QUEUED
    if result is None:
        status = SearchJob.Status.FAILED
    fields: dict[str, Any] = {"status": status, "rounds": rounds, "updated": timezone.now()}
    if result is not None:
        fields["result"] = result
    SearchJob.objects.filter(pk=job_id, status=SearchJob.Status.RUNNING).update(**fields)


def requeue_stale() -> int:
    """Searches a dead worker left running go back to the queue."""
    return SearchJob.objects.filter(
        status=SearchJob.Status.RUNNING, updated__lt=timezone.now() - STALE
    ).update(status=SearchJob.Status.QUEUED)
