"""Metrics for Prometheus (docs/METRICS.md, realtime/metrics.py).

Two real server processes share one PROMETHEUS_MULTIPROC_DIR; only the first serves metrics
(on a port of its own): what the second counts shows there too, and goes when it stops. The
sweeper, the computer's worker and the mails are counted in this process, by calling the real
functions, and read from the registry.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine
import yaml
from channels.db import database_sync_to_async
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules
from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from bots import services as bots
from bots.worker import Worker
from config import serve
from games import catchup, services
from games.engine import client_moves, pick_client_move, rules_for
from games.management.commands.sweeper import sweep
from games.models import Game, MoveNotice
from lobby.models import Challenge, Seek
from lobby.services import computer as computer_seeks
from lobby.services import seeks
from realtime import metrics
from realtime.channel_layers import PubSubChannelLayer, redis_host
from tests import live
from tests.games_helpers import make_user
from tests.servers import (
    ROOT,
    Server,
    Visitor,
    background,
    collected_static,
    free_port,
    migrated_scratch_database,
    running,
)

# The metrics are the processes', not the database's: the slow stack of two servers runs once.
pytestmark = pytest.mark.sqlite(
    reason="per-process metrics and their scrape do not depend on the database: run once"
)

SECRET = "metrics-test-secret-key-not-for-production-0123456789"


@dataclass
class Stack:
    metered: Server  # serves the metrics of both, on metrics_port
    other: Server
    metrics_port: int
    env: dict[str, str | None]
    scratch: Path

    def scrape(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every sample the metrics port serves: (name, sorted labels) -> value."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }


def value(samples: dict, name: str, **labels: str) -> float:
    return float(samples.get((name, tuple(sorted(labels.items()))), 0.0))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    scratch = tmp_path_factory.mktemp("metrics")
    shared = scratch / "prometheus"
    shared.mkdir()
    with ExitStack() as stack:
        env: dict[str, str | None] = {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_SECRET_KEY": SECRET,
            "DATABASE_URL": stack.enter_context(migrated_scratch_database(scratch)),
            "DJANGO_STATIC_ROOT": str(collected_static()),
            "REDIS_URL": None,
            "MAX_SOCKETS_PER_ADDRESS": "0",
            "PROMETHEUS_MULTIPROC_DIR": str(shared),
            "METRICS_PORT": None,
        }
        metrics_port, port, other_port = free_port(), free_port(), free_port()
        metered = stack.enter_context(
            running(
                serve.command("127.0.0.1", port),
                {**env, "METRICS_PORT": str(metrics_port)},
                scratch / "metered.log",
                port,
            )
        )
        other = stack.enter_context(
            running(serve.command("127.0.0.1", other_port), env, scratch / "other.log", other_port)
        )
        yield Stack(metered, other, metrics_port, env, scratch)
        for log in scratch.glob("*.log"):
            assert "Traceback" not in log.read_text(errors="replace"), log.read_text()


def new_game(server: Server) -> tuple[Visitor, Visitor, int]:
    alice = Visitor(server).play_as_guest()
    bob = Visitor(server).play_as_guest()
    offer = live.challenge(alice, user=bob.username, side="first")
    return alice, bob, live.accept(bob, offer["id"])


def first_legal_move(visitor: Visitor, game_id: int) -> str:
    game = visitor.api(f"/api/games/{game_id}")
    legal = game.get("legal_moves") or game["game"]["legal_moves"]
    return str(legal[0])


def test_a_move_on_either_process_is_counted_and_timed_for_its_game(stack: Stack) -> None:
    before = stack.scrape()
    for server in (stack.other, stack.metered):
        alice, _, game_id = new_game(server)
        move = first_legal_move(alice, game_id)
        answer = alice.api(f"/api/games/{game_id}/move", {"move": move, "ply": 0})
        assert answer["ok"] and not answer["duplicate"]
        # A resent move is answered again, not played again: it counts for nothing.
        assert alice.api(f"/api/games/{game_id}/move", {"move": move, "ply": 0})["duplicate"]
    after = stack.scrape()
    moves = "diffusion_moves_total"
    assert value(after, moves, game="diffusion") - value(before, moves, game="diffusion") == 2
    timed = "diffusion_move_seconds_count"
    assert value(after, timed, game="diffusion") - value(before, timed, game="diffusion") == 2
    seconds = value(after, "diffusion_move_seconds_sum", game="diffusion") - value(
        before, "diffusion_move_seconds_sum", game="diffusion"
    )
    assert 0 < seconds < 10
    assert value(after, "diffusion_move_seconds_bucket", game="diffusion", le="+Inf") >= 2


def test_open_sockets_are_counted_by_kind_on_every_process(stack: Stack) -> None:
    alice, _, game_id = new_game(stack.other)

    async def check() -> None:
        lobby, hello = await live.open_socket(stack.other, "/ws/lobby/", alice)
        assert hello["type"] == "lobby"
        game, snapshot = await live.open_socket(stack.metered, f"/ws/games/{game_id}/", alice)
        assert snapshot["type"] == "state"
        try:
            samples = stack.scrape()
            assert value(samples, "diffusion_sockets_open", kind="lobby") == 1
            assert value(samples, "diffusion_sockets_open", kind="game") == 1
        finally:
            await lobby.close()
            await game.close()
        for _ in range(100):  # the server ends each consumer just after the close
            samples = stack.scrape()
            if value(samples, "diffusion_sockets_open", kind="lobby") == 0 and (
                value(samples, "diffusion_sockets_open", kind="game") == 0
            ):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"sockets still counted after closing: {samples}")

    asyncio.run(check())


def test_a_process_that_ends_takes_its_live_gauges_out_of_the_sum(stack: Stack) -> None:
    """Sockets open and turns being thought on are live gauges: a process that ends (here
    with some still counted, as a crash in its shutdown would leave them) no longer counts,
    while what it counted (moves) stays in the sum."""
    before = stack.scrape()
    script = (
        "import django; django.setup()\n"
        "from realtime import metrics\n"
        "metrics.serve('a short process')\n"
        "metrics.SOCKETS.labels('lobby').inc(3)\n"
        "metrics.BOT_TURNS.labels('thinking').set(2)\n"
        "metrics.MOVES.labels('zigzag').inc(5)\n"
    )
    environment = {**os.environ, **stack.env, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={key: value for key, value in environment.items() if value is not None},
        check=True,
        timeout=60,
    )
    after = stack.scrape()
    assert value(after, "diffusion_sockets_open", kind="lobby") == value(
        before, "diffusion_sockets_open", kind="lobby"
    )
    assert value(after, "diffusion_bot_turns", state="thinking") == 0
    zigzag = value(after, "diffusion_moves_total", game="zigzag")
    assert zigzag - value(before, "diffusion_moves_total", game="zigzag") == 5


def test_the_metrics_are_not_served_on_the_site(stack: Stack) -> None:
    for server in (stack.metered, stack.other):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{server.http}/metrics", timeout=10)
        assert refused.value.code == 404
    # The metrics port answers Prometheus' text format, and nothing of the site.
    with urllib.request.urlopen(f"http://127.0.0.1:{stack.metrics_port}/", timeout=10) as page:
        assert page.headers["Content-Type"].startswith("text/plain")
        assert b"diffusion_moves" in page.read()


# --- in this process: the sweeper, the computer, the mails, the database gauges -------------


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db
def test_the_sweepers_lateness_and_passes_are_measured() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="1+0"
    )
    count = sample("diffusion_sweeper_lateness_seconds_count")
    total = sample("diffusion_sweeper_lateness_seconds_sum")
    # Nobody moves: 30 s for the first move, and the sweeper looks 2.5 s after its deadline.
    with time_machine.travel(timezone.now() + timedelta(seconds=32.5), tick=False):
        assert sweep() == 1
    assert sample("diffusion_sweeper_lateness_seconds_count") == count + 1
    lateness = sample("diffusion_sweeper_lateness_seconds_sum") - total
    assert 2.4 < lateness < 3.5, lateness
    game.refresh_from_db()
    assert game.status == Game.Status.ABORTED


@pytest.mark.django_db(transaction=True)
def test_the_computers_thinking_and_its_queue_are_measured() -> None:
    alice = make_user("alice")
    game = bots.play_computer(user=alice, slug="zigzag", options={}, level=1, side="second")
    thought = sample("diffusion_bot_think_seconds_count", game="zigzag")
    worker = Worker(processes=1, poll=0.05)
    try:
        worker.step()
        assert sample("diffusion_bot_turns", state="thinking") == 1
        assert sample("diffusion_bot_turns", state="waiting") == 0
        deadline = time.monotonic() + 20
        while Game.objects.get(pk=game.pk).ply == 0:
            assert time.monotonic() < deadline, "the computer did not answer"
            worker.step()
        worker.step()
    finally:
        worker.close()
    assert sample("diffusion_bot_think_seconds_count", game="zigzag") == thought + 1
    assert sample("diffusion_bot_think_seconds_sum", game="zigzag") > 0
    assert sample("diffusion_bot_turns", state="thinking") == 0


@pytest.mark.django_db
def test_mails_sent_and_failed_are_counted(settings: Any) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    bob.email = "bob@example.com"
    bob.save()
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="3d"
    )
    sent = sample("diffusion_mails_total", kind="move", outcome="sent")
    failed = sample("diffusion_mails_total", kind="move", outcome="failed")
    services.play_move(game_id=game.pk, user=alice, move=first_move(game), ply=0)
    assert MoveNotice.objects.count() == 1
    assert services.send_move_notices() == 1  # into the test settings' outbox
    assert sample("diffusion_mails_total", kind="move", outcome="sent") == sent + 1
    # The outgoing mail server is down: nothing listens on its port.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    with pytest.raises(ConnectionRefusedError):  # the server's failure: the caller keeps it
        services.notify_move(game.pk, 2)
    assert sample("diffusion_mails_total", kind="move", outcome="failed") == failed + 1
    assert sample("diffusion_mails_total", kind="move", outcome="sent") == sent + 1


def first_move(game: Game) -> str:
    rules = rules_for(game.slug, game.options)
    return pick_client_move(client_moves(rules, rules.from_json(game.state)), random.Random(1))


@pytest.mark.django_db
def test_the_time_seeks_wait_for_a_person_or_the_computer_is_measured() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    people = sample("diffusion_seek_pairing_seconds_count", partner="person")
    computer = sample("diffusion_seek_pairing_seconds_count", partner="computer")
    waited = sample("diffusion_seek_pairing_seconds_sum", partner="computer")
    _, none = seeks.create_seek(user=alice, games={"slug": "diffusion"}, time_control="5+3")
    assert none is None
    _, game = seeks.create_seek(user=bob, games={"slug": "diffusion"}, time_control="5+3")
    assert game is not None
    assert sample("diffusion_seek_pairing_seconds_count", partner="person") == people + 2
    # A seek that allows the computer, 40 s old: it gets its game against the computer.
    seek, _ = seeks.create_seek(
        user=carol, games={"slug": "zigzag"}, time_control="5+3", computer=1
    )
    Seek.objects.filter(pk=seek.pk).update(created_at=timezone.now() - timedelta(seconds=40))
    assert computer_seeks.hand_to_computer() == 1
    assert sample("diffusion_seek_pairing_seconds_count", partner="computer") == computer + 1
    assert 39 < sample("diffusion_seek_pairing_seconds_sum", partner="computer") - waited < 45


@pytest.mark.django_db
def test_the_database_gauges_count_what_waits() -> None:
    autodiscover_modules("metrics")
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    Seek.objects.create(user=alice, games=[{"slug": "diffusion", "options": {}}], realtime=True)
    Seek.objects.create(user=bob, games=[{"slug": "zigzag", "options": {}}], realtime=False)
    Seek.objects.create(
        user=carol, games=[{"slug": "zigzag", "options": {}}], status=Seek.Status.CANCELLED
    )
    soon, gone = timezone.now() + timedelta(days=1), timezone.now() - timedelta(days=1)
    Challenge.objects.create(
        challenger=alice, challenged=bob, slug="diffusion", token="a", expires_at=soon
    )
    Challenge.objects.create(challenger=alice, slug="diffusion", token="b", expires_at=soon)
    Challenge.objects.create(challenger=bob, slug="diffusion", token="c", expires_at=gone)
    services.create_game(slug="zigzag", options={}, player1=alice, player2=bob)
    read = {
        (sample.name, tuple(sample.labels.values())): sample.value
        for family in metrics.DatabaseState().collect()
        for sample in family.samples
    }
    assert read[("diffusion_seeks_waiting", ("realtime",))] == 1
    assert read[("diffusion_seeks_waiting", ("correspondence",))] == 1
    assert read[("diffusion_challenges_pending", ("direct",))] == 1
    assert read[("diffusion_challenges_pending", ("open",))] == 1
    assert read[("diffusion_games_active", ("zigzag",))] == 1
    assert ("diffusion_games_active", ("diffusion",)) not in read
    for kind in ("move", "follow", "pbm"):
        assert read[("diffusion_mails_queued", (kind,))] == 0
    assert read[("diffusion_pbm_mails_unanswered", ())] == 0
    assert read[("diffusion_database_state_up", ())] == 1


class BehindStream:
    """A game socket's stream as the catch-up sees it (games.catchup.Stream), that missed
    every broadcast."""

    def __init__(self, game_id: int) -> None:
        self.game_id, self.last_v, self.busy = game_id, 0, False

    async def catch_up(self, version: int) -> None:
        self.last_v = version


@pytest.mark.django_db(transaction=True)
async def test_sockets_caught_up_from_the_database_are_counted() -> None:
    def a_game_with_a_move() -> int:
        game = services.create_game(
            slug="diffusion", options={}, player1=make_user("alice"), player2=make_user("bob")
        )
        services.play_move(game_id=game.pk, user=game.player1, move=first_move(game), ply=0)
        return int(game.pk)

    game_id = await database_sync_to_async(a_game_with_a_move)()
    streams = [BehindStream(game_id), BehindStream(game_id)]
    before = sample("diffusion_catch_ups_total")
    loop = asyncio.get_running_loop()
    for stream in streams:
        catchup.watch(stream)
    try:
        await catchup.catch_up_once(loop)  # sees v1 stored
        assert sample("diffusion_catch_ups_total") == before
        await catchup.catch_up_once(loop)  # both sockets still lack it: caught up
        assert sample("diffusion_catch_ups_total") == before + 2
        await catchup.catch_up_once(loop)  # up to date: nothing more
        assert sample("diffusion_catch_ups_total") == before + 2
    finally:
        for stream in streams:
            catchup.forget(stream)


def test_a_sweeper_without_its_database_counts_the_outage_and_still_answers(
    tmp_path: Path,
) -> None:
    port = free_port()
    env: dict[str, str | None] = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_SECRET_KEY": SECRET,
        # A database file in a directory that does not exist: it cannot be opened.
        "DATABASE_URL": f"sqlite:///{tmp_path / 'gone' / 'db.sqlite3'}",
        "REDIS_URL": None,
        "PROMETHEUS_MULTIPROC_DIR": None,
        "METRICS_PORT": str(port),
    }
    command = [sys.executable, "manage.py", "sweeper"]
    with background(command, env, tmp_path / "sweeper.log"):
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    samples = {
                        (s.name, tuple(sorted(s.labels.items()))): s.value
                        for family in text_string_to_metric_families(r.read().decode())
                        for s in family.samples
                    }
                # The scrape's own failure is counted after it was read: seen by the next one.
                if all(
                    value(samples, "diffusion_database_errors_total", where=where) >= 1
                    for where in ("sweeper", "metrics")
                ):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "sweeper.log").read_text()
            time.sleep(0.2)
    # The scrape answered, without the gauges it could not read, and says so.
    assert value(samples, "diffusion_database_state_up") == 0
    assert ("diffusion_seeks_waiting", (("kind", "realtime"),)) not in samples
    log = (tmp_path / "sweeper.log").read_text()
    assert "database unreachable" in log and "Traceback" not in log


def test_a_channel_layer_that_cannot_reach_redis_is_counted() -> None:
    before = sample("diffusion_redis_errors_total", operation="subscribe")

    async def subscribe() -> None:
        # Nothing listens on the port: Redis is down.
        layer = PubSubChannelLayer(hosts=[redis_host(f"redis://127.0.0.1:{free_port()}/0")])
        try:
            await asyncio.wait_for(layer.new_channel(), 10)
        finally:
            await layer.flush()

    asyncio.run(subscribe())
    assert sample("diffusion_redis_errors_total", operation="subscribe") == before + 1


# --- the documentation and the dashboard -------------------------------------------------------


def exposed_names() -> set[str]:
    """Every metric the product defines, by the name Prometheus sees (counters with _total)."""
    autodiscover_modules("metrics")
    names = {"diffusion_database_state_up", *metrics._state}
    for defined in vars(metrics).values():
        if isinstance(defined, MetricWrapperBase):
            suffix = "_total" if defined._type == "counter" else ""
            names.add(defined._name + suffix)
    return names


def named_in(text: str) -> set[str]:
    found = set(re.findall(r"\bdiffusion_[a-z_]+", text))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in found}


def test_every_metric_is_documented_and_on_the_dashboard() -> None:
    names = exposed_names()
    assert all(name.startswith("diffusion_") for name in names)
    assert {"diffusion_moves_total", "diffusion_seeks_waiting", "diffusion_mails_queued"} <= names
    docs = (ROOT / "docs" / "METRICS.md").read_text()
    dashboard = json.loads((ROOT / "docker" / "grafana" / "diffusion.json").read_text())
    expressions = "\n".join(
        target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])
    )
    assert named_in(docs) == names, "docs/METRICS.md and realtime/metrics.py differ"
    assert named_in(expressions) == names, "the dashboard and realtime/metrics.py differ"
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "prometheus"}, panel
    sources = ROOT / "docker" / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
    provisioned = yaml.safe_load(sources.read_text())
    assert provisioned["datasources"][0]["uid"] == "prometheus"
