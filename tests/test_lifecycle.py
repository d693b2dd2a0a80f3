"""The games app's events for the apps above it: one listener's failure never stops the
others, a bug is logged with its traceback, and a lost database is reported as an outage
(the sweeper's pass is retried) without one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import OperationalError
from django.dispatch import Signal

from games import lifecycle

heard: list[str] = []


def lost_database(**_: Any) -> None:
    heard.append("lost")
    raise OperationalError("server closed the connection unexpectedly")


def well(**_: Any) -> None:
    heard.append("well")


@pytest.fixture
def listeners() -> Iterator[None]:
    heard.clear()
    lifecycle.sweeping.connect(lost_database, dispatch_uid="test-lost")
    lifecycle.sweeping.connect(well, dispatch_uid="test-well")
    yield
    lifecycle.sweeping.disconnect(dispatch_uid="test-lost")
    lifecycle.sweeping.disconnect(dispatch_uid="test-well")


@pytest.mark.django_db
def test_an_outage_in_the_sweepers_listeners_reaches_the_sweeper_after_every_listener_ran(
    listeners: None,
) -> None:
    with pytest.raises(OperationalError):
        lifecycle.sweep()
    assert heard[-2:] == ["lost", "well"]


def test_an_outage_after_a_games_end_is_a_warning_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ended = Signal()  # as games.lifecycle.game_ended, without the real apps' listeners
    ended.connect(lost_database)
    heard.clear()
    lifecycle._send(ended, game=None)
    assert heard == ["lost"]
    (record,) = [r for r in caplog.records if r.name == "games.lifecycle"]
    assert record.levelname == "WARNING"
    assert "lost_database: database unreachable" in record.getMessage()
    assert record.exc_info is None
