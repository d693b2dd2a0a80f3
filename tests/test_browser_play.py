"""Every game played by clicking only, in a real browser, at a desk (1366x768) and on a phone
(390x844): no board wider than the screen, pits and cells big enough for a finger, the tab's
title on the player's turn, and a flag, an abort and a resignation seen by both players and a
spectator without reloading. `make screenshots` keeps pictures of every board at both sizes in
test-artifacts/.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.browsers import Problems, Site, expect_game_live, keep_screenshot
from tests.servers import migrated_scratch_database
from tests.test_browser import (
    back_to_lobby,
    challenge,
    guest,
    moves_of,
    play_by_clicking,
    smallest_target,
    username,
    wait_for_moves,
)

# Whole games in three browsers take minutes: played once, in the production shape.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres(reason="whole games in three browsers: run once, in production's shape"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

SIZES = {"desk": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
MIN_TARGET = 40  # CSS pixels a side, for a finger
GAMES = [
    ("diffusion", None),
    ("four-rank-diffusion", None),
    ("zigzag", {"pits": 4, "seeds": 3}),
    ("diffusion-chess", None),
]
YOUR_MOVE = "● Your move"
# Four-rank Diffusion runs to some 400 moves, minutes in three browsers on a busy machine: it
# stops after 16 with a resignation (its ends by the rules are in tests/rules). Diffusion
# stops the same way: its end by the rules is played to the banner on a desk and a phone, with
# a visitor, in tests/test_browser.py. ZigZag ends by the rules at a desk. On a phone, where
# what is checked is the fit and the finger's targets, every game is resigned after a few
# moves. Diffusion Chess is resigned after its moves below.
SHORTENED = {
    ("four-rank-diffusion", "desk"): 16,
    ("diffusion", "desk"): 16,
    ("four-rank-diffusion", "phone"): 8,
    ("diffusion", "phone"): 8,
    ("zigzag", "phone"): 8,
}
CHESS_MOVES = {"desk": 16, "phone": 6}


def assert_fits_the_width(page: Page, what: str) -> None:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth,"
        " Math.max(...[...document.querySelectorAll('#board svg')]"
        ".map(s => s.getBoundingClientRect().right))]"
    )
    scroll, inner, board = widths
    assert scroll <= inner, f"{what}: the page scrolls sideways ({scroll} > {inner})"
    assert board <= inner + 0.5, f"{what}: the board's right edge is off the screen ({board})"


def assert_fits_the_height(page: Page, what: str) -> None:
    """The whole board is in the window, top to bottom (the page may scroll to it)."""
    expect(page.locator("#board svg")).to_be_visible()
    height, inner = page.evaluate(
        "() => [document.querySelector('#board svg').getBoundingClientRect().height,"
        " window.innerHeight]"
    )
    assert height <= inner, f"{what}: the board is taller than the window ({height} > {inner})"


def assert_turn_in_title(players: list[Page]) -> None:
    """The page of the player whose pits are playable says so in its tab's title."""
    for page in players:
        playable = page.locator("g.pit.playable, g.cell.movable").count() > 0
        title = page.title()
        assert title.startswith(YOUR_MOVE) == playable, (title, playable)


def play_chess_by_clicking(
    players: list[Page], watchers: list[Page], rng: random.Random, most: int
) -> int:
    """Stone, then destination (and Play in the phone's close-up), until the game ends; after
    `most` moves it is resigned by clicking. Returns the number of moves."""
    count = len(moves_of(players[0]))
    for _ in range(most):
        if players[0].locator("#banner").is_visible():
            return count
        mover = next((p for p in players if p.locator("g.cell.movable").count()), None)
        if mover is None:
            expect(players[0].locator("#banner")).to_be_visible()
            return count
        stones = mover.locator("g.cell.movable").evaluate_all("ns => ns.map(n => n.dataset.cell)")
        mover.locator(f"g.cell.movable[data-cell='{rng.choice(stones)}']").click()
        targets = mover.locator("g.cell.target")
        expect(targets.first).to_be_visible()
        if mover.viewport_size and mover.viewport_size["width"] < 600:
            # The close-up: every cell a finger can hit; the move waits for Play.
            assert smallest_target(mover, "svg.chessboard g.cell rect.hit") >= MIN_TARGET
        cells = targets.evaluate_all("ns => ns.map(n => n.dataset.cell)")
        mover.locator(f"g.cell.target[data-cell='{rng.choice(cells)}']").click()
        confirm = mover.locator(".close-up-bar button.primary")
        if confirm.count():
            confirm.click()
        count += 1
        wait_for_moves(players + watchers, count)
    # Long enough: the player to move resigns, by clicking.
    resign_by_clicking(players)
    return count


