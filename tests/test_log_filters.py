"""An outage is one log line per event; a bug keeps its traceback (realtime/log_filters.py)."""

from __future__ import annotations

import io
import logging

import pytest
import redis.exceptions
from django.test import Client

from realtime.log_filters import ConnectionErrorsInOneLine


def logged(error: BaseException) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ConnectionErrorsInOneLine())
    logger = logging.getLogger("test.log_filters")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise error
        except BaseException:
            logger.exception("broadcast of game %s failed", 7)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_a_connection_failure_is_one_line_with_its_type_and_message() -> None:
    text = logged(redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379."))
    assert text == (
        "broadcast of game 7 failed (ConnectionError: Error 111 connecting to 127.0.0.1:6379.)\n"
    )


def test_a_connection_failure_behind_another_error_is_one_line_too() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as cause:
            raise RuntimeError("receive failed") from cause
    except RuntimeError as error:
        text = logged(error)
    assert "Traceback" not in text and "ConnectionRefusedError" in text


def test_any_other_error_keeps_its_traceback() -> None:
    text = logged(KeyError("state"))
    assert "Traceback (most recent call last)" in text and "KeyError: 'state'" in text


def test_a_task_cancelled_while_the_server_stops_is_one_line() -> None:
    # channels_redis logs its subscriptions' cleanup being cancelled at every shutdown.
    import asyncio

    text = logged(asyncio.CancelledError())
    assert "Traceback" not in text and "CancelledError" in text


@pytest.mark.django_db
def test_a_page_sent_a_body_over_the_limit_answers_400_and_logs_one_line_without_a_traceback() -> (
    None
):
    """Through the logging the settings configure (the console handler's own filters)."""
    console = next(h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler))
    stream = io.StringIO()
    previous = console.setStream(stream)
    try:
        response = Client().post(
            "/login/",
            data="a=" + "x" * (10 * 1024 * 1024),
            content_type="application/x-www-form-urlencoded",
        )
    finally:
        console.setStream(previous)
    assert response.status_code == 400
    text = stream.getvalue()
    assert "refused request: Request body exceeded" in text
    assert "Traceback" not in text
