"""The site on a phone, in a real browser: a challenge answered from the lobby's notice without
scrolling (at a desk too), a header that names every page on one line with targets a finger
can hit, and no page wider than a 360 px screen, signed out and as a guest.

The tests share one server (and one guest's signed-in state), so the file runs whole on one
worker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.browsers import TIMEOUT_MS, SharedSite, expect_game_live
from tests.test_browser import guest, username
from tests.test_browser_access import PAGES_OUT, SIZES, World, started_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages' layout does not depend on the database: checked once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

PHONE, SMALL_PHONE, DESK = SIZES["phone"], SIZES["small phone"], SIZES["desk"]
MIN_TARGET = 40  # CSS pixels tall, for a finger
PAGES = PAGES_OUT  # every page a visitor can reach, as the accessibility checks visit them
# What the site's links say on a phone (each page's link, in one word or two).
NAV_TEXTS = {
    "#nav-live": {"Live", "Live games"},
    "#nav-rules": {"Rules"},
    "#nav-standings": {"Standings", "Ranks"},
    "#nav-tournaments": {"Tournaments", "Events"},
    "#nav-profile": {"Mine", "My games"},
}
LOBBY_BUTTONS = ["#seek-submit", "#computer-submit", "#challenge-submit"]


@pytest.fixture(scope="module")
def world(
    browser: Browser,
    tmp_path_factory: pytest.TempPathFactory,
    shared_site: SharedSite,
) -> Iterator[World]:
    # The process's shared server: these tests need two fresh guests, not a server of their
    # own (its database and start cost half a minute).
    with started_world(browser, tmp_path_factory, games=False, shared=shared_site) as started:
        yield started


def open_page(
    browser: Browser,
    world: World,
    path: str,
    signed_in: bool,
    viewport: dict[str, int],
) -> Page:
    context = browser.new_context(
        viewport=viewport, storage_state=world.states["alice"] if signed_in else None
    )
    page = world.problems.watch(path, context.new_page())
    page.goto(world.site.url + path)
    page.wait_for_load_state("networkidle")
    return page


def box_of(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box, f"{selector} is not shown"
    return box


def send_challenge(challenger: Page, opponent: Page) -> None:
    challenger.fill("#challenge-user", username(opponent))
    challenger.select_option("#challenge-game", "diffusion")
    challenger.click("#challenge-submit")


def header_problems(page: Page, what: str) -> list[str]:
    """Every link and button of the header: shown, in the window, tall enough, on one line."""
    found = []
    targets = page.locator(".site-header a, .site-header button").evaluate_all(
        "ns => ns.map(n => { const r = n.getBoundingClientRect();"
        " return {text: n.innerText.trim(), top: r.top, left: r.left, right: r.right,"
        " height: r.height, width: r.width, site: Boolean(n.closest('.site-nav'))}; })"
    )
    inner = page.evaluate("innerWidth")
    tops = set()
    for target in targets:
        name = f"{what}: {target['text']!r}"
        if not target["width"]:
            # Every page keeps its link; an account's extra (Sign up) may wait for the page.
            if target["site"]:
                found.append(f"{name} is hidden")
            continue
        if target["height"] < MIN_TARGET:
            found.append(f"{name} is {target['height']:.0f} px tall")
        if target["left"] < 0 or target["right"] > inner + 0.5:
            found.append(f"{name} is off the screen ({target['left']:.0f}..{target['right']:.0f})")
        tops.add(round(target["top"]))
    if max(tops) - min(tops) > 2:
        found.append(f"{what}: the header wraps onto more than one line (tops {sorted(tops)})")
    return found


def sideways(page: Page, what: str) -> list[str]:
    scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    return [f"{what}: scrolls sideways ({scroll} > {inner})"] if scroll > inner else []


def test_a_challenged_player_on_a_phone_accepts_from_the_notice_without_scrolling(
    browser: Browser,
    world: World,
) -> None:
    alice = guest(browser, world.site, world.problems, "alice", viewport=DESK)
    bob = guest(browser, world.site, world.problems, "bob", viewport=PHONE)
    send_challenge(alice, bob)
    # The notice carries the answer, in the window where it appears.
    accept = bob.locator("#lobby-notice button.accept")
    expect(accept).to_be_visible()
    expect(bob.locator("#lobby-notice button.decline")).to_be_visible()
    expect(bob.locator("#lobby-notice .text")).to_contain_text(username(alice))
    expect(bob.locator("#lobby-notice .actions")).to_have_text(
        re.compile(r"^\s*Accept\s*Decline\s*$")
    )
    # The row says who challenges, on a phone too.
    expect(bob.locator("#challenges-in li .who")).to_have_text(username(alice))
    box = box_of(bob, "#lobby-notice button.accept")
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
    assert box["height"] >= MIN_TARGET, box
    # The challenge's own row keeps its buttons, a finger's height too, down to 360 px.
    bob.set_viewport_size(SMALL_PHONE)
    for selector in ("#lobby-notice button.accept", "#challenges-in li button.accept"):
        assert box_of(bob, selector)["height"] >= MIN_TARGET, selector
    bob.set_viewport_size(PHONE)
    accept.click()
    for page in (alice, bob):
        page.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
        expect_game_live(page)
    assert alice.url == bob.url
    alice.context.close()
    bob.context.close()


def test_at_a_desk_a_challenges_accept_is_on_the_first_screen(
    browser: Browser,
    world: World,
) -> None:
    # At 1366x768 the challenge's row sat under the seeks, level with the middle of the tall
    # forms beside it: its Accept at y=1,164. The notice's Accept was gone once dismissed.
    alice = guest(browser, world.site, world.problems, "alice", viewport=DESK)
    bob = guest(browser, world.site, world.problems, "bob", viewport=DESK)
    bob.click("#seek-submit")  # an open seek of his own above the challenges, as it may be
    expect(alice.locator("#seeks li[data-seek-id]")).to_have_count(1)
    send_challenge(alice, bob)
    accept = bob.locator("#challenges-in li button.accept")
    expect(accept).to_be_visible()
    bob.locator("#lobby-notice .dismiss").click()
    bob.evaluate("() => window.scrollTo(0, 0)")  # as the page opens (a click scrolled it)
    box = box_of(bob, "#challenges-in li button.accept")
    assert box["y"] >= 0 and box["y"] + box["height"] <= DESK["height"], box
    accept.click()
    for page in (alice, bob):
        page.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
    alice.context.close()
    bob.context.close()


def test_a_challenge_declined_from_the_notice_is_gone_for_both(
    browser: Browser,
    world: World,
) -> None:
    alice = guest(browser, world.site, world.problems, "alice", viewport=DESK)
    bob = guest(browser, world.site, world.problems, "bob", viewport=PHONE)
    send_challenge(alice, bob)
    expect(alice.locator("#challenges-out li[data-challenge-id]")).to_have_count(1)
    bob.locator("#lobby-notice button.decline").click()
    expect(bob.locator("#challenges-in li[data-challenge-id]")).to_have_count(0)
    expect(bob.locator("#lobby-notice button.accept")).to_have_count(0)
    expect(alice.locator("#challenges-out li[data-challenge-id]")).to_have_count(0)
    expect(alice.locator("#lobby-notice .text")).to_contain_text("declined")
    assert bob.url.endswith("/") and "/games/" not in bob.url
    alice.context.close()
    bob.context.close()


@pytest.mark.parametrize("viewport", [SMALL_PHONE, PHONE], ids=["360", "390"])
def test_the_phone_header_names_every_page_on_one_line(
    browser: Browser,
    world: World,
    viewport: dict[str, int],
) -> None:
    found = []
    for signed_in in (False, True):
        what = f"{'guest' if signed_in else 'visitor'} at {viewport['width']}"
        page = open_page(browser, world, "/rules/", signed_in, viewport)
        for selector, texts in NAV_TEXTS.items():
            if selector == "#nav-profile" and not signed_in:
                continue
            link = page.locator(selector)
            if not link.is_visible():
                found.append(f"{what}: {selector} is hidden")
            elif link.inner_text().strip() not in texts:
                found.append(f"{what}: {selector} reads {link.inner_text().strip()!r}")
        found += header_problems(page, what)
        found += sideways(page, what)
        # Two navigation landmarks, told apart by their names.
        labels = page.locator("nav").evaluate_all("ns => ns.map(n => n.getAttribute('aria-label'))")
        if None in labels or len(set(labels)) != len(labels):
            found.append(f"{what}: the <nav> elements' labels are {labels}")
        page.context.close()
    assert not found, "\n".join(found)


def test_every_page_fits_a_360_px_phone_with_targets_a_finger_can_hit(
    browser: Browser,
    world: World,
) -> None:
    # The header is the same on every page: checked on the lobby and a long page.
    found = []
    for signed_in in (False, True):
        for path in ["/", "/rules/diffusion/", world.profile]:
            what = f"{path} ({'guest' if signed_in else 'visitor'})"
            page = open_page(browser, world, path, signed_in, SMALL_PHONE)
            found += sideways(page, what)
            found += header_problems(page, what)
            if path == "/":
                expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
                for selector in LOBBY_BUTTONS if signed_in else ["#guest-form button"]:
                    height = box_of(page, selector)["height"]
                    if height < MIN_TARGET:
                        found.append(f"{what}: {selector} is {height:.0f} px tall")
            page.context.close()
    assert not found, "\n".join(found)


def test_no_page_scrolls_sideways_on_either_phone_signed_out_or_in(
    browser: Browser,
    world: World,
) -> None:
    found = []
    for viewport in (PHONE, SMALL_PHONE):
        for signed_in in (False, True):
            state = world.states["alice"] if signed_in else None
            context = browser.new_context(viewport=viewport, storage_state=state)
            page = world.problems.watch("phone", context.new_page())
            for path in [*PAGES, world.profile]:
                page.goto(world.site.url + path)
                if path == "/":
                    expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
                who = "guest" if signed_in else "visitor"
                found += sideways(page, f"{path} ({who}, {viewport['width']} px)")
            context.close()
    assert not found, "\n".join(found)


def test_the_computer_fallback_checkbox_label_stays_on_one_line_on_a_phone(
    browser: Browser,
    world: World,
) -> None:
    for viewport in (PHONE, SMALL_PHONE):
        page = open_page(browser, world, "/", True, viewport)
        label = page.locator("label.check:has(#seek-computer)")
        expect(label).to_contain_text("If nobody pairs within 30 s, play the computer")
        # The lines its words take: the distinct tops of the text's boxes.
        lines = label.evaluate(
            "label => { const range = document.createRange();"
            " const text = [...label.childNodes].find(n => n.nodeType === 3 && n.data.trim());"
            " range.selectNodeContents(text);"
            " return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }"
        )
        if viewport is PHONE:
            assert lines == 1, f"the label takes {lines} lines at {viewport['width']} px"
        page.context.close()
