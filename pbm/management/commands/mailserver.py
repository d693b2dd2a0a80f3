"""python manage.py mailserver: pbmserv's mail door (SMTP in, replies out); see docs/PBMSERV.md."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from pbm.smtp import serve
from realtime import metrics


class Command(BaseCommand):
    help = "Receive pbmserv commands by SMTP and answer them by mail."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default=settings.PBM_SMTP_HOST)
        parser.add_argument("--port", type=int, default=settings.PBM_SMTP_PORT)

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        metrics.serve("mail door")
        serve(options["host"], options["port"], stop)
