"""pbmserv's commands over HTTP (`POST /api/command`): every read command answers as the mail
door answers the same command, through the same handlers, as JSON; a refusal carries the
mail's code and message; the commands that act for an account stay the mail's.

The mail door is driven in-process here (inbox.store and inbox.process: everything but the
SMTP socket, which tests/test_pbm_mail.py drives), so both doors read the same rows."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games import services
from games.engine import rules_for
from games.models import Game
from pbm import inbox
from pbm.models import OutboundMail
from ratings.services import rate_game
from realtime.errors import http_status
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def player(name: str, language: str = "") -> User:
    user = make_user(name)
    user.email, user.language = f"{name}@players.test", language
    user.save()
    return user


@pytest.fixture
def boards() -> dict[str, Any]:
    """alice and bob with a ZigZag game going (bob to move) and a finished rated one, and
    carol, who reads French."""
    alice, bob = player("alice"), player("bob")
    player("carol", "fr")
    going = services.create_game(
        slug="zigzag", options={"pits": 4, "seeds": 3}, player1=alice, player2=bob
    )
    rules = rules_for(going.slug, going.options)
    state = rules.from_json(going.state)
    first = sorted(rules.legal_moves(state))[0]
    services.play_move(game_id=going.pk, user=alice, move=first, ply=0)
    answer = sorted(rules.legal_moves(rules.play(state, first)))[0]
    done = services.create_game(
        slug="zigzag", options={}, player1=bob, player2=alice, time_control="3d", rated=True
    )
    services.resign(game_id=done.pk, user=bob)
    assert rate_game(done.pk)
    return {"going": going.pk, "done": done.pk, "answer": answer}


def by_mail(sender: str, subject: str) -> tuple[str, str]:
    """The mail door's reply to a mail from `sender` with this subject: (subject, body)."""
    message_id = f"<{uuid.uuid4().hex}@players.test>"
    raw = (
        f"From: {sender}\r\nTo: pbm@localhost\r\nMessage-ID: {message_id}\r\n"
        f"Subject: {subject}\r\n\r\n\r\n"
    ).encode()
    stored = inbox.store(raw, sender, ["pbm@localhost"])
    assert stored is not None
    inbox.process(stored.pk)
    reply = OutboundMail.objects.get(in_reply_to=message_id)
    return reply.subject, reply.body


def signed_in(name: str) -> Client:
    browser = Client()
    browser.force_login(User.objects.get(username=name))
    return browser


def by_api(browser: Client, text: str) -> Any:
    return browser.post(
        "/api/command", data=json.dumps({"text": text}), content_type="application/json"
    )


READS = [
    "help",
    "help move zigzag",
    "list",
    "all show alice",
    "all show alice all",
    "zigzag help",
    "zigzag standings",
    "zigzag ratings",
    "zigzag history",
    "zigzag games",
    "zigzag games alice all",
    "zigzag games bob next",
    "zigzag show {going}",
    "zigzag show {going}#1 {done}",
    "zigzag show alice bob all",
    "zigzag preview {going} {answer}",
    "ZigZag SHOW {going}",
]


@pytest.mark.parametrize("command", READS)
def test_each_read_command_answers_by_api_as_by_mail(boards: dict[str, Any], command: str) -> None:
    text = command.format(**boards)
    subject, body = by_mail("alice@players.test", text)
    assert not subject.startswith("error"), (subject, body)
    answer = by_api(signed_in("alice"), text)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == "application/json"
    assert answer.json() == {"subject": subject, "text": body}


@pytest.mark.parametrize("command", ["zigzag help", "zigzag show {going}", "help"])
def test_a_read_command_answers_in_the_readers_language_by_api_as_by_mail(
    boards: dict[str, Any], command: str
) -> None:
    text = command.format(**boards)
    english = by_api(signed_in("alice"), text).json()
    subject, body = by_mail("carol@players.test", text)
    assert by_api(signed_in("carol"), text).json() == {"subject": subject, "text": body}
    assert body != english["text"], "carol's answer is in French"


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("zigzag show 999999", "no_such_game"),
        ("zigzag show nobody", "unknown_user"),
        ("zigzag show {going}#x", "bad_move_number"),
        ("zigzag preview {going} Q", "illegal_move"),
        ("zigzag frobnicate", "bad_command"),
        ("frobnicate now", "bad_command"),
        ("all show", "bad_command"),
        ("", "bad_command"),
    ],
)
def test_a_refused_read_command_carries_the_mails_code_message_and_form(
    boards: dict[str, Any], command: str, code: str
) -> None:
    text = command.format(**boards)
    subject, body = by_mail("alice@players.test", text or " ")
    assert subject.startswith(f"error ({code})"), (subject, body)
    message, _, form = body.partition("\n\nThe form: ")
    answer = by_api(signed_in("alice"), text)
    assert answer.status_code == http_status(code)
    expected = {"code": code, "message": message}
    if form:
        expected["form"] = form
    assert answer.json() == {"error": expected}


@pytest.mark.parametrize(
    "command",
    [
        "zigzag move {going} bob bob-mail-pw {answer}",
        "zigzag resign {going} bob bob-mail-pw",
        "zigzag showas bob bob-mail-pw",
        "zigzag queue {going} bob bob-mail-pw",
        "zigzag chat {going} bob bob-mail-pw",
        "signup dave dave-mail-pw",
        "change password bob bob-mail-pw other-pw",
        "delete bob bob-mail-pw",
        "message bob bob-mail-pw alice",
        "multiple",
        "signoff bob bob-mail-pw",
    ],
)
def test_a_command_that_acts_for_an_account_is_left_to_mail(
    boards: dict[str, Any], command: str
) -> None:
    before = Game.objects.get(pk=boards["going"]).version
    answer = by_api(signed_in("bob"), command.format(**boards))
    assert answer.status_code == 400
    refused = answer.json()["error"]
    assert refused["code"] == "mail_only"
    assert "send it by mail" in refused["message"] and "`GAME show`" in refused["message"]
    assert Game.objects.get(pk=boards["going"]).version == before
    assert not User.objects.filter(username="dave").exists()
    assert User.objects.get(username="bob").is_active


def test_the_api_reads_for_signed_in_users_and_guests_only(boards: dict[str, Any]) -> None:
    anonymous = by_api(Client(), "list")
    assert anonymous.status_code == 403
    assert anonymous.json()["error"]["code"] == "not_logged_in"
    guest = Client()
    guest.post("/guest/")
    assert by_api(guest, "list").json()["subject"] == "list"


def test_challenge_by_api_is_still_the_lobbys_answer(boards: dict[str, Any]) -> None:
    made = by_api(signed_in("alice"), "diffusion challenge alice bob")
    assert made.status_code == 200, made.content
    challenge = made.json()["challenge"]
    assert (challenge["challenger"], challenge["challenged"]) == ("alice", "bob")
