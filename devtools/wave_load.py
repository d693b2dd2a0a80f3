"""What each tournament wave or round cost, and what the machine was doing meanwhile.

A wave's time (the product's own measure, `diffusion_tournament_pairing_seconds`) is wall
time: on a machine busy with other work it grows while the wave waits for a core, and the same
command reads 0.45 s on a quiet machine and 1.11 s on a busy one. To judge the figure against
the machine, as `loadtest --floor` judges its CPU per move, tourneybench reads beside each
wave's wall time:

- its CPU: the CPU time of the process that paired it over the same span, which the product
  logs on the wave's line (`... in 0.212 s (CPU 0.150 s)`, tournaments/services/rounds.py);
- the machine around it: the share of all cores busy (from /proc/stat, every process of the
  machine included) and the load average, sampled by `Sampler` every quarter second while the
  arena runs and matched to the wave by the time its line was logged.

So a slow wave whose CPU is small waited for the machine (a core, PostgreSQL, Redis), and one
whose CPU is as long as its wall time is the product's own work.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from devtools.servers import busy_jiffies

# "tournament 7: wave 41 paired: 240 game(s) of 481 free (1 left waiting) in 0.212 s
# (CPU 0.150 s)"; the CPU is absent from lines logged before it was.
WAVE_LINE = re.compile(
    r"tournament (\d+): (wave|round) (\d+) paired: (\d+) game\(s\)"
    r"(?: of (\d+) free \((\d+) left waiting\))? in ([0-9.]+) s(?: \(CPU ([0-9.]+) s\))?"
)
# When a line was logged: the plain format's asctime (local time), or the JSON format's "ts".
PLAIN_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
JSON_STAMP = re.compile(r'"ts": ?"([^"]+)"')

SAMPLE_SECONDS = 0.25


@dataclass(frozen=True)
class Wave:
    """One wave's (or round's) log line."""

    tournament: int
    kind: str  # "wave" (an arena) or "round" (a Swiss, a round robin)
    number: int
    games: int
    free: int | None  # an arena's: the players free when it began
    left: int | None  # and those it left waiting
    seconds: float  # wall time, from reading the players to the games announced
    cpu: float | None  # the pairing process's CPU time over the same span
    at: float | None  # when its line was logged (seconds since the epoch): its end


def waves(log: str, tournament: int | None = None) -> list[Wave]:
    """The waves and rounds logged in `log` (of one tournament if given), in order."""
    found = []
    for line in log.splitlines():
        match = WAVE_LINE.search(line)
        if match is None or (tournament is not None and int(match.group(1)) != tournament):
            continue
        found.append(
            Wave(
                tournament=int(match.group(1)),
                kind=match.group(2),
                number=int(match.group(3)),
                games=int(match.group(4)),
                free=int(match.group(5)) if match.group(5) else None,
                left=int(match.group(6)) if match.group(6) else None,
                seconds=float(match.group(7)),
                cpu=float(match.group(8)) if match.group(8) else None,
                at=logged_at(line),
            )
        )
    return found


def logged_at(line: str) -> float | None:
    plain = PLAIN_STAMP.match(line)
    if plain:
        return datetime.strptime(plain.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
    found = JSON_STAMP.search(line)
    if found:
        try:
            return datetime.fromisoformat(found.group(1).replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class Sample:
    at: float  # time.time()
    busy: int  # the machine's busy jiffies so far (all cores)
    total: int  # and all its jiffies
    load: float  # the 1-minute load average


def sample(at: float) -> Sample:
    busy, total = busy_jiffies()
    return Sample(at=at, busy=busy, total=total, load=os.getloadavg()[0])


class Sampler:
    """The machine's CPU counters every SAMPLE_SECONDS, in a thread, until stopped."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wave-load", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> list[Sample]:
        self._stop.set()
        self._thread.join()
        return self.samples

    def _run(self) -> None:
        while True:
            self.samples.append(sample(time.time()))
            if self._stop.wait(SAMPLE_SECONDS):
                self.samples.append(sample(time.time()))
                return


@dataclass(frozen=True)
class Machine:
    """The machine around one wave: the share of its cores busy, and its load average."""

    busy: float
    load: float


def around(samples: list[Sample], start: float, end: float) -> Machine | None:
    """The machine from the last sample at or before `start` to the first at or after `end`
    (a wave shorter than the sampling period is seen over one or two periods); None if the
    samples do not cover the span."""
    times = [s.at for s in samples]
    first = bisect.bisect_right(times, start) - 1
    last = bisect.bisect_left(times, end)
    if first < 0 or last >= len(samples) or last <= first:
        return None
    a, b = samples[first], samples[last]
    return Machine(
        busy=(b.busy - a.busy) / max(1, b.total - a.total),
        load=max(s.load for s in samples[first : last + 1]),
    )


@dataclass(frozen=True)
class Judged:
    """A wave with its CPU and its machine."""

    wave: Wave
    machine: Machine | None

    @property
    def waited(self) -> float | None:
        """Wall time not spent on the process's CPU: waiting for a core, the database,
        Redis."""
        return None if self.wave.cpu is None else max(0.0, self.wave.seconds - self.wave.cpu)


def judged(found: list[Wave], samples: list[Sample]) -> list[Judged]:
    return [
        Judged(
            wave,
            None if wave.at is None else around(samples, wave.at - wave.seconds, wave.at),
        )
        for wave in found
    ]
