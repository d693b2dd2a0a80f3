"""Follows' gauge read from the database when Prometheus scrapes (realtime/metrics.py)."""

from __future__ import annotations

from follows.models import FollowMail
from realtime.metrics import state_gauge


@state_gauge(
    "diffusion_mails_queued", "E-mails waiting to be sent, by kind (move, follow, pbm)", ["kind"]
)
def follow_mails_queued() -> dict[tuple[str, ...], float]:
    return {("follow",): FollowMail.objects.count()}
