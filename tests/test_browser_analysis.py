"""The analysis board as a player meets it: after a game, Analyse opens the board at the move
shown, a move played there becomes a variation, promoting it makes it the main line, and the
game itself is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browsers import Problems, Site, expect_game_live
from tests.test_browser import challenge_by_request, guest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages in the browser, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_finished_game_opens_on_the_analysis_board_and_grows_a_variation(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        for page in (alice, bob):
            page.goto("about:blank")  # off the site: its pages go to a new game by themselves
        game_id = challenge_by_request(alice, bob, site, "diffusion")
        for page in (alice, bob):
            page.goto(f"{site.url}/games/{game_id}/")
            expect_game_live(page)
        # A player cannot analyse the game they are playing.
        expect(alice.locator("#analyse-form")).to_be_hidden()
        for page, move, ply in ((alice, "I", "1"), (bob, "A", "2")):
            page.fill("#move-input", move)
            page.locator("#move-form button[type=submit]").click()
            expect(alice.locator("#moves .move-link")).to_have_count(int(ply))
        alice.once("dialog", lambda dialog: dialog.accept())
        alice.locator("#resign-button").click()
        expect(alice.locator("#banner")).to_be_visible()

        # After the game: back to move 1, then Analyse opens the board there.
        alice.locator("#moves .move-link").first.click()
        expect(alice.locator("#moves .move-link.viewing")).to_have_text("I")  # drawn there
        expect(alice.locator("#analyse-form input[name=ply]")).to_have_value("1")
        alice.locator("#analyse-button").click()
        alice.wait_for_url(f"{site.url}/analysis/*/")
        expect(alice.locator("#analysis")).to_have_attribute("data-node", "1")
        tree = alice.locator("#tree")
        expect(tree.locator(".move-link")).to_have_text(["1. I", "2. A"])
        position = alice.locator("#position-text").input_value()
        assert position.endswith(" 2"), position  # North to move after move 1

        # Another answer than the game's: a variation after move 1.
        alice.fill("#move-input", "B")
        alice.locator("#move-form button[type=submit]").click()
        expect(tree.locator(".variation .move-link")).to_have_text(["2. B"])
        expect(tree.locator(".move-link.viewing")).to_have_text("2. B")
        # Made the main line: the game's own move becomes the variation.
        alice.locator("#promote-button").click()
        expect(tree.locator(".variation .move-link")).to_have_text(["2. A"])
        # An illegal move is refused with the engine's reason; the tree is unchanged.
        alice.fill("#move-input", "Z")
        alice.locator("#move-form button[type=submit]").click()
        expect(alice.locator("#message")).not_to_be_empty()
        expect(tree.locator(".move-link")).to_have_count(3)

        # Bob, the opponent, may look at the link but not change it.
        bob.goto(alice.url)
        expect(bob.locator("#tree .move-link")).to_have_count(3)
        expect(bob.locator("#move-form")).to_be_hidden()
        expect(bob.locator("#copy-button")).to_be_visible()

        # The game is as it ended.
        alice.goto(f"{site.url}/games/{game_id}/")
        expect(alice.locator("#moves .move-link")).to_have_text(["I", "A"])


def test_a_position_set_up_on_the_editor_is_checked_by_the_rules_and_analysed(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        page = guest(browser, site, problems, "setter")
        page.goto(f"{site.url}/analysis/")
        # ZigZag with 4 pits of 3 seeds: move a seed from pit a to pit A by hand.
        page.select_option("#analysis-slug", "zigzag")
        page.locator("label.option[data-game=zigzag] input[name=option-pits]").fill("4")
        page.locator("label.option[data-game=zigzag] input[name=option-seeds]").fill("3")
        page.locator("#editor-open").click()
        expect(page.locator("#analysis-position")).to_have_value("3,3,3,3/3,3,3,3 0,0 1")
        page.fill("#pit-A", "4")
        page.fill("#pit-a", "2")
        page.select_option("#editor-side", "2")
        expect(page.locator("#analysis-position")).to_have_value("4,3,3,3/2,3,3,3 0,0 2")
        # One seed too many: the rules refuse it, with the reason.
        page.fill("#pit-b", "4")
        page.locator("#new-analysis button[type=submit]").click()
        expect(page.locator(".messages")).to_contain_text("not 24 (bad_position)")
        page.select_option("#analysis-slug", "zigzag")
        page.locator("label.option[data-game=zigzag] input[name=option-pits]").fill("4")
        page.locator("label.option[data-game=zigzag] input[name=option-seeds]").fill("3")
        page.locator("#editor-open").click()
        expect(page.locator("#analysis-position")).to_have_value("3,3,3,3/3,3,3,3 0,0 1")
        page.fill("#analysis-position", "4,3,3,3/2,3,3,3 0,0 2")
        page.locator("#new-analysis button[type=submit]").click()
        page.wait_for_url(f"{site.url}/analysis/*/")
        expect(page.locator("#position-text")).to_have_value("4,3,3,3/2,3,3,3 0,0 2")
        expect(page.locator("#turn-info")).to_contain_text("Player 2 to move")
        expect(page.locator("#board svg")).to_have_attribute("aria-label", "ZigZag board")

        # Diffusion Chess: the men are set by clicking cells.
        page.goto(f"{site.url}/analysis/")
        page.select_option("#analysis-slug", "diffusion-chess")
        page.locator("#editor-open").click()
        expect(page.locator(".editor-cell")).to_have_count(361)
        page.locator("#editor-start").click()
        # The board is drawn again from the start: clicks wait for it.
        expect(page.locator("#editor")).not_to_have_attribute("aria-busy", "true")
        cell = page.locator(".editor-cell[data-cell=j10]")
        cell.click()  # a white stone
        expect(cell).to_have_attribute("data-man", "O")
        text = page.locator("#analysis-position").input_value()
        assert text.split("/")[9] == "9O9", text  # row 10, file j
        page.locator("#new-analysis button[type=submit]").click()
        page.wait_for_url(f"{site.url}/analysis/*/")
        expect(page.locator("#analysis")).to_have_attribute("data-node", "0")
        # A stone's move by clicking it and then its destination, as on a game's page.
        page.locator("#board [data-cell=c6]").click()
        page.locator("#board [data-cell=c7]").click()
        expect(page.locator("#tree .move-link")).to_have_text(["1. c6-c7"])
        expect(page.locator("#echo-button")).to_be_visible()


def test_the_analysis_board_shows_the_endgame_databases_verdict(
    browser: Browser, tmp_path: Path, problems: Problems
) -> None:
    """On a site with a database of every Diffusion position of at most 6 stones: a position
    it covers shows the exact result and each move's; one it does not cover shows nothing."""
    from devtools.endgames import diffusion_solve
    from games import endgames
    from games.rules import get_rules
    from games.rules.diffusion import DiffusionState
    from games.rules.notation import position_text
    from tests.servers import migrated_scratch_database
    from tests.test_browser_access import violations

    directory = tmp_path / "endgames"
    directory.mkdir()
    database = diffusion_solve.build(6, into=directory / endgames.FILE)
    diffusion_solve.save(database, directory / endgames.FILE)
    rules = get_rules("diffusion")
    pits = (1, 0, 2, 0, 0, 1, 0, 1, 0, 1, 0, 0)
    verdict = endgames.Verdict.of(database.code(pits))
    text = position_text(rules, DiffusionState(pits, (42, 0), 1))
    with migrated_scratch_database(tmp_path) as url:
        site = Site(tmp_path, str(url), ENDGAMES_DIR=str(directory))
        with site.serve():
            page = guest(browser, site, problems, "solver")
            page.goto(f"{site.url}/analysis/")
            page.select_option("#analysis-slug", "diffusion")
            page.locator("#editor-open").click()
            # As a player would: the editor drawn before the text is typed. Its load writes
            # the text box when it lands, and one landing after the fill rewrote it.
            expect(page.locator("#editor .editor-pits")).to_be_visible()
            expect(page.locator("#editor")).not_to_have_attribute("aria-busy", "true")
            page.fill("#analysis-position", text)
            page.locator("#new-analysis button[type=submit]").click()
            page.wait_for_url(f"{site.url}/analysis/*/")
            box = page.locator("#endgame")
            expect(box).to_be_visible()
            expect(box).to_have_attribute("data-result", verdict.result)
            word = "wins" if verdict.result == "win" else "loses"
            expect(box.locator(".endgame-verdict")).to_contain_text(
                f"{word} in {verdict.moves} move"
            )
            expect(box.locator(".endgame-moves li")).to_have_count(5)  # five pits hold stones
            assert violations(page) == []
            # The start (48 stones) is not covered: the box goes.
            page.goto(f"{site.url}/analysis/")
            page.select_option("#analysis-slug", "diffusion")
            page.locator("#new-analysis button[type=submit]").click()
            page.wait_for_url(f"{site.url}/analysis/*/")
            expect(page.locator("#position-text")).not_to_have_value("")
            expect(page.locator("#endgame")).to_be_hidden()
