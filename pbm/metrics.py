"""The mail door's gauges read from the database when Prometheus scrapes
(realtime/metrics.py)."""

from __future__ import annotations

from django.conf import settings

from pbm.models import InboundMail, OutboundMail
from realtime.metrics import state_gauge


@state_gauge(
    "diffusion_mails_queued", "E-mails waiting to be sent, by kind (move, follow, pbm)", ["kind"]
)
def replies_queued() -> dict[tuple[str, ...], float]:
    waiting = OutboundMail.objects.filter(
        sent_at__isnull=True, attempts__lt=settings.PBM_SEND_ATTEMPTS
    )
    return {("pbm",): waiting.count()}


@state_gauge("diffusion_pbm_mails_unanswered", "Mails received by the mail door, not yet answered")
def mails_unanswered() -> dict[tuple[str, ...], float]:
    return {(): InboundMail.objects.filter(status=InboundMail.Status.RECEIVED).count()}
