"""The site in the players' own languages, in a real browser: the browser's language chosen at
first, the switcher remembering another, the client's strings and the server's words (a
result's reason, sent once for everybody) each in the reader's language."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

from games import messages
from tests.browsers import Problems, Site, expect_game_live
from tests.test_browser import api, challenge_by_request, guest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page in the browser, not the database, is under test: run once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def client_text(language: str, msgid: str) -> str:
    """The client's string in a language, as its catalog has it."""
    path = Path(settings.LOCALE_PATHS[0]) / language / "LC_MESSAGES" / "djangojs.po"
    entry = polib.pofile(str(path)).find(msgid)
    assert entry is not None and entry.msgstr, (language, msgid)
    return str(entry.msgstr)


def server_text(language: str, template: str, **values: str) -> str:
    with translation.override(language):
        return translation.gettext(template) % values


def language_of(page: Page) -> str:
    return str(page.locator("html").get_attribute("lang"))


def test_each_player_reads_the_game_in_their_own_language(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        # A French browser gets French from the first page.
        alice = guest(browser, site, problems, "alice", locale="fr-FR")
        assert language_of(alice) == "fr"
        # An English one chooses German with the switcher; it is remembered on the next page.
        bob = guest(browser, site, problems, "bob")
        assert language_of(bob) == "en"
        bob.select_option("#language-choice", "de")
        bob.locator(".language-switcher button[type=submit]").click()
        expect(bob.locator("html")).to_have_attribute("lang", "de")
        bob.goto(site.url + "/rules/")
        expect(bob.locator("html")).to_have_attribute("lang", "de")
        expect(bob.locator("h1")).not_to_have_text("How to play")

        game_id = challenge_by_request(alice, bob, site, "diffusion")
        # Alice's lobby goes to the new game by itself; Bob is on the rules page.
        alice.wait_for_url(f"{site.url}/games/{game_id}/")
        bob.goto(f"{site.url}/games/{game_id}/")
        for page in (alice, bob):
            expect_game_live(page)
        # The client's own words, from its catalog.
        alice.locator("g.pit.playable").first.click()
        expect(bob.locator("#announce")).to_contain_text(client_text("de", "Your move."))
        # Alice resigns: one event for both, its reason said in each reader's language.
        bob.locator("g.pit.playable").first.click()
        expect(alice.locator("#announce")).to_contain_text(client_text("fr", "Your move."))
        alice.on("dialog", lambda dialog: dialog.accept())
        alice.locator("#resign-button").click()
        name = str(alice.locator("body").get_attribute("data-username"))
        french = server_text("fr", messages.RESIGNED, user=name)
        german = server_text("de", messages.RESIGNED, user=name)
        assert french != german
        expect(alice.locator("#announce")).to_contain_text(french)
        expect(bob.locator("#announce")).to_contain_text(german)
        expect(bob.locator("#announce")).not_to_contain_text(re.compile(r"\bresigned\b"))


def test_a_challenge_names_its_game_and_options_in_the_readers_language(
    browser: Browser, site: Site, problems: Problems
) -> None:
    # "Guest-X vous défie à ZigZag (pits 6, seeds 5).": the lobby and the news bar built the
    # name from the engine's option names. They come from the server's labels now, and the
    # words around them from the client's catalog.
    french = polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "fr/LC_MESSAGES/djangojs.po"))
    pattern = french.find(
        "%(option)s %(value)s", msgctxt="a game's option and its value, as in its name: pits 6"
    )
    assert pattern is not None and pattern.msgstr
    with translation.override("fr"):
        labels = {name: str(messages.option_label(name)) for name in ("pits", "seeds")}
    parts = [
        pattern.msgstr % {"option": labels[name], "value": 5 if name == "seeds" else 6}
        for name in ("pits", "seeds")
    ]
    title = client_text("fr", "%(game)s (%(options)s)") % {
        "game": "ZigZag",
        "options": ", ".join(parts),
    }
    with site.serve():
        alice = guest(browser, site, problems, "alice", locale="fr-FR")
        elsewhere = problems.watch("alice-rules", alice.context.new_page())
        elsewhere.goto(site.url + "/rules/")
        bob = guest(browser, site, problems, "bob")
        name = str(alice.locator("body").get_attribute("data-username"))
        api(
            bob,
            site,
            "/api/challenges",
            {"user": name, "slug": "zigzag", "options": {"pits": 6, "seeds": 5}},
        )
        expect(alice.locator("#lobby-notice .text")).to_contain_text(title)
        expect(alice.locator("#challenges-in li .what")).to_contain_text(title)
        expect(elsewhere.locator("#notices .notice")).to_contain_text(title)
        for page in (alice, elsewhere):
            expect(page.locator("body")).not_to_contain_text("pits")
