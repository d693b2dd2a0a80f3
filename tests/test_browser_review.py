"""A game's computer review as a player meets it, with the bots worker beside the server as
`make run` and docker run it: ask for it on the finished game's page, see the chart and the
blunder marked, open the board before the blunder and play the move the computer preferred."""

from __future__ import annotations

import sys

import pytest

from tests.browsers import TIMEOUT_MS, Problems, Site
from tests.servers import background
from tests.test_analysis_computer import THROWN
from tests.test_browser import api, challenge_by_request, guest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres(reason="the server and the worker share a server database: run once"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_review_marks_the_blunder_and_the_board_plays_the_better_move(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    worker = [sys.executable, "manage.py", "bots", "--processes", "1"]
    with site.serve(), background(worker, site.env, site.scratch / "bots.log"):
        south = guest(browser, site, problems, "south")
        north = guest(browser, site, problems, "north")
        for page in (south, north):
            page.goto("about:blank")  # off the site: its pages go to a new game by themselves
        game_id = challenge_by_request(south, north, site, "zigzag", {"pits": 4, "seeds": 3})
        for ply, move in enumerate(THROWN):
            api(
                (south, north)[ply % 2],
                site,
                f"/api/games/{game_id}/move",
                {"move": move, "ply": ply},
            )

        south.goto(f"{site.url}/games/{game_id}/")
        expect(south.locator("#banner")).to_be_visible()
        south.locator("#review-button").click()
        marks = south.locator("#review-marks .review-mark")
        blunder = marks.filter(has_text="16. B: blunder")
        expect(blunder).to_have_count(1, timeout=TIMEOUT_MS * 3)
        expect(blunder).to_contain_text("better A")
        expect(south.locator("#review-chart svg polyline")).to_have_count(1)
        # Anyone who looks at the game sees the stored review, without asking again.
        north.goto(f"{site.url}/games/{game_id}/")
        expect(north.locator("#review-marks .review-mark", has_text="16. B")).to_have_count(1)
        expect(north.locator("#review-button")).to_be_hidden()

        blunder.click()
        south.wait_for_url(f"{site.url}/analysis/*/?*")
        expect(south.locator("#suggestion")).to_contain_text("the computer preferred A")
        expect(south.locator("#analysis")).to_have_attribute("data-node", "15")
        south.fill("#move-input", "A")
        south.locator("#move-form button[type=submit]").click()
        tree = south.locator("#tree")
        # A variation beside the game's own move: the game is the main line.
        expect(tree.locator(".variation .move-link")).to_have_text(["16. A"])
        expect(tree.locator(".move-link.viewing")).to_have_text("16. A")
        expect(south.locator("#result")).to_contain_text("Player 2 wins")

        # The computer's view of the position after it, deepening live.
        south.locator("#computer-on").check()
        expect(south.locator("#computer")).to_have_attribute(
            "data-status", "done", timeout=TIMEOUT_MS * 3
        )
        log = (site.scratch / "bots.log").read_text()
        assert "Traceback" not in log, log
