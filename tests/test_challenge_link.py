"""Open challenges as links: the first other user to open and accept one plays it."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User
from games.models import Game
from lobby.services import challenges
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def link() -> tuple[str, str]:
    alice = make_user("alice")
    challenge = challenges.create_challenge(challenger=alice, challenged=None, slug="diffusion")
    return f"/challenge/{challenge.token}/", challenge.token


def test_the_link_shows_the_challenge_to_a_visitor(link: tuple[str, str]) -> None:
    page = Client().get(link[0]).content.decode()
    assert "alice" in page and "Diffusion" in page
    assert "Play as a guest" in page
    assert 'id="accept"' not in page


def test_a_guest_accepts_through_the_link_and_lands_on_the_game(link: tuple[str, str]) -> None:
    browser = Client()
    browser.post("/guest/")
    assert 'id="accept"' in browser.get(link[0]).content.decode()
    answer = browser.post(link[0])
    game = Game.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/games/{game.pk}/"
    # The link now says it was taken, with a way to watch.
    again = Client().get(link[0]).content.decode()
    assert f"/games/{game.pk}/" in again


def test_the_challenger_cannot_accept_their_own_link(link: tuple[str, str]) -> None:
    own = Client()
    own.force_login(User.objects.get(username="alice"))
    answer = own.post(link[0])
    assert answer.status_code == 409
    assert "You cannot accept your own challenge." in answer.content.decode()
    assert Game.objects.count() == 0


def test_a_taken_link_cannot_be_accepted_again(link: tuple[str, str]) -> None:
    first = Client()
    first.force_login(make_user("bob"))
    first.post(link[0])
    second = Client()
    second.force_login(make_user("carol"))
    answer = second.post(link[0])
    assert answer.status_code == 409
    assert "That challenge is accepted." in answer.content.decode()
    assert Game.objects.count() == 1


def test_accepting_needs_an_account(link: tuple[str, str]) -> None:
    answer = Client().post(link[0])
    assert answer.status_code == 409
    assert "Play as a guest or log in first" in answer.content.decode()
    assert Game.objects.count() == 0


def test_an_unknown_link_says_so() -> None:
    answer = Client().get("/challenge/not-a-token/")
    assert answer.status_code == 404
    assert "There is no such challenge" in answer.content.decode()
