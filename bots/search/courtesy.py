"""A search that gives the machine back: for the positions people ask about (the analysis
board, game reviews), which must not slow the live games served on the same machine.

Measured (docs/PERFORMANCE.md, `analysisbench load`): even in Linux's idle scheduling class, a
search that takes a whole core raised the live games' move p99 by 1.6-1.8x on this 2-core
box (the box's CPU is shared below it, and the idle class cannot give that back). So the
search looks at the machine every `LOOK` seconds: when the rest of it was busier than `BUSY`
(a share of all its cores), it works in slices of `SLICE` seconds with pauses that hold it to
`SHARE` of one core; on a quiet machine it runs flat out.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

LOOK = 0.1
SLICE = 0.005
BUSY = 0.25
SHARE = 0.15
_STAT = Path("/proc/stat")


def _machine() -> tuple[int, int] | None:
    """(busy, total) jiffies of the whole machine so far; None where /proc is not there."""
    try:
        fields = [int(x) for x in _STAT.read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


class Courtesy:
    """Call `tick()` often from a search loop; it sleeps when the machine needs the CPU."""

    def __init__(
        self, busy: float = BUSY, share: float = SHARE, look: float = LOOK, slice_: float = SLICE
    ) -> None:
        self.busy = busy
        self.share = share
        self.look = look
        self.slice = slice_
        self.cores = os.cpu_count() or 1
        self.crowded = False
        self.slept = 0.0
        now = time.perf_counter()
        self.slice_started = now
        self.looked_at = now
        self.machine = _machine()
        self.own = time.process_time()

    def tick(self) -> None:
        now = time.perf_counter()
        if now - self.looked_at >= self.look:
            self._look(now)
        if self.crowded and now - self.slice_started >= self.slice:
            pause = (now - self.slice_started) * (1.0 / self.share - 1.0)
            time.sleep(pause)
            self.slept += pause
            self.slice_started = time.perf_counter()

    def _look(self, now: float) -> None:
        machine, own = _machine(), time.process_time()
        if machine is None or self.machine is None:
            self.looked_at = now
            return
        total = machine[1] - self.machine[1]
        if total <= 0:
            return  # the kernel's counters move in ticks of 10 ms: look again over longer
        everyone = (machine[0] - self.machine[0]) / total
        mine = (own - self.own) / ((now - self.looked_at) * self.cores)
        self.crowded = everyone - mine > self.busy
        self.machine, self.own, self.looked_at = machine, own, now
