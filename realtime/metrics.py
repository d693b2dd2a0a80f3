"""The product's metrics for Prometheus: every metric is defined here (docs/METRICS.md lists
them), so any app can count without importing another.

Counting costs a lock and an addition: nothing on the move path reads the database for a
metric. What is a count of rows ("seeks waiting", "mails queued") is read when Prometheus
scrapes, by the readers the apps declare in their own `metrics` module (`state_gauge`), and
only in the one process that serves them (the sweeper).

Each long-running process serves its own metrics on METRICS_HOST:METRICS_PORT (off when
METRICS_PORT is unset): a port of its own, never the site's, so nothing a proxy forwards can
reach it. Several processes may instead share one port: with PROMETHEUS_MULTIPROC_DIR set
(an empty directory, the same for all of them) every process writes its values there, and
whichever serves adds up all of them; a process that stops removes its live gauges.
"""

from __future__ import annotations

import atexit
import logging
import os
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily, Metric

from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# --- moves -------------------------------------------------------------------------------
MOVES = Counter(
    "diffusion_moves",
    "Moves played, by every door (socket, HTTP, mail, the computer); a queued answer counts",
    ["game"],
)
MOVE_SECONDS = Histogram(
    "diffusion_move_seconds",
    "Server-side time of a move request, from the move service's start to its commit",
    ["game"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)

# --- sockets -----------------------------------------------------------------------------
SOCKETS = Gauge(
    "diffusion_sockets_open",
    "Websockets open on this process, by kind (game, lobby, notify)",
    ["kind"],
    multiprocess_mode="livesum",
)

# --- lobby -------------------------------------------------------------------------------
PAIRING_SECONDS = Histogram(
    "diffusion_seek_pairing_seconds",
    "How long a seek waited for its game, by partner (person, computer)",
    ["partner"],
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600, 4 * 3600, 86400),
)

