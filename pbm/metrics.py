"""The mail door's gauges read from the database when Prometheus scrapes
(realtime/metrics.py)."""

from __future__ import annotations

import time

from django.conf import settings

from pbm.models import InboundMail, OutboundMail
from realtime import outgoing_mail
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


@state_gauge(
    "diffusion_mail_failing_seconds",
    "How long handing e-mail to the outgoing mail server has failed, by any process's last "
    "try (0 while it goes out)",
)
def mail_failing() -> dict[tuple[str, ...], float]:
    # Read from the cache (Redis) every process writes to: realtime/outgoing_mail.py.
    try:
        record = outgoing_mail.status()
    except Exception:  # Redis away: no figure, and the database's gauges still read
        return {}
    if record is None or record["ok"]:
        return {(): 0.0}
    return {(): max(0.0, time.time() - float(record.get("since", record["at"])))}
