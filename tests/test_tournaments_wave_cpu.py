"""A wave's CPU beside its wall time, so that tourneybench's waves can be judged against the
machine (docs/PERFORMANCE.md, "Tournaments"): the product logs it on each wave's line, and
devtools/wave_load.py matches each wave with the machine's load around it."""

from __future__ import annotations

import logging
import re
from datetime import datetime

import pytest

from devtools import wave_load
from tests.test_tournaments import arena, players, started
from tournaments.services import entries

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_waves_log_line_gives_the_cpu_its_process_spent_beside_its_wall_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    creator, *field = players(5, "cpu")
    tournament = arena(creator)
    for player in field:
        entries.join(user=player, tournament_id=tournament.pk)
    with caplog.at_level(logging.INFO, logger="tournaments.services.rounds"):
        started(tournament)
    (line,) = [r.getMessage() for r in caplog.records if "paired" in r.getMessage()]
    found = re.fullmatch(
        rf"tournament {tournament.pk}: wave 1 paired: 2 game\(s\) of 4 free \(0 left waiting\)"
        r" in ([0-9.]+) s \(CPU ([0-9.]+) s\)",
        line,
    )
    assert found, line
    wall, cpu = float(found.group(1)), float(found.group(2))
    assert 0 < cpu <= wall + 0.01  # one thread's work: no more CPU than wall time
    (wave,) = wave_load.waves(line)
    assert (wave.games, wave.free, wave.left, wave.seconds, wave.cpu) == (2, 4, 0, wall, cpu)


def stamp(at: str) -> float:
    return datetime.strptime(at, "%Y-%m-%d %H:%M:%S,%f").timestamp()


SWEEPER_LOG = """\
2026-11-29 10:00:01,000 INFO tournaments.services.rounds: tournament 7: wave 1 paired: \
500 game(s) of 1000 free (0 left waiting) in 1.500 s (CPU 1.200 s)
2026-11-29 10:00:02,000 INFO games.lifecycle: something else
2026-11-29 10:00:03,000 INFO tournaments.services.rounds: tournament 8: wave 1 paired: \
1 game(s) of 2 free (0 left waiting) in 0.010 s (CPU 0.010 s)
2026-11-29 10:00:05,000 INFO tournaments.services.rounds: tournament 7: wave 2 paired: \
40 game(s) of 81 free (1 left waiting) in 1.000 s (CPU 0.250 s)
{"ts": "2026-11-29T09:00:06.000+00:00", "level": "INFO", "message": "tournament 7: round 3 \
paired: 4 game(s) in 0.300 s"}
"""


def test_tourneybench_reads_each_waves_cpu_and_the_machine_around_it() -> None:
    found = wave_load.waves(SWEEPER_LOG, tournament=7)
    assert [(w.kind, w.number, w.seconds, w.cpu) for w in found] == [
        ("wave", 1, 1.5, 1.2),
        ("wave", 2, 1.0, 0.25),
        ("round", 3, 0.3, None),  # a line from before the CPU was logged
    ]
    assert found[0].at == stamp("2026-11-29 10:00:01,000")
    assert found[2].at == datetime.fromisoformat("2026-11-29T09:00:06+00:00").timestamp()
    # The machine sampled each second: 100 jiffies a second, busy 20 a second until 10:00:03,
    # then 90 (another user's work).
    start = stamp("2026-11-29 09:59:58,000")
    samples, busy = [], 0
    for second in range(9):
        samples.append(wave_load.Sample(start + second, busy, 100 * second, load=1.0 + second))
        busy += 20 if second < 5 else 90
    first, second = wave_load.judged(found[:2], samples)
    # Wave 1 ran 09:59:59.5-10:00:01: samples at :59 and :01, 20% busy; it waited 0.3 s.
    assert first.machine == wave_load.Machine(busy=0.2, load=4.0)
    assert first.waited == pytest.approx(0.3)
    # Wave 2 ran 10:00:04-05, the machine 90% busy: 0.75 s of its 1 s was waiting.
    assert second.machine == wave_load.Machine(busy=0.9, load=8.0)
    assert second.waited == pytest.approx(0.75)
    # Outside the samples: nothing made up.
    assert wave_load.around(samples, start - 5, start - 4) is None
