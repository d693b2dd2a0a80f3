"""Playing the computer as a person does: from the lobby's form to the computer's answers on
the board, with the worker running beside the server as `make run` and docker run it."""

from __future__ import annotations

import re
import sys

import pytest

from tests.browsers import TIMEOUT_MS, Problems, Site, expect_game_live
from tests.servers import background

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres(reason="the server and the worker share a server database: run once"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_guest_plays_the_computer_from_the_lobby_and_it_answers_every_move(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    worker = [sys.executable, "manage.py", "bots", "--processes", "1"]
    with site.serve(), background(worker, site.env, site.scratch / "bots.log"):
        page = problems.watch("guest", browser.new_context().new_page())
        page.goto(site.url)
        page.locator("#guest-form button").click()
        expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
        page.select_option("#computer-game", "diffusion")
        page.select_option("#computer-level", "2")
        page.select_option("#computer-side", "first")
        page.click("#computer-submit")
        page.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
        expect_game_live(page)
        expect(page.locator("#player-2 .name")).to_have_text("Computer-2 (computer)")
        # The computer has no socket on the game and is never shown away.
        expect(page.locator("#player-2")).to_have_class(re.compile(r"\bonline\b"))
        expect(page.locator("#player-2 .dot")).to_have_attribute("title", "online")
        for turn in range(1, 4):
            playable = page.locator("g.pit.playable")
            expect(playable.first).to_be_visible()
            playable.first.click()
            # The computer answers: two moves more in the list, and the guest's turn again.
            expect(page.locator("#moves li")).to_have_count(2 * turn)
            if page.locator("#banner").is_visible():
                break  # someone emptied a block
        if not page.locator("#banner").is_visible():
            # Taken back at once: the computer's answer and the guest's move before it.
            played = page.locator("#moves li").count()
            page.click("#takeback-button")
            expect(page.locator("#moves .takeback-mark")).to_have_count(1)
            expect(page.locator("#moves li:not(.takeback-mark)")).to_have_count(played - 2)
            expect(page.locator("g.pit.playable").first).to_be_visible()
        log = (site.scratch / "bots.log").read_text()
        assert "Traceback" not in log, log
