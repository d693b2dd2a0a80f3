"""The lobby's gauges read from the database when Prometheus scrapes (realtime/metrics.py).
There are no tournaments yet: when there are, their counts belong here."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from lobby.models import Challenge, Seek
from realtime.metrics import state_gauge


@state_gauge(
    "diffusion_seeks_waiting",
    "Open seeks waiting for a partner, by kind (realtime, correspondence)",
    ["kind"],
)
def seeks_waiting() -> dict[tuple[str, ...], float]:
    counts = Seek.objects.filter(status=Seek.Status.OPEN).aggregate(
        live=Count("pk", filter=Q(realtime=True)), later=Count("pk", filter=Q(realtime=False))
    )
    return {("realtime",): counts["live"], ("correspondence",): counts["later"]}


@state_gauge(
    "diffusion_challenges_pending",
    "Challenges waiting for an answer, by kind (direct: to one user; open: to anyone)",
    ["kind"],
)
def challenges_pending() -> dict[tuple[str, ...], float]:
    counts = Challenge.objects.filter(
        status=Challenge.Status.PENDING, expires_at__gt=timezone.now()
    ).aggregate(
        to_one=Count("pk", filter=Q(challenged__isnull=False)),
        to_anyone=Count("pk", filter=Q(challenged__isnull=True)),
    )
    return {("direct",): counts["to_one"], ("open",): counts["to_anyone"]}
