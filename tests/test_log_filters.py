"""An outage is one log line per event; a bug keeps its traceback (realtime/log_filters.py)."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
import redis.exceptions
from django.test import Client

from realtime.log_filters import ConnectionErrorsInOneLine
from tests.games_helpers import make_user


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


def through_the_console(make_requests: Any) -> str:
    """What the settings' console handler writes (in the plain format) while requests run."""
    console = next(h for h in logging.getLogger().handlers if h.name == "console")
    assert isinstance(console, logging.StreamHandler)
    stream = io.StringIO()
    previous = console.setStream(stream)
    try:
        make_requests()
    finally:
        console.setStream(previous)
    return stream.getvalue()


@pytest.mark.django_db
def test_a_page_refused_as_forbidden_is_one_info_line_with_its_reason_and_no_traceback() -> None:
    player = Client()
    player.force_login(make_user("carol"))
    guest = Client()
    guest.post("/guest/")

    def refused() -> None:
        assert player.get("/moderation/").status_code == 403  # raises PermissionDenied
        assert guest.get("/settings/account/").status_code == 403  # answers 403

    lines = through_the_console(refused).splitlines()
    assert "Traceback" not in "\n".join(lines)
    forbidden = [line for line in lines if "django.request" in line]
    assert len(forbidden) == 2, lines
    assert all(" INFO django.request " in line for line in forbidden), forbidden
    assert forbidden[0].endswith(
        "Forbidden (Permission denied): /moderation/ (Only moderators can see this page.)"
    )
    assert forbidden[1].endswith(": Forbidden: /settings/account/")


@pytest.mark.django_db
def test_a_body_that_cannot_be_read_is_one_warning_line_without_a_traceback() -> None:
    def unreadable() -> None:
        answer = Client().post(
            "/login/",
            data=b"--x\r\nContent-Disposition: form-data\r\n\r\nno name\r\n--x--",
            content_type="multipart/form-data; boundary=",
        )
        assert answer.status_code == 400

    lines = through_the_console(unreadable).splitlines()
    (refused,) = [line for line in lines if "django.request" in line]
    assert " WARNING django.request " in refused
    assert "Bad request (Unable to parse request body): /login/ (" in refused
    assert not any("Traceback" in line for line in lines), lines


@pytest.mark.django_db
def test_a_forbidden_line_is_left_out_when_the_level_keeps_info_lines_out() -> None:
    player = Client()
    player.force_login(make_user("carol"))
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)
    try:
        text = through_the_console(lambda: player.get("/moderation/"))
    finally:
        root.setLevel(level)
    assert "Forbidden" not in text


def test_a_request_whose_client_left_is_one_info_line_not_a_traceback() -> None:
    # What a server too busy to finish a request logs: Django's task that listened for the
    # client's disconnect, left behind with its RequestAborted, reported by asyncio when the
    # task is collected.
    import asyncio
    import gc

    from django.core.exceptions import RequestAborted

    async def listen_for_disconnect() -> None:
        raise RequestAborted()

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ConnectionErrorsInOneLine())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(listen_for_disconnect())
        loop.run_until_complete(asyncio.sleep(0))
        assert task.done()
        del task
        gc.collect()
    finally:
        loop.close()
        logger.removeHandler(handler)
    assert stream.getvalue() == (
        "INFO asyncio: Task exception was never retrieved (the client left before its response)\n"
    )
