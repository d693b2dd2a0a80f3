"""A game on a phone, in a real browser, as lichess's mobile layout has it: the whole board,
both clocks and the move controls on one screen without scrolling (the players compact, with
their clocks, above and below the board; the rest below the fold), every pit a target a
finger can hit (24 px, WCAG 2.5.8) or, where the board has too many to fit so (ZigZag's 26
pits, Diffusion Chess's 19x19 cells), the page's zoom making them that big. At a desk the
board and the controls fit the window too.

The tests share the process's server and two guests; the file runs whole on one worker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browsers import SharedSite, expect_game_live
from tests.test_browser import api
from tests.test_browser_access import SIZES, World, started_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page's layout does not depend on the database: checked once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

PHONES = {"360x740": SIZES["small phone"], "390x844": SIZES["phone"]}
MIN_TARGET = 24  # CSS pixels a side (WCAG 2.2, 2.5.8 "Target Size (Minimum)")
# Every board type, ZigZag with its largest option set too.
GAMES = {
    "diffusion 2x6": ("diffusion", {}),
    "four-rank diffusion 4x8": ("four-rank-diffusion", {}),
    "zigzag 6 pits": ("zigzag", {}),
    "zigzag 26 pits": ("zigzag", {"pits": 26, "seeds": 49}),
    "diffusion chess 19x19": ("diffusion-chess", {}),
}
# Boards with more cells than a phone's width holds at 24 px each: they fit whole, and the
# page's zoom (pits) or close-up (a chosen stone's neighbourhood) makes their targets 24 px.
ZOOMED = {"zigzag 26 pits", "diffusion chess 19x19"}
# Where a picture of each layout goes, to be looked at (`PICTURES=/tmp/x pytest ...`).
PICTURES = os.environ.get("PICTURES")


@pytest.fixture(scope="module")
def world(
    browser: Browser,
    tmp_path_factory: pytest.TempPathFactory,
    shared_site: SharedSite,
) -> Iterator[World]:
    with started_world(browser, tmp_path_factory, games=False, shared=shared_site) as started:
        # Correspondence games, so that the clocks show and nobody's first move runs out
        # while the pages are measured. Alice moves first in each.
        context = browser.new_context(storage_state=started.states["alice"])
        alice = context.new_page()
        alice.goto(started.site.url + "/tournaments/")
        bob = browser.new_context(storage_state=started.states["bob"]).new_page()
        bob.goto(started.site.url + "/tournaments/")
        for name, (slug, options) in GAMES.items():
            made = api(
                alice,
                started.site,
                "/api/challenges",
                {
                    "user": started.names["bob"],
                    "slug": slug,
                    "options": options,
                    "side": "first",
                    "time_control": "2d",
                },
            )
            accepted = api(bob, started.site, f"/api/challenges/{made['challenge']['id']}/accept")
            started.games[name] = f"/games/{accepted['game_id']}/"
        context.close()
        bob.context.close()
        yield started


def alices_game(browser: Browser, world: World, name: str, viewport: dict[str, int]) -> Page:
    context = browser.new_context(viewport=viewport, storage_state=world.states["alice"])
    page = world.problems.watch(f"alice {name}", context.new_page())
    page.goto(world.site.url + world.games[name])
    expect_game_live(page)
    expect(page.locator("g.pit.playable, g.cell.movable").first).to_be_visible()
    expect(page.locator("#clock-1")).to_be_visible()
    return page


def picture(page: Page, name: str) -> None:
    if PICTURES:
        Path(PICTURES).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(PICTURES) / f"{name.replace(' ', '-')}.png"))


def off_screen(page: Page, what: str, selector: str, viewport: dict[str, int]) -> list[str]:
    """Whether the element is drawn wholly inside the window, the page not scrolled."""
    box = page.locator(selector).bounding_box()
    if box is None:
        return [f"{what}: {selector} is not shown"]
    top, bottom = box["y"], box["y"] + box["height"]
    left, right = box["x"], box["x"] + box["width"]
    if top < 0 or bottom > viewport["height"] + 0.5 or left < 0 or right > viewport["width"] + 0.5:
        return [f"{what}: {selector} is at x {left:.0f}-{right:.0f}, y {top:.0f}-{bottom:.0f}"]
    return []


def smallest(page: Page, selector: str) -> float:
    sizes = page.locator(selector).evaluate_all(
        "ns => ns.map(n => n.getBoundingClientRect()).map(r => Math.min(r.width, r.height))"
    )
    assert sizes, selector
    return float(min(sizes))


# What must be on the first screen: the board, both clocks, the move box and the buttons
# that end the game.
MUST_SEE = {
    "board": "#board svg",
    "north's clock": "#clock-2",
    "south's clock": "#clock-1",
    "move box": "#move-form",
    "resign or abort": "#abort-button",
}


@pytest.mark.parametrize("size", list(PHONES))
def test_a_phone_shows_the_whole_board_both_clocks_and_the_controls_without_scrolling(
    browser: Browser,
    world: World,
    size: str,
) -> None:
    viewport = PHONES[size]
    found = []
    for name in GAMES:
        page = alices_game(browser, world, name, viewport)
        what = f"{name} at {size}"
        picture(page, f"phone-{name}-{size}")
        for selector in MUST_SEE.values():
            found += off_screen(page, what, selector, viewport)
        scroll = page.evaluate("() => document.documentElement.scrollWidth")
        if scroll > viewport["width"]:
            found.append(f"{what}: scrolls sideways ({scroll} px)")
        hit = "g.cell rect.hit" if "chess" in name else "g.pit rect.hit"
        target = smallest(page, hit)
        if name not in ZOOMED and target < MIN_TARGET:
            found.append(f"{what}: the smallest target is {target:.1f} px")
        if name in ZOOMED:
            # The zoom (or close-up) is offered on the first screen too, and makes the
            # targets big enough.
            if "chess" in name:
                page.locator("g.cell.movable").first.click()
                expect(page.locator("svg.chessboard.close-up")).to_be_visible()
                # The close-up's own bar (Whole board; Play once a destination is chosen)
                # shares the board's screen with the clocks and the move box.
                for selector in (".close-up-bar", *MUST_SEE.values()):
                    found += off_screen(page, f"{what}, close-up", selector, viewport)
            else:
                found += off_screen(page, what, ".zoom-button", viewport)
                page.locator(".zoom-button").click()
                expect(page.locator("svg.mancala.zoomed")).to_be_visible()
            picture(page, f"phone-{name}-{size}-zoomed")
            zoomed = smallest(page, hit)
            if zoomed < MIN_TARGET:
                found.append(f"{what}: zoomed, the smallest target is {zoomed:.1f} px")
        page.context.close()
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", list(PHONES))
def test_a_visitor_on_a_phone_sees_the_whole_board_and_both_players_clocks(
    browser: Browser,
    world: World,
    size: str,
) -> None:
    # A visitor has no move box: the seat under the board still ends the first screen.
    viewport = PHONES[size]
    found = []
    context = browser.new_context(viewport=viewport)
    page = world.problems.watch("visitor", context.new_page())
    for name in GAMES:
        page.goto(world.site.url + world.games[name])
        expect_game_live(page)
        expect(page.locator("#clock-1")).to_be_visible()
        picture(page, f"visitor-{name}-{size}")
        for selector in ("#board svg", "#clock-1", "#clock-2"):
            found += off_screen(page, f"{name} at {size}", selector, viewport)
    context.close()
    assert not found, "\n".join(found)


def test_at_a_desk_the_board_clocks_and_controls_fit_the_window(
    browser: Browser,
    world: World,
) -> None:
    viewport = SIZES["desk"]
    found = []
    for name in GAMES:
        page = alices_game(browser, world, name, viewport)
        picture(page, f"desk-{name}")
        for selector in MUST_SEE.values():
            found += off_screen(page, f"{name} at a desk", selector, viewport)
        page.context.close()
    assert not found, "\n".join(found)
