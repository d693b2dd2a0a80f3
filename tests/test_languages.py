"""Which language a page, a socket and an e-mail are in, and the switcher that remembers it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client
from django.utils import translation

from accounts.language import catalog_version, for_user
from accounts.models import User
from games import messages, reasons
from realtime.language import accepted, for_scope, supported
from tests.games_helpers import make_user, new_game, session_for
from tests.wsutil import communicator

pytestmark = pytest.mark.django_db


def html_lang(response: Any) -> str:
    found = re.search(r'<html lang="([^"]+)"', response.content.decode())
    assert found, "the page names its language"
    return found.group(1)


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("fr-FR,fr;q=0.9,en;q=0.8", "fr"),
        ("de-CH", "de"),
        ("es-419,es;q=0.9", "es"),
        ("pt-BR,de;q=0.5", "de"),  # the first shipped one, in the browser's order
        ("ja", "en"),
        ("", "en"),
    ],
)
def test_a_page_is_in_the_browsers_language_when_none_was_chosen(
    header: str, language: str
) -> None:
    response = Client().get("/rules/", HTTP_ACCEPT_LANGUAGE=header)
    assert response.status_code == 200
    assert html_lang(response) == language
    assert response["Content-Language"] == language


def test_the_switcher_remembers_the_choice_over_the_browsers_language() -> None:
    browser = Client()
    response = browser.post("/language/", {"language": "de", "next": "/rules/"})
    assert response.status_code == 302
    assert response["Location"] == "/rules/"
    assert browser.cookies[settings.LANGUAGE_COOKIE_NAME].value == "de"
    page = browser.get("/rules/", HTTP_ACCEPT_LANGUAGE="fr")
    assert html_lang(page) == "de"
    # "" goes back to the browser's language.
    browser.post("/language/", {"language": "", "next": "/rules/"})
    assert html_lang(browser.get("/rules/", HTTP_ACCEPT_LANGUAGE="fr")) == "fr"


def test_an_account_keeps_its_language_on_every_browser() -> None:
    alice = make_user("alice")
    first = Client()
    first.force_login(alice)
    first.post("/language/", {"language": "es", "next": "/"})
    alice.refresh_from_db()
    assert alice.language == "es"
    assert for_user(alice) == "es"
    # Another browser, another cookie, another Accept-Language: the account's choice wins.
    other = Client()
    other.force_login(alice)
    other.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    assert html_lang(other.get("/rules/", HTTP_ACCEPT_LANGUAGE="de")) == "es"


@pytest.mark.parametrize("wanted", ["xx", "klingon", "<script>"])
def test_an_unknown_language_changes_nothing(wanted: str) -> None:
    browser = Client()
    response = browser.post("/language/", {"language": wanted, "next": "/rules/"})
    assert response.status_code == 302
    assert settings.LANGUAGE_COOKIE_NAME not in browser.cookies
    assert html_lang(browser.get("/rules/")) == "en"


def test_the_switcher_goes_back_only_to_this_site() -> None:
    response = Client().post("/language/", {"language": "fr", "next": "https://evil.example/"})
    assert response["Location"] == "/"


def test_the_switcher_answers_only_a_form() -> None:
    assert Client().get("/language/").status_code == 405


def test_the_client_strings_are_kept_for_a_year_at_their_versioned_address() -> None:
    page = Client().get("/rules/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    address = re.search(r'<script src="(/jsi18n/[^"]+)"', page)
    assert address, "every page loads the client's strings before its modules"
    assert address.group(1) == f"/jsi18n/fr/{catalog_version('fr')}.js"
    response = Client().get(address.group(1))
    assert response.status_code == 200
    assert "immutable" in response["Cache-Control"]
    assert b"django.catalog" in response.content or b"gettext" in response.content
    # An old version (a page from before a deploy) gets today's strings, kept briefly.
    old = Client().get("/jsi18n/fr/000000000000.js")
    assert old.status_code == 200
    assert "immutable" not in old["Cache-Control"]
    assert Client().get("/jsi18n/xx/1.js").status_code == 404


@pytest.mark.parametrize(
    ("code", "found"),
    [("fr", "fr"), ("FR-ca", "fr"), ("de_AT", "de"), ("en-GB", "en"), ("pt", None), ("", None)],
)
def test_a_language_code_names_a_shipped_language_or_none(code: str, found: str | None) -> None:
    assert supported(code) == found


def test_accept_language_is_read_in_the_browsers_order() -> None:
    assert accepted("it;q=0.9, es;q=0.8, fr;q=0.7") == "es"
    assert accepted("*") is None


def test_a_socket_is_in_its_readers_language() -> None:
    assert for_scope({"headers": [(b"accept-language", b"de-DE,de;q=0.9")]}) == "de"
    assert (
        for_scope(
            {
                "headers": [(b"accept-language", b"de-DE")],
                "cookies": {settings.LANGUAGE_COOKIE_NAME: "es"},
            }
        )
        == "es"
    )
    assert for_scope({}) == "en"


@pytest.mark.django_db(transaction=True)
async def test_a_sockets_refusals_are_in_the_accounts_language() -> None:
    game = await database_sync_to_async(new_game)()
    bob = await database_sync_to_async(User.objects.get)(username="bob")
    bob.language = "fr"
    await database_sync_to_async(bob.save)(update_fields=["language"])
    session = await database_sync_to_async(session_for)(bob)
    client = communicator(f"/ws/games/{game.pk}/", session_key=session)
    connected, _ = await client.connect()
    assert connected
    try:
        await client.send_json_to({"type": "move", "move": "I", "ply": 0, "id": 1})
        while True:
            frame = await client.receive_json_from(timeout=5)
            if frame["type"] == "error":
                break
    finally:
        await client.disconnect()
    assert frame["code"] == "not_your_turn"  # the code stays the protocol's
    with translation.override("en"):
        english = translation.gettext("It is not your turn.")
    with translation.override("fr"):
        french = translation.gettext("It is not your turn.")
    assert french != english, "the refusal has a French translation"
    assert frame["message"] == french


def test_a_stored_reason_reads_in_the_readers_language() -> None:
    # Stored once, in English, for everybody on the game; each reader gets their language.
    stored = messages.RESIGNED % {"user": "alice"}
    assert reasons.translate(stored) == "alice resigned"
    for language in ("fr", "de", "es"):
        with translation.override(language):
            wanted = translation.gettext(messages.RESIGNED) % {"user": "alice"}
            assert wanted != stored
            assert "alice" in wanted
            assert reasons.translate(stored) == wanted
            # A reason no template makes is shown as it is.
            assert reasons.translate("alice teleported") == "alice teleported"


def test_an_events_result_is_said_in_the_sockets_language_and_nothing_else_changes() -> None:
    frame = (
        '{"type":"game_over","v":9,"result":{"winner":1,"termination":"resign",'
        '"reason":"bob resigned"},"note":"bob resigned"}'
    )
    with translation.override("de"):
        localized = json.loads(reasons.localize_frame(frame))
        wanted = translation.gettext(messages.RESIGNED) % {"user": "bob"}
    assert localized["result"]["reason"] == wanted
    assert localized["note"] == "bob resigned"
    assert {**localized, "result": None} == {**json.loads(frame), "result": None}
    # In English the text goes out untouched (not decoded and encoded again).
    with translation.override("en"):
        assert reasons.localize_frame(frame) is frame