def resign_by_clicking(players: list[Page]) -> None:
    """The player to move resigns (the confirmation accepted); the result reaches both."""
    mover = next(p for p in players if p.locator("g.cell.movable, g.pit.playable").count())
    mover.once("dialog", lambda dialog: dialog.accept())
    mover.locator("#resign-button").click()
    expect(players[0].locator("#banner")).to_be_visible()


# One test per game and screen (not one per screen playing every game), each game's failure
# its own.
@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize(("slug", "options"), GAMES, ids=[slug for slug, _ in GAMES])
def test_every_game_is_played_to_the_end_by_clicking(
    browser: Browser,
    site: Site,
    problems: Problems,
    size: str,
    slug: str,
    options: dict[str, int] | None,
) -> None:
    # Reduced motion (an accessibility setting the game page honours: no sowing animation):
    # hundreds of moves are played here, and animated each waited for its sowing to be shown.
    # The animated sowings are played to the end in tests/test_browser.py.
    looks = {"viewport": SIZES[size], "reduced_motion": "reduce"}
    viewport = SIZES[size]
    with site.serve():
        alice = guest(browser, site, problems, "alice", **looks)
        bob = guest(browser, site, problems, "bob", **looks)
        game_id = challenge(alice, bob, slug, options)
        spectator = problems.watch("spectator", browser.new_context(**looks).new_page())
        spectator.goto(f"{site.url}/games/{game_id}/")
        expect_game_live(spectator)
        expect(alice.locator("#board svg")).to_be_visible()
        expect(alice.locator("g.pit.playable, g.cell.movable").first).to_be_visible()
        assert_turn_in_title([alice, bob])
        for page, who in ((alice, "alice"), (bob, "bob"), (spectator, "spectator")):
            assert_fits_the_width(page, f"{slug} at {size}, {who}")
            assert_fits_the_height(page, f"{slug} at {size}, {who}")
        # Nothing to play for the spectator, and no move box either.
        expect(spectator.locator("#move-form")).to_be_hidden()
        assert spectator.locator("g.pit.playable, g.cell.movable").count() == 0
        if size == "phone" and slug != "diffusion-chess":
            assert smallest_target(alice, "g.pit rect.hit") >= MIN_TARGET
        if size == "phone":
            # The narrowest phones: 360 px.
            alice.set_viewport_size({"width": 360, "height": 740})
            alice.wait_for_timeout(300)  # the board redraws for the new width
            assert_fits_the_width(alice, f"{slug} at 360 px")
            assert_fits_the_height(alice, f"{slug} at 360 px")
            if slug != "diffusion-chess":
                assert smallest_target(alice, "g.pit rect.hit") >= MIN_TARGET
            keep_screenshot(alice, f"board-{slug}-360", full_page=True)
            alice.set_viewport_size(viewport)
            alice.wait_for_timeout(300)
        keep_screenshot(alice, f"board-{slug}-{size}", full_page=True)
        if size == "desk" and slug == "diffusion-chess":
            # Board, turn and controls fit the window: nothing below the fold.
            bottom = alice.evaluate(
                "() => Math.max(...['#board svg', '#turn-info', '.controls']"
                ".map(s => document.querySelector(s).getBoundingClientRect().bottom))"
            )
            assert bottom <= viewport["height"], bottom

        if slug == "diffusion-chess":
            # The start of a turn is short of its new group by nature: no warning yet. The
            # hint offers dragging only where the board takes a drag (not a phone's close-up).
            expect(alice.locator("#turn-info .groups")).to_be_visible()
            assert alice.locator("#turn-info .groups.short").count() == 0
            hint = alice.locator("#turn-info").inner_text()
            draggable = alice.locator("#board svg.draggable").count() > 0
            assert ("drag" in hint) == draggable, hint
            if size == "phone":
                assert not draggable and "tap a stone" in hint, hint

        rng = random.Random(f"{slug}-{size}")
        if slug == "diffusion-chess":
            plies = play_chess_by_clicking([alice, bob], [spectator], rng, CHESS_MOVES[size])
        elif (slug, size) in SHORTENED:
            plies = play_by_clicking([alice, bob], [spectator], rng, most=SHORTENED[slug, size])
            if not alice.locator("#banner").is_visible():
                resign_by_clicking([alice, bob])
        else:
            plies = play_by_clicking([alice, bob], [spectator], rng)
        assert plies > 0
        for page in (alice, bob, spectator):
            expect(page.locator("#banner")).to_be_visible()
            assert moves_of(page) == moves_of(alice)
            assert_fits_the_width(page, f"{slug} at {size}, the end")
            assert not page.title().startswith(YOUR_MOVE)
        expect(alice.locator("#move-form")).to_be_hidden()  # the game is over
        keep_screenshot(spectator, f"board-{slug}-{size}-end", full_page=True)
        spectator.context.close()


def mark_unreloaded(*pages: Page) -> None:
    for page in pages:
        page.evaluate("() => { window.__still_here = true; }")


def assert_unreloaded(*pages: Page) -> None:
    for page in pages:
        assert page.evaluate("() => window.__still_here === true"), page.url


