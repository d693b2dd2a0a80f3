"""Fewer malloc arenas: glibc's malloc gives each thread that allocates its own arena, up to
eight per core, and memory freed in an arena is rarely given back to the system.

A server process's database threads build every new socket's presence row and snapshot, so a
storm of connects spread its garbage over as many arenas as there are threads, and the process
kept the high-water mark of each: measured with `python -m devtools wsburst --procs 1 --count
5000 --hold 3`, 43.0 KB of resident memory per idle lobby socket with glibc's default and
38.5-40.3 KB with two arenas or one (the bare stack, whose sockets touch no thread: 34.0-34.4
KB either way). The threads hold the GIL while they allocate, so they rarely wait on an
arena's lock.
"""

from __future__ import annotations

import ctypes
import os

# mallopt's parameter number for the most arenas (glibc's malloc.h).
M_ARENA_MAX = -8
ARENAS = 2


def limit(arenas: int = ARENAS) -> bool:
    """Have glibc's malloc use at most `arenas` arenas from now on (call it before the
    process starts its threads); False where the C library is not glibc, or where
    MALLOC_ARENA_MAX already says how many (an operator's choice wins)."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))
