"""Rated play as two registered players see it: a rated challenge, the rating change at the
end, the profile's ratings and chart, and the standings."""

from __future__ import annotations

import re

import pytest

from tests.browsers import TIMEOUT_MS, Problems, Site, expect_game_live

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres(reason="two browsers on the production shape: run once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def sign_up(chromium: Browser, url: str, seen: Problems, name: str) -> Page:
    """A new browser context that signs up as `name`; returns the lobby page."""
    page = seen.watch(name, chromium.new_context().new_page())
    page.goto(f"{url}/signup/")
    page.fill("#id_username", name)
    page.fill("#id_password1", "a-long-enough-password-42")
    page.fill("#id_password2", "a-long-enough-password-42")
    page.locator("form.stacked button[type=submit]").click()
    expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
    return page


def test_a_rated_game_moves_both_ratings_where_players_look(
    browser: Browser,
    own_site: Site,
    problems: Problems,
) -> None:
    site = own_site  # the accounts are named: no other test may take the names
    with site.serve():
        alice = sign_up(browser, site.url, problems, "alice")
        bob = sign_up(browser, site.url, problems, "bob")
        alice.fill("#challenge-user", "bob")
        alice.select_option("#challenge-game", "zigzag")
        alice.select_option("#challenge-side", "first")
        alice.locator("#challenge-rated").check()
        alice.click("#challenge-submit")
        incoming = bob.locator("#challenges-in li[data-challenge-id]")
        expect(incoming).to_have_count(1)
        incoming.locator("button.accept").click()
        for page in (alice, bob):
            page.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
            expect_game_live(page)
        # Bob resigns at once (a first move by each makes it a resignation, not an abort).
        alice.locator("g.pit.playable").first.click()
        expect(bob.locator("g.pit.playable").first).to_be_visible()
        bob.locator("g.pit.playable").first.click()
        expect(bob.locator("#resign-button")).to_be_visible()
        bob.once("dialog", lambda dialog: dialog.accept())
        bob.locator("#resign-button").click()
        for page in (alice, bob):
            expect(page.locator("#rating-changes")).to_have_text(
                "Ratings: alice 1662? (+162), bob 1338? (-162)"
            )
        alice.goto(f"{site.url}/@alice/")
        row = alice.locator("#ratings tr[data-slug=zigzag][data-speed=correspondence]")
        expect(row.locator("td.rating")).to_have_text("1662?")
        expect(row.locator("svg.rating-graph polyline")).to_have_count(1)
        expect(alice.locator("#records tr[data-slug=zigzag] td").nth(1)).to_have_text("1")
        alice.goto(f"{site.url}/standings/zigzag/")
        first = alice.locator("#standings-correspondence tbody tr").first
        expect(first).to_have_attribute("data-username", "alice")
