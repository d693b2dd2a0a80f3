"""What each part of the drill's site costs: CPU seconds of every process tree (read from
/proc: the hosts are network namespaces, the processes all this machine's), PostgreSQL's WAL,
Redis's commands and publishes, PgBouncer's and nginx's own CPU. Two readings, taken around a
steady stretch of play, give each part's cost per move and per socket (docs/SCALING.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import redis

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def process_table() -> dict[int, tuple[int, float]]:
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                table[int(entry)] = found
    return table


def tree_seconds(roots: Iterable[int], table: dict[int, tuple[int, float]]) -> float:
    """CPU seconds of the processes `roots` and all their descendants alive now."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    total, stack, seen = 0.0, list(roots), set()
    while stack:
        pid = stack.pop()
        if pid in seen or pid not in table:
            continue
        seen.add(pid)
        total += table[pid][1]
        stack += children.get(pid, [])
    return total


@dataclass
class Reading:
    at: float
    cpu: dict[str, float] = field(default_factory=dict)  # part -> CPU seconds so far
    wal: int = 0  # bytes of WAL the primary has written, from its start
    redis_commands: dict[str, int] = field(default_factory=dict)  # server -> commands
    redis_publishes: dict[str, int] = field(default_factory=dict)  # server -> PUBLISH calls
    redis_cpu: dict[str, float] = field(default_factory=dict)  # server -> CPU seconds (INFO)


def redis_counts(address: str, port: int) -> tuple[int, int, float]:
    """(commands processed, PUBLISH calls, CPU seconds) of the Redis at address:port."""
    client = redis.Redis(address, port, socket_timeout=2)
    stats = client.info("stats")
    commands = client.info("commandstats")
    cpu = client.info("cpu")
    publishes = int(commands.get("cmdstat_publish", {}).get("calls", 0))
    return (
        int(stats["total_commands_processed"]),
        publishes,
        float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"]),
    )


def per(before: Reading, after: Reading, count: float) -> dict[str, float]:
    """Each part's CPU milliseconds per unit of `count` between the readings."""
    return {
        part: (after.cpu[part] - before.cpu.get(part, 0.0)) * 1000 / count
        for part in after.cpu
        if count
    }


def cores(before: Reading, after: Reading) -> dict[str, float]:
    """Each part's cores in use between the readings."""
    seconds = after.at - before.at
    return {part: (after.cpu[part] - before.cpu.get(part, 0.0)) / seconds for part in after.cpu}


def machine_ticks() -> tuple[int, int]:
    """The machine's CPU time so far, in clock ticks: (busy, all), from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time that was busy between two readings."""
    return (after[0] - before[0]) / max(1, after[1] - before[1])
