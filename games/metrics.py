"""The games' gauges read from the database when Prometheus scrapes (realtime/metrics.py)."""

from __future__ import annotations

from django.db.models import Count

from games.models import Game, MoveNotice
from realtime.metrics import state_gauge


@state_gauge("diffusion_games_active", "Games being played, by game", ["game"])
def games_active() -> dict[tuple[str, ...], float]:
    rows = Game.objects.filter(status=Game.Status.ACTIVE).values_list("slug").annotate(Count("pk"))
    return {(slug,): count for slug, count in rows}


@state_gauge(
    "diffusion_mails_queued", "E-mails waiting to be sent, by kind (move, follow, pbm)", ["kind"]
)
def move_mails_queued() -> dict[tuple[str, ...], float]:
    return {("move",): MoveNotice.objects.count()}
