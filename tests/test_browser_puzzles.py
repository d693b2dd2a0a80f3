"""Puzzles as a visitor meets them in Chromium: the puzzle of the day on the home page, its
page, a pit clicked as the answer judged and rated by the server, the next one asked for, and
axe-core's checks on the pages."""

from __future__ import annotations

import pytest

from tests.browsers import Problems, Site, manage_on_site
from tests.test_browser import guest
from tests.test_browser_access import label_not_in_name, violations

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages in the browser, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

# A Diffusion puzzle stored as the generator stores them (through puzzles.services).
ADD = (
    "from games.rules import get_rules; from games.rules.notation import position_text; "
    "from puzzles.services import add_verified; rules = get_rules('diffusion'); "
    "state = rules.play(rules.initial_state(), 'A'); "
    "add_verified(slug='diffusion', options={}, position=position_text(rules, state), "
    "solution='{solution}', goal='win', line=['{solution}'], verified='proved: wins in 1 move', "
    "themes=['short'])"
)


def test_the_daily_puzzle_is_solved_by_clicking_its_answer(
    browser: Browser, site: Site, problems: Problems
) -> None:
    manage_on_site(site, "shell", "-c", ADD.replace("{solution}", "J"))
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        card = alice.locator("#daily-puzzle")
        expect(card).to_be_visible()
        expect(card.locator("svg")).to_be_visible()
        card.locator("#daily-puzzle-link").click()
        alice.wait_for_url("**/puzzles/*/")
        puzzle = alice.locator("#puzzle")
        expect(puzzle).to_have_attribute("data-ready", "true")
        expect(alice.locator("#goal")).to_contain_text("2")  # North moves after South's A
        assert violations(alice) == [] and label_not_in_name(alice) == []
        alice.locator("g.pit.playable[data-pit='J']").click()
        expect(puzzle).to_have_attribute("data-answered", "true")
        expect(alice.locator("#result-title")).to_be_visible()
        expect(alice.locator("#result")).to_have_class("puzzle-result solved")
        expect(alice.locator("#result-rating")).to_contain_text("+")
        assert violations(alice) == []
        # Only one puzzle: the next one is none, said so.
        alice.locator("#next-button").click()
        expect(alice.locator("#message")).not_to_be_empty()
        # Someone not signed in is judged too, and told that only players are rated.
        visitor = problems.watch("visitor", browser.new_context().new_page())
        visitor.goto(site.url + "/puzzles/")
        visitor.locator("#daily a").click()
        expect(visitor.locator("#puzzle")).to_have_attribute("data-ready", "true")
        visitor.fill("#move-input", "k")
        visitor.locator("#move-form button[type=submit]").click()
        expect(visitor.locator("#result")).to_have_class("puzzle-result missed")
        expect(visitor.locator("#result-rating")).to_contain_text("Log in")
        alice.goto(site.url + "/puzzles/")
        expect(alice.locator("#puzzle-games tr[data-game='diffusion']")).to_contain_text("1")
        assert violations(alice) == []