class TestWhatBothPlayersSee:
    """Apart from the whole games, so that the suite's workers (which share out modules and
    classes) play them beside those."""

    def test_a_flag_an_abort_and_a_resignation_reach_both_players_and_a_spectator_live(
        self,
        browser: Browser,
        tmp_path: Path,
        problems: Problems,
    ) -> None:
        with migrated_scratch_database(tmp_path) as database_url:
            site = Site(tmp_path, database_url, settings="tests.fast_clock_settings")
            with site.serve():
                alice = guest(browser, site, problems, "alice")
                bob = guest(browser, site, problems, "bob", viewport=SIZES["phone"])
                bob_name = username(bob)

                def watch(game_id: int) -> Page:
                    page = problems.watch("spectator", browser.new_context().new_page())
                    page.goto(f"{site.url}/games/{game_id}/")
                    expect_game_live(page)
                    return page

                def ended(pages: list[Page], pattern: str) -> None:
                    for page in pages:
                        expect(page.locator("#banner")).to_have_text(re.compile(pattern))
                    assert_unreloaded(*pages)

                def first_moves(spectator: Page) -> None:
                    for count, mover in enumerate((alice, bob), start=1):
                        mover.locator("g.pit.playable").first.click()
                        wait_for_moves([alice, bob, spectator], count)

                # A flag: five seconds on the clock ("1+0" in these tests), first moves free.
                game_id = challenge(alice, bob, "diffusion", time_control="1+0")
                spectator = watch(game_id)
                mark_unreloaded(alice, bob, spectator)
                first_moves(spectator)
                ended([alice, bob, spectator], rf"{bob_name} wins — .*time")
                keep_screenshot(alice, "ended-by-flag", full_page=True)
                # A rematch: both ask, and both are taken to the new game; the spectator is
                # offered the link.
                finished = alice.url
                alice.locator("#rematch-button").click()
                bob.locator("#rematch-button").click()
                for page in (alice, bob):
                    page.wait_for_url(lambda url: url != finished and "/games/" in url)
                assert alice.url == bob.url
                expect(spectator.locator("#rematch-link")).to_be_visible()
                spectator.context.close()

                # An abort, before both have moved.
                back_to_lobby(site, alice, bob)
                game_id = challenge(alice, bob, "zigzag", {"pits": 4, "seeds": 3})
                spectator = watch(game_id)
                mark_unreloaded(alice, bob, spectator)
                alice.locator("#abort-button").click()
                ended([alice, bob, spectator], r"Aborted")
                spectator.context.close()

                # A resignation.
                back_to_lobby(site, alice, bob)
                game_id = challenge(alice, bob, "four-rank-diffusion")
                spectator = watch(game_id)
                mark_unreloaded(alice, bob, spectator)
                first_moves(spectator)
                alice.once("dialog", lambda dialog: dialog.accept())
                alice.locator("#resign-button").click()
                ended([alice, bob, spectator], rf"{bob_name} wins — .*resign")
                keep_screenshot(spectator, "ended-by-resignation", full_page=True)

    def test_an_illegal_click_says_why_and_the_history_steps_back_and_forth(
        self,
        browser: Browser,
        site: Site,
        problems: Problems,
    ) -> None:
        with site.serve():
            alice = guest(browser, site, problems, "alice")
            bob = guest(browser, site, problems, "bob")
            # An open challenge: its link shows where Alice is looking, with a copy button.
            alice.select_option("#challenge-game", "diffusion")
            alice.click("#challenge-submit")
            link = alice.locator("#lobby-notice .challenge-link")
            expect(link).to_be_visible()
            expect(link).to_be_in_viewport()
            expect(alice.locator("#lobby-notice button.copy")).to_be_visible()
            challenge(alice, bob, "diffusion")
            # Bob clicks while it is Alice's turn: the page says so.
            bob.locator("g.pit").first.click()
            expect(bob.locator("#message")).to_contain_text("turn")
            for count, mover in enumerate((alice, bob, alice), start=1):
                expect(mover.locator("g.pit.playable").first).to_be_visible()
                mover.locator("g.pit.playable").first.click()
                wait_for_moves([alice, bob], count)
            # The played pit is marked, not only the changed ones.
            expect(alice.locator("g.pit.played")).to_have_count(1)
            # Back with the arrow key: an earlier position, nothing playable, "Live" offered.
            alice.locator("body").press("ArrowLeft")
            expect(alice.locator("#live-button")).to_be_visible()
            assert alice.locator("g.pit.playable").count() == 0
            alice.locator("#first-button").click()
            expect(alice.locator("#first-button")).to_be_disabled()
            alice.locator("#next-button").click()
            expect(alice.locator(".move-link.viewing")).to_have_text(moves_of(alice)[0])
            alice.locator("#live-button").click()
            expect(alice.locator("#live-button")).to_be_hidden()
