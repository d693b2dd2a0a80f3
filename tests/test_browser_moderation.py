"""A report and a moderator's mute as people meet them: a player reports an insult from the
chat, a moderator finds it in the queue and mutes the author, who sees it at once on the
game page they have open."""

from __future__ import annotations

import uuid

import pytest

from tests.browsers import Problems, Site, expect_game_live, make_moderator
from tests.test_browser import challenge_by_request, guest
from tests.test_browser_ratings import sign_up

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages in the browser, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_reported_insult_gets_its_author_muted_live(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        # Off the site first: every page of it (the lobby's socket, the others' notification
        # socket) goes to a new game by itself, and that navigation would race the one below.
        for page in (alice, bob):
            page.goto("about:blank")
        game_id = challenge_by_request(alice, bob, site, "zigzag", {"pits": 4, "seeds": 3})
        for page in (alice, bob):
            page.goto(f"{site.url}/games/{game_id}/")
            expect_game_live(page)
        bob_name = bob.locator("body").get_attribute("data-username")

        # Bob insults Alice; she reports the line from the chat (the form opens beside it).
        bob.fill("#chat-input", "you play like a potato")
        bob.locator("#chat-form button").click()
        line = alice.locator("#chat-lines li", has_text="potato")
        expect(line).to_have_count(1)
        expect(bob.locator("#chat-lines li .report-line")).to_have_count(0)  # not his own
        with alice.context.expect_page() as opened:
            line.locator(".report-line").click()
        form = problems.watch("report", opened.value)
        expect(form.locator("#report-target")).to_contain_text("you play like a potato")
        form.locator("input[name=reason][value=abuse]").check()
        form.fill("#id_text", "rude all game")
        form.locator("#report-form button[type=submit]").click()
        expect(form.locator("#report-sent")).to_be_visible()

        # A moderator (a registered player in the Moderators group) reads the queue.
        name = f"Mod{uuid.uuid4().hex[:8]}"
        staff = sign_up(browser, site.url, problems, name)
        make_moderator(site, name)
        staff.goto(f"{site.url}/moderation/")
        staff.locator("#reports tr", has_text="potato").locator("a").first.click()
        expect(staff.locator("#reported-line")).to_contain_text("you play like a potato")
        staff.select_option("#act-kind", "mute")
        staff.select_option("#act-minutes", "60")
        staff.fill("#act-reason", "insults in chat")
        staff.locator("#act-submit").click()
        expect(staff.locator(".messages")).to_contain_text("Done: mute chat")

        # Bob's open game page says so at once, and his chat box is closed.
        expect(bob.locator("#notices")).to_contain_text("A moderator muted your chat")
        expect(bob.locator("#notices")).to_contain_text("insults in chat")
        expect(bob.locator("#chat-muted")).to_contain_text("A moderator muted your chat until")
        expect(bob.locator("#chat-input")).to_be_disabled()
        # The log shows it, the report is handled, and the queue is empty of it.
        staff.goto(f"{site.url}/moderation/log/")
        expect(staff.locator("#audit-log tr[data-kind=mute]")).to_contain_text(str(bob_name))
        staff.goto(f"{site.url}/moderation/")
        expect(staff.locator("#reports tr", has_text="potato")).to_have_count(0)
