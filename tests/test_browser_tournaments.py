"""A tournament as its players and a visitor see it: a registered player makes an arena on the
tournaments page, two guests find it in the list and join, the sweeper starts it, the site
takes each player to their game, and a visitor who is not signed in watches the standings move
without reloading."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.browsers import TIMEOUT_MS, Problems, Site, expect_game_live, keep_screenshot, sweeper
from tests.test_browser import guest, username
from tests.test_browser_ratings import sign_up

pytestmark = [pytest.mark.browser, pytest.mark.redis]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

GAME_URL = re.compile(r"/games/(\d+)/$")


def create_arena(page: Page, site: Site, name: str) -> str:
    """The creation form of the tournaments page: a casual ZigZag arena of ten minutes starting
    now (casual, so that guests may play). Returns the tournament page's path."""
    page.goto(site.url + "/tournaments/")
    page.fill("#t-name", name)
    page.select_option("#t-kind", "arena")
    page.select_option("#t-slug", "zigzag")
    page.fill("#t-clock", "3+2")
    page.fill("#t-minutes", "10")
    page.fill("#t-starts", "0")
    page.locator("#create-tournament input[name=rated]").uncheck()
    page.locator("#create-tournament button[type=submit]").click()
    page.wait_for_url(re.compile(r"/tournaments/\d+/$"), timeout=TIMEOUT_MS)
    expect(page.locator("#tournament")).to_have_attribute("data-ready", "true")
    return page.url.removeprefix(site.url)


def join_from_the_list(page: Page, site: Site, name: str) -> None:
    page.goto(site.url + "/tournaments/")
    page.locator("#tournaments-upcoming").get_by_role("link", name=name).click()
    expect(page.locator("#tournament")).to_have_attribute("data-ready", "true")
    page.locator("#join").click()
    expect(page.locator("#withdraw")).to_be_visible()
    expect(page.locator("#join")).to_be_hidden()


def game_of(page: Page, other_than: int | None = None) -> int:
    """The game the site took the player to (notify.js follows `game_started`), once it is not
    `other_than`."""

    def new_game(url: str) -> bool:
        found = GAME_URL.search(url)
        return found is not None and int(found.group(1)) != other_than

    page.wait_for_url(new_game, timeout=TIMEOUT_MS)
    expect_game_live(page)
    found = GAME_URL.search(page.url)
    assert found
    return int(found.group(1))


def test_an_arena_made_on_its_page_starts_sends_players_to_games_and_counts_a_resignation(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    name = f"Friday arena {uuid.uuid4().hex[:6]}"
    with site.serve():
        host = sign_up(browser, site.url, problems, f"host{uuid.uuid4().hex[:8]}")
        path = create_arena(host, site, name)
        status = host.locator("#tournament-status")
        expect(status).to_have_attribute("data-status", "upcoming")
        expect(host.locator("#standings tbody tr[data-name]")).to_have_count(0)

        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        names = {username(alice): alice, username(bob): bob}
        for page in (alice, bob):
            join_from_the_list(page, site, name)

        # A visitor who is not signed in sees the page, the players and no Join button.
        visitor = problems.watch("visitor", browser.new_context().new_page())
        visitor.goto(site.url + path)
        expect(visitor.locator("#tournament")).to_have_attribute("data-ready", "true")
        standings = visitor.locator("#standings tbody tr[data-name]")
        expect(standings).to_have_count(2)
        assert set(standings.evaluate_all("rows => rows.map(r => r.dataset.name)")) == set(names)
        expect(visitor.locator("#players-count")).to_have_text("(2 players)")
        assert visitor.locator("#join").count() == 0
        expect(visitor.locator("#tournament").get_by_role("link", name="Log in")).to_be_visible()

        # The sweeper comes now, as it would be running all along: had it been running, the
        # arena starting "in 0 minutes" would have been cancelled at its next pass, before two
        # players could join (a tournament starts with two players or is cancelled).
        with sweeper(site):
            # Started by the sweeper's pass; the first wave pairs the two.
            games = {who: game_of(page) for who, page in names.items()}
            assert len(set(games.values())) == 1, games
            game_id = next(iter(games.values()))
            visitor_status = visitor.locator("#tournament-status")
            expect(visitor_status).to_have_attribute("data-status", "running")
            playing = visitor.locator(f"#pairings li[data-game-id='{game_id}']")
            expect(playing).to_have_attribute("data-result", "")
            for page in names.values():
                expect(page.locator("#tournament-link")).to_have_attribute("href", path)
                expect(page.locator("#tournament-link")).to_have_text(f"Tournament: {name}")

            # One move each, so that giving up is a resignation (counted), not an abort.
            first, second = (page for page in names.values())
            for page in (first, second):
                expect(page.locator("#board svg g.pit").first).to_be_visible()
            if not first.locator("g.pit.playable").count():
                first, second = second, first
            expect(first.locator("g.pit.playable").first).to_be_visible()
            first.locator("g.pit.playable").first.click()
            expect(second.locator("g.pit.playable").first).to_be_visible()
            second.locator("g.pit.playable").first.click()
            expect(first.locator("g.pit.playable").first).to_be_visible()
            first.once("dialog", lambda dialog: dialog.accept())
            first.locator("#resign-button").click()
            # (Not the game page's banner: both pages may go on to their next pairing before
            # it is seen. The standings below say how the game ended.)
            winner = username_of(second, names)

            # The visitor's standings move without a reload: the winner first, with 2 points.
            top = visitor.locator("#standings tbody tr[data-name]").first
            expect(top).to_have_attribute("data-name", winner)
            expect(top.locator(".points")).to_have_text("2")
            loser = visitor.locator(f"#standings tbody tr[data-name='{username_of(first, names)}']")
            expect(loser.locator(".points")).to_have_text("0")
            # The pairing's first player moved first, and resigned: the second won.
            expect(playing).to_have_attribute("data-result", "2")
            expect(visitor_status).to_have_attribute("data-status", "running")
            keep_screenshot(visitor, "tournament-visitor", full_page=True)

            # Both free again: the next wave pairs them, and the site takes them to it.
            assert len({game_of(page, other_than=game_id) for page in names.values()}) == 1


def username_of(page: Page, names: dict[str, Page]) -> str:
    return next(name for name, seen in names.items() if seen is page)
