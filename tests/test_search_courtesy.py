"""Searches for people give the machine back (bots/search/courtesy.py): on a machine busier
than the threshold they work in slices with pauses; otherwise they never pause. The machine's
load is read from /proc/stat, so the thresholds stand in for a busy and a quiet machine, and
the pauses are recorded rather than slept where only their lengths are checked."""

from __future__ import annotations

import time

import pytest

from bots.search import courtesy as courtesy_module
from bots.search.courtesy import Courtesy
from bots.search.evaluate import evaluate
from games.rules import get_rules


def ticks(courtesy: Courtesy, count: int) -> None:
    for _ in range(count):
        courtesy.tick()
        time.sleep(0.0005)  # a little work between ticks, as a search's playouts are


def test_on_a_crowded_machine_the_search_pauses_to_its_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    real_sleep = time.sleep
    monkeypatch.setattr(courtesy_module.time, "sleep", pauses.append)
    crowded = Courtesy(busy=-1.0, share=0.25, look=0.002, slice_=0.002)  # always "busy"
    for _ in range(200):
        crowded.tick()
        real_sleep(0.0005)
    assert crowded.crowded and pauses
    # Each pause is three times the slice of work before it: a quarter of the time working.
    assert all(pause >= 3 * 0.002 for pause in pauses)
    assert crowded.slept == pytest.approx(sum(pauses))


def test_on_a_quiet_machine_the_search_never_pauses() -> None:
    quiet = Courtesy(busy=2.0, look=0.001)  # never busy enough
    ticks(quiet, 100)
    assert not quiet.crowded and quiet.slept == 0.0


def test_a_courteous_search_counts_its_time_without_the_pauses() -> None:
    rules = get_rules("diffusion")
    crowded = Courtesy(busy=-1.0, share=0.5, look=0.01, slice_=0.005)
    started = time.perf_counter()
    found = evaluate(rules, rules.initial_state(), 100, courtesy=crowded)
    assert found.best is not None and found.playouts > 0 and crowded.slept > 0
    # 100 ms of search, not counting the pauses (or three times that in all, at most).
    assert time.perf_counter() - started >= 0.1 + min(crowded.slept, 0.2) - 0.01