# --- tournaments ---------------------------------------------------------------------------
TOURNAMENT_PAIRING_SECONDS = Histogram(
    "diffusion_tournament_pairing_seconds",
    "How long pairing one arena wave or one Swiss or round-robin round took, from reading "
    "the players to its commit and its games announced, by kind (arena, swiss, round_robin)",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
TOURNAMENT_GAMES = Counter(
    "diffusion_tournament_games",
    "Games begun by tournament pairings (waves and rounds), by kind",
    ["kind"],
)
TOURNAMENT_LEFT_WAITING = Histogram(
    "diffusion_tournament_left_waiting",
    "Free players an arena wave left unpaired: the odd one out (0 or 1); more means players "
    "waited while a partner was free",
    buckets=(0, 1, 2, 5, 10, 50),
)

# --- outages and catch-ups ----------------------------------------------------------------
DATABASE_ERRORS = Counter(
    "diffusion_database_errors",
    "Requests, sockets and passes that found the database unreachable, by where",
    ["where"],
)
REDIS_ERRORS = Counter(
    "diffusion_redis_errors",
    "Channel-layer (Redis) operations that failed, by operation",
    ["operation"],
)
CATCH_UPS = Counter(
    "diffusion_catch_ups",
    "Game sockets brought up to date from the database after missing a broadcast",
)

# --- the computer ----------------------------------------------------------------------------
BOT_TURNS = Gauge(
    "diffusion_bot_turns",
    "Games where a bot is to move: waiting for a thinking process, or being thought on",
    ["state"],
    multiprocess_mode="livesum",
)
BOT_THINK_SECONDS = Histogram(
    "diffusion_bot_think_seconds",
    "How long the computer thought on a move",
    ["game"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
)

# --- e-mail -------------------------------------------------------------------------------
MAILS = Counter(
    "diffusion_mails",
    "E-mails handed to the outgoing mail server (sent) or refused by it (failed), by kind "
    "(move, reminder, follow, pbm)",
    ["kind", "outcome"],
)

# --- the sweeper ------------------------------------------------------------------------------
SWEEPER_LATENESS = Histogram(
    "diffusion_sweeper_lateness_seconds",
    "How long after its deadline the sweeper ended a game on time (or aborted it)",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)
SWEEPER_PASS = Gauge(
    "diffusion_sweeper_last_pass_timestamp_seconds",
    "When the sweeper last finished a pass (Unix time)",
    multiprocess_mode="max",
)


def moved(game: str, moves: int, started: float) -> None:
    """A move request for `game` that played `moves` moves, begun at `started`
    (time.perf_counter())."""
    MOVES.labels(game).inc(moves)
    MOVE_SECONDS.labels(game).observe(time.perf_counter() - started)


def tournament_paired(kind: str, games: int, started: float) -> float:
    """A tournament wave or round of `kind` began `games` games; its pairing started at
    `started` (time.perf_counter()). The seconds it took."""
    seconds = time.perf_counter() - started
    TOURNAMENT_GAMES.labels(kind).inc(games)
    TOURNAMENT_PAIRING_SECONDS.labels(kind).observe(seconds)
    return seconds


def seeks_paired(partner: str, created: Iterable[datetime]) -> None:
    """Seeks created at `created` got their game now, with a `partner` (person, computer)."""
    now = time.time()
    for at in created:
        PAIRING_SECONDS.labels(partner).observe(max(0.0, now - at.timestamp()))


# --- gauges read from the database when Prometheus scrapes -----------------------------------

# A reader returns {label values: value}; () for a gauge without labels.
Reader = Callable[[], dict[tuple[str, ...], float]]
_state: dict[str, tuple[str, tuple[str, ...], list[Reader]]] = {}


def state_gauge(
    name: str, documentation: str, labels: Iterable[str] = ()
) -> Callable[[Reader], Reader]:
    """Declare a reader of a gauge read from the database at scrape time. Several apps may
    read parts of one gauge (each its own label values): their readers add up."""

    def declare(reader: Reader) -> Reader:
        entry = _state.setdefault(name, (documentation, tuple(labels), []))
        if reader not in entry[2]:
            entry[2].append(reader)
        return reader

    return declare


class DatabaseState:
    """The `state_gauge` readers of every app (their `metrics` modules), read at each scrape
    in the scraping thread, whose database connection is closed afterwards. With the database
    unreachable the scrape still answers, without them: diffusion_database_state_up is 0."""

    def describe(self) -> list[Metric]:
        return []  # read nothing when registered

    def collect(self) -> list[Metric]:
        from django.db import connection

        families: list[Metric] = []
        up = 1
        try:
            for name, (documentation, labels, readers) in sorted(_state.items()):
                family = GaugeMetricFamily(name, documentation, labels=list(labels))
                values: dict[tuple[str, ...], float] = {}
                for reader in readers:
                    for key, value in reader().items():
                        values[key] = values.get(key, 0) + value
                for key, value in sorted(values.items()):
                    family.add_metric(list(key), value)
                families.append(family)
        except Exception as error:
            up = 0
            if is_outage(error):
                DATABASE_ERRORS.labels("metrics").inc()
                logger.warning("metrics: database unreachable (%s)", error)
            else:
                logger.exception("metrics: reading the database state failed")
        finally:
            if not connection.in_atomic_block:  # a scrape's own thread: its own connection
                connection.close()
        state = GaugeMetricFamily(
            "diffusion_database_state_up",
            "1 if the gauges read from the database were read at this scrape",
        )
        state.add_metric([], up)
        return [*families, state] if up else [state]


def _registry(state: bool) -> Any:
    """What this process serves: its own metrics, or with PROMETHEUS_MULTIPROC_DIR those of
    every process writing there; and the database gauges if `state`."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    if state:
        from django.utils.module_loading import autodiscover_modules

        autodiscover_modules("metrics")  # every app's state_gauge readers
        registry.register(DatabaseState())
    return registry


def serve(process: str, *, state: bool = False) -> int | None:
    """At the start of a long-running process (`process` names it in the log): serve its
    metrics on METRICS_HOST:METRICS_PORT, if set; the port, or None. With `state`, the gauges
    read from the database too (one process of the site serves them: the sweeper)."""
    from django.conf import settings

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Its live gauges (sockets open) leave the sum when the process ends.
        atexit.register(multiprocess.mark_process_dead, os.getpid())
    port = getattr(settings, "METRICS_PORT", None)
    if not port:
        return None
    host = getattr(settings, "METRICS_HOST", "127.0.0.1")
    try:
        server, _ = start_http_server(port, addr=host, registry=_registry(state))
    except OSError as error:
        # The game goes on without its metrics (Prometheus shows the target down).
        logger.error("%s: cannot serve metrics on %s:%s (%s)", process, host, port, error)
        return None
    served = int(server.server_port)
    logger.info("%s: metrics on http://%s:%s/metrics", process, host, served)
    return served
