"""Who a socket is: its session and user, read for many sockets at once as Channels reads
one (realtime/auth.py, `signed_in_many`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from channels.auth import get_user
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts.models import User
from realtime.auth import signed_in_many
from tests.games_helpers import make_user, session_for

pytestmark = pytest.mark.django_db


def guest_session() -> str:
    browser = Client()
    browser.post("/guest/")
    return browser.cookies["sessionid"].value


def visitor_session() -> str:
    """A session with something in it, and nobody signed in."""
    browser = Client()
    browser.get("/")
    browser.session["seen"] = True
    session = browser.session
    session["seen"] = True
    session.save()
    return str(session.session_key)


def channels_user(key: str) -> Any:
    from importlib import import_module

    from django.conf import settings

    return get_user.func({"session": import_module(settings.SESSION_ENGINE).SessionStore(key)})


def test_many_sockets_are_signed_in_as_channels_signs_in_one_in_two_reads(
    django_assert_max_num_queries: Any,
) -> None:
    alice, bob, carol, dan = (make_user(name) for name in ("alice", "bob", "carol", "dan"))
    keys = {
        "alice": session_for(alice),
        "bob's expired": session_for(bob),
        "carol, password changed since": session_for(carol),
        "dan, deactivated": session_for(dan),
        "a guest": guest_session(),
        "a visitor": visitor_session(),
        "unknown": "k" * 32,
    }
    Session.objects.filter(session_key=keys["bob's expired"]).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    carol.set_password("another long password")
    carol.save()
    User.objects.filter(pk=dan.pk).update(is_active=False)
    asked = [*keys.values(), keys["alice"]]  # two tabs of one browser
    guest = User.objects.get(is_guest=True).username

    # The sessions, their users; and carol's session ended (flushed: found and deleted) as
    # Channels ends it.
    with django_assert_max_num_queries(4):
        found = signed_in_many(asked)

    assert [user.username or None for _, user in found] == [
        "alice",
        None,
        None,
        None,
        guest,
        None,
        None,
        "alice",
    ]
    assert [session.session_key is not None for session, _ in found] == [
        True,
        False,
        False,
        True,
        True,
        True,
        False,
        True,
    ]
    assert not Session.objects.filter(session_key=keys["carol, password changed since"]).exists()
    assert found[5][0]["seen"] is True  # the session's data, read from the same row
    # What Channels itself says of the sessions still there.
    for name in ("alice", "dan, deactivated", "a guest", "a visitor", "unknown"):
        expected = channels_user(keys[name])
        assert expected.username == found[list(keys).index(name)][1].username
