"""Every page and e-mail reads in each shipped language: the same page in English and in the
language is compared text by text, and a piece of text the two share is English left behind
(an unmarked string), unless it is a name or notation that every language writes the same.

The figure "pages and e-mails checked per language" of docs/TRANSLATING.md is this file's."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
import time_machine
from django.conf import settings
from django.core import mail
from django.test import Client
from django.utils import translation

from accounts import emails
from accounts.models import User
from games import selectors, services
from games.engine import rules_for
from games.rules_pages import documented_games
from games.services import correspondence
from pbm import grammar, inbox
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db

TRANSLATED = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]

# Text every language writes the same: names of games, people and the site, notation, codes.
SAME_EVERYWHERE = {
    "Diffusion",
    "ZigZag",
    "Four-rank Diffusion",
    "Diffusion Chess",
    "Diffusion online",
    "pbmserv",
    "Mark Steere",
    "Alexandre Muñiz",
    "English",
    "Français",
    "Deutsch",
    "Español",
    "alice",
    "bob",
    "carol",
    "OK",
    "Elo",
    "Glicko-2",
    "E-mail",
    "Email",
    "Chat",
    "Blitz",
    "Tournament",
    "Live",
    "Rating",
    "Login",
    "Start",
    "Standings",
    "Name",
    "Info",
    "Status",
    "Total",
    "Position",
    "Notation",
    "Analysis",
    "Moderation",
    "Guest",
    "Spam",
    # Words some languages write as English does.
    "online",
    "Lobby",
    "Format",
    "optional",
    "min",
    "min +",
    "minutes",
    "site",
    "JSON",
    "Echo",
    "offline",
    "chat",
    "Notifications",
}
# Words of three letters or more: what is worth flagging (not "vs", "a1", "5+3", "·").
WORDY = re.compile(r"[A-Za-z]{3,}")
ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}


class _Text(HTMLParser):
    """The text a reader sees (and hears: labels), without scripts, styles and code."""

    SKIP = {"script", "style", "code", "pre", "kbd", "samp", "svg", "textarea", "option"}

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skipping += 1
        for name, value in attrs:
            if name in ATTRIBUTES and value:
                self.pieces.append(value.strip())

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping and data.strip():
            # "Notation · Diffusion online": each part on its own.
            self.pieces.extend(part for part in " ".join(data.split()).split(" · ") if part)


def visible(html: str) -> list[str]:
    parser = _Text()
    parser.feed(html)
    return parser.pieces


def left_in_english(english: list[str], translated: list[str]) -> list[str]:
    shared = set(english) & set(translated)
    return sorted(
        text
        for text in shared
        if WORDY.search(text)
        and text not in SAME_EVERYWHERE
        and not text.startswith(("@", "#"))
        and not re.fullmatch(r"[\w.+-]+@[\w.-]+", text)  # an address
        and not re.fullmatch(r"https?://\S+", text)  # a link
        and not re.fullmatch(r"/\S*", text)  # an address on the site
    )


PUBLIC = ["/login/", "/signup/", "/password-reset/"]


def pages() -> list[str]:
    """The pages a signed-in player sees (a game between alice and bob among them, and one
    with options, whose name the lists and its page give with them)."""
    game = new_game()
    options = new_game("zigzag", {"pits": 6, "seeds": 5})
    return [
        f"/games/{options.pk}/",
        "/",
        "/live/",
        "/rules/",
        *[f"/rules/{game['slug']}/" for game in documented_games()],
        "/standings/",
        "/tournaments/",
        "/analysis/",
        "/analysis/notation/",
        "/help/mail/",
        f"/games/{game.pk}/",
        "/@alice/",
        "/@bob/",
        "/settings/account/",
        "/settings/password/",
        "/settings/email/",
        "/settings/two-factor/",
        "/settings/privacy/",
        "/report/?user=bob",
        "/no-such-page/",
    ]


def page_in(client: Client, path: str, language: str) -> str:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    response = client.get(path)
    assert response.status_code in (200, 404), (path, response.status_code)
    return response.content.decode()


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_page_is_in_the_language_with_nothing_left_in_english(language: str) -> None:
    player = Client()
    paths = pages()
    player.force_login(User.objects.get(username="alice"))
    visits = [(player, path) for path in paths] + [(Client(), path) for path in PUBLIC]
    problems = {}
    for client, path in visits:
        english = visible(page_in(client, path, "en"))
        translated = visible(page_in(client, path, language))
        left = left_in_english(english, translated)
        if left:
            problems[path] = left
    assert not problems, (
        f"{language}: English left on {len(problems)} of {len(visits)} pages: {problems}"
    )


def _lines(message: Any) -> list[str]:
    return [" ".join(line.split()) for line in [message.subject, *message.body.splitlines()]]


def _sent(send: Callable[[], Any]) -> Any:
    mail.outbox.clear()
    send()
    assert len(mail.outbox) == 1, [sent.subject for sent in mail.outbox]
    return mail.outbox[0]


def _pair() -> tuple[User, User]:
    alice, bob = make_user("alice"), make_user("bob")
    for user in (alice, bob):
        user.email = f"{user.username}@example.com"
        user.save()
    return alice, bob


def _your_move(bob: User) -> Any:
    game = services.create_game(
        slug="diffusion",
        options={},
        player1=User.objects.get(username="alice"),
        player2=bob,
        time_control="3d",
    )
    services.play_move(game_id=game.pk, user=game.player1, move="I", ply=0)
    return _sent(lambda: correspondence.notify_move(game.pk, 2))


def _reminder(bob: User) -> Any:
    with time_machine.travel("2026-03-01 12:00:00", tick=False) as clock:
        services.create_game(
            slug="zigzag",
            options={},
            player1=bob,
            player2=User.objects.get(username="alice"),
        )
        clock.shift(timedelta(days=7, hours=1))
        return _sent(correspondence.remind_stalled)


def _address_confirmation(bob: User) -> Any:
    with translation.override(bob.language or "en"):  # the asker's page's language
        return _sent(lambda: emails.do_request_change(user=bob, address="new-bob@example.com"))


def _password_reset(bob: User) -> Any:
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = bob.language or "en"
    return _sent(lambda: client.post("/password-reset/", {"email": bob.email}))


def _mail_door_help(bob: User) -> Any:
    stored = inbox.store(
        (
            f"From: {bob.email}\r\nTo: pbm@localhost\r\nMessage-ID: <help-{bob.language}@x>\r\n"
            "Subject: help\r\n\r\nhelp\r\n"
        ).encode(),
        bob.email,
        ["pbm@localhost"],
    )
    assert stored is not None
    inbox.process(stored.pk)
    return _sent(inbox.deliver)


EMAILS = {
    "your move": _your_move,
    "reminder": _reminder,
    "address confirmation": _address_confirmation,
    "password reset": _password_reset,
    "mail door reply": _mail_door_help,
}


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("kind", list(EMAILS))
def test_every_email_is_in_the_recipients_language(kind: str, language: str) -> None:
    _alice, bob = _pair()
    english = _lines(EMAILS[kind](bob))
    User.objects.filter(pk=bob.pk).update(language=language)
    bob.refresh_from_db()
    translated = _lines(EMAILS[kind](bob))
    if kind == "mail door reply":  # whose subject echoes the command (pbmserv's, English)
        english, translated = english[1:], translated[1:]
    else:
        assert translated[0] != english[0], "the subject is translated"
    # The mail door's command forms (words, USERID, ...) are pbmserv's protocol: English.
    forms = {*grammar.GLOBAL_FORMS.values(), *grammar.GAME_FORMS.values()}
    left = [text for text in left_in_english(english, translated) if text not in forms]
    assert not left, f"{kind} in {language}: English left: {left}"


@pytest.mark.parametrize("kind", ["your move", "reminder"])
def test_a_mail_names_the_game_and_its_options_in_the_readers_language(kind: str) -> None:
    # The sweeper and the mover's request run in their own language: the name must be built
    # inside the recipient's, options and all.
    _alice, bob = _pair()
    User.objects.filter(pk=bob.pk).update(language="fr")
    bob.refresh_from_db()
    options = {"pits": 6, "seeds": 5}
    with translation.override("fr"):
        french = selectors.title_for("zigzag", options)
    assert french != "ZigZag (pits 6, seeds 5)", "the catalogue translates the options"
    with (
        translation.override("en"),
        time_machine.travel("2026-03-01 12:00:00", tick=False) as clock,
    ):
        if kind == "your move":
            game = services.create_game(
                slug="zigzag",
                options=options,
                player1=User.objects.get(username="alice"),
                player2=bob,
                time_control="3d",
            )
            rules = rules_for("zigzag", options)
            move = rules.legal_moves(rules.initial_state())[0]
            services.play_move(game_id=game.pk, user=game.player1, move=str(move), ply=0)
            sent = _sent(lambda: correspondence.notify_move(game.pk, 2))
        else:
            services.create_game(
                slug="zigzag",
                options=options,
                player1=bob,
                player2=User.objects.get(username="alice"),
            )
            clock.shift(timedelta(days=7, hours=1))
            sent = _sent(correspondence.remind_stalled)
    assert french in sent.subject, sent.subject
    assert french in sent.body, sent.body
    assert "pits 6" not in sent.body
