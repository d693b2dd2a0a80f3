"""The PostgreSQL tier: what production runs on, against the real server."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.db import IntegrityError, connection, transaction
from django.test import Client

from lobby.models import User
from tests.wsutil import communicator

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_the_tests_really_run_on_postgresql() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    assert version.startswith("PostgreSQL")


def test_the_database_refuses_names_that_differ_only_in_case() -> None:
    User.objects.create_user(username="Steere", password="x-long-password-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(username="STEERE", password="x-long-password-1")


def test_sign_up_guest_play_and_log_in_work_on_postgresql() -> None:
    browser = Client()
    browser.post(
        "/signup/",
        {"username": "Rodeffer", "password1": "zigzag-rules-7", "password2": "zigzag-rules-7"},
    )
    browser.post("/logout/")
    assert (
        browser.post("/login/", {"username": "Rodeffer", "password": "zigzag-rules-7"}).status_code
        == 302
    )
    Client().post("/guest/")
    assert sorted(User.objects.values_list("is_guest", flat=True)) == [False, True]


async def test_the_socket_finds_the_session_user_in_postgresql() -> None:
    def log_in_guest() -> tuple[str, str]:
        browser = Client()
        browser.post("/guest/")
        return browser.cookies["sessionid"].value, User.objects.get().username

    session_key, username = await database_sync_to_async(log_in_guest)()
    client = communicator(session_key=session_key)
    connected, _ = await client.connect()
    assert connected
    hello = await client.receive_json_from()
    assert hello["user"] == {"username": username, "is_guest": True}
    await client.disconnect()
