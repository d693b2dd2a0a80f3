"""Searches for people give the machine back (bots/search/courtesy.py): on a machine busier
than the threshold they work in slices with pauses; otherwise they never pause. The machine's
load is read from /proc/stat, so the thresholds stand in for a busy and a quiet machine."""

from __future__ import annotations

import time

from bots.search.courtesy import Courtesy
from bots.search.evaluate import evaluate
from games.rules import get_rules


def spin(courtesy: Courtesy, seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        courtesy.tick()


def test_on_a_crowded_machine_the_search_pauses_to_its_share() -> None:
    crowded = Courtesy(busy=-1.0, share=0.25, look=0.01, slice_=0.005)  # always "busy"
    spin(crowded, 0.3)
    assert crowded.crowded
    assert crowded.slept > 0.15  # about three quarters of the time


def test_on_a_quiet_machine_the_search_never_pauses() -> None:
    quiet = Courtesy(busy=2.0, look=0.01)  # never busy enough
    spin(quiet, 0.1)
    assert not quiet.crowded and quiet.slept == 0.0


def test_a_courteous_search_counts_its_time_without_the_pauses() -> None:
    rules = get_rules("diffusion")
    crowded = Courtesy(busy=-1.0, share=0.5, look=0.01, slice_=0.005)
    started = time.perf_counter()
    found = evaluate(rules, rules.initial_state(), 100, courtesy=crowded)
    wall = time.perf_counter() - started
    assert found.best is not None and found.playouts > 0
    assert crowded.slept > 0.03 and 0.13 < wall < 0.4  # 100 ms of work, paused as much again
