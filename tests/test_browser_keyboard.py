"""The boards by keyboard and for screen readers, in a real browser: every game played with
the keys alone (Diffusion Chess paths too), every move, the end, chat and a low clock
announced, the position in words one key away, and a zoom where pits are too small for a
finger. The tests share one server and two guests; each plays a game of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browsers import SharedSite, keep_screenshot
from tests.test_browser import challenge, smallest_target
from tests.test_browser_access import SIZES, World, label_not_in_name, started_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page's keys and words do not depend on the database: once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


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


def players(
    chromium: Browser, world: World, slug: str, size: str = "desk", **kwargs: Any
) -> tuple[Page, Page]:
    """Alice and Bob in their own browsers, on a new game Alice challenged Bob to."""
    pages = []
    for who in ("alice", "bob"):
        context = chromium.new_context(viewport=SIZES[size], storage_state=world.states[who])
        page = world.problems.watch(who, context.new_page())
        if kwargs.pop("frozen_clock", False) and who == "alice":
            page.clock.install()  # her page's time is the test's to move
        page.goto(world.site.url + "/")
        expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
        pages.append(page)
    alice, bob = pages
    challenge(alice, bob, slug, **kwargs)
    # Both pages have the game from the server (the board is drawn from it): a move made
    # before would come in the snapshot, not as a move to announce.
    for page in pages:
        expect(page.locator("#board svg")).to_be_visible()
    return alice, bob


def focused(page: Page, attribute: str) -> str | None:
    value = page.evaluate(f"() => document.activeElement.dataset.{attribute} || null")
    return None if value is None else str(value)


def announced(page: Page) -> Any:
    return expect(page.locator("#announce"))


def play_a_pit_by_keyboard(page: Page) -> str:
    """Tab from the board to its first playable pit, an arrow to the next one, Enter."""
    expect(page.locator("g.pit.playable").first).to_be_visible()
    page.locator("#board").focus()
    page.keyboard.press("Tab")
    first = focused(page, "pit")
    assert first is not None, "Tab from the board reaches no pit"
    page.keyboard.press("ArrowRight")
    pit = focused(page, "pit")
    assert pit is not None
    page.keyboard.press("Enter")
    return pit


def cursor_to(page: Page, cell: str) -> None:
    """Arrow keys from the focused cell to `cell`, as the board shows them."""

    def centre(name: str) -> tuple[float, float]:
        box = page.locator(f"g.cell[data-cell='{name}'] rect.hit").bounding_box()
        assert box, name
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    start = focused(page, "cell")
    assert start is not None
    (x0, y0), (x1, y1) = centre(start), centre(cell)
    width = page.locator(f"g.cell[data-cell='{start}'] rect.hit").bounding_box()["width"]
    across, down = round((x1 - x0) / width), round((y1 - y0) / width)
    for _ in range(abs(across)):
        page.keyboard.press("ArrowRight" if across > 0 else "ArrowLeft")
    for _ in range(abs(down)):
        page.keyboard.press("ArrowDown" if down > 0 else "ArrowUp")
    assert focused(page, "cell") == cell


def targets(page: Page) -> list[str]:
    return page.locator("g.cell.target").evaluate_all("ns => ns.map(n => n.dataset.cell)")


@pytest.mark.parametrize(
    ("slug", "options"), [("diffusion", None), ("zigzag", {"pits": 4, "seeds": 3})]
)
def test_a_pit_game_is_played_by_keyboard_and_every_move_and_the_end_are_announced(
    browser: Browser,
    world: World,
    slug: str,
    options: dict[str, int] | None,
) -> None:
    alice, bob = players(browser, world, slug, options=options)
    # A screen reader names the board by the game's name, not its address.
    name = {"diffusion": "Diffusion", "zigzag": "ZigZag"}[slug]
    expect(alice.locator("#board svg")).to_have_attribute("aria-label", f"{name} board")
    first = play_a_pit_by_keyboard(alice)
    announced(bob).to_contain_text(f"{world.names['alice']} played {first}. Your move.")
    announced(alice).to_contain_text(f"You played {first}.")
    answer = play_a_pit_by_keyboard(bob)
    announced(alice).to_contain_text(f"{world.names['bob']} played {answer}. Your move.")
    # Focus stayed on the board for the next move: Enter plays the pit under it.
    assert (
        focused(alice, "pit") is not None
        or alice.evaluate("() => document.activeElement.id") == "board"
    )
    # The position in words is one key away.
    alice.locator("#board").focus()
    alice.keyboard.press("d")
    expect(alice.locator("#position-words")).to_have_attribute("open", "")
    assert alice.evaluate("() => document.activeElement.id") == "position-summary"
    words = alice.locator("#position-text").inner_text()
    assert f"{world.names['alice']} (you) to move." in words, words
    assert "Row 1 of 2" in words and "left to right" in words, words
    # Chat comes to a polite live region, with the speaker's name.
    bob.locator("#chat-input").fill("good luck")
    bob.keyboard.press("Enter")
    chat = alice.locator("#chat-lines")
    expect(chat).to_have_attribute("aria-live", "polite")
    line = chat.locator("li").last
    expect(line).to_have_text(f"{world.names['bob']} good luck report")
    # The line's report link says whose line it reports.
    label = f"report this line of {world.names['bob']}"
    expect(line.locator("a.report-line")).to_have_attribute("aria-label", label)
    # The end, by keyboard too.
    alice.once("dialog", lambda dialog: dialog.accept())
    alice.locator("#resign-button").focus()
    alice.keyboard.press("Enter")
    for page in (alice, bob):
        announced(page).to_contain_text(f"Game over: {world.names['bob']} wins")


def test_the_first_tab_is_a_skip_link_to_the_board_whose_pits_show_their_names(
    browser: Browser,
    world: World,
) -> None:
    # Twelve Tabs reached the first pit, past the header, the game's links and the players.
    alice, bob = players(browser, world, "diffusion")
    alice.reload()  # as the page opens: nothing focused yet
    expect(alice.locator("g.pit.playable").first).to_be_visible()
    alice.keyboard.press("Tab")
    link = alice.locator("#skip-link")
    expect(link).to_be_focused()
    expect(link).to_have_text("Skip to the board")
    box = link.bounding_box()
    assert box is not None and box["y"] >= 0 and box["height"] >= 24, box
    alice.keyboard.press("Enter")
    pit = focused(alice, "pit")
    assert pit is not None, "the skip link does not lead to a pit"
    alice.keyboard.press("Enter")
    announced(bob).to_contain_text(f"{world.names['alice']} played {pit}.")
    # The pits that changed show by how much; what every pit shows is in its name, in order.
    expect(bob.locator("g.pit.changed").first).to_be_visible()
    for page in (alice, bob):
        assert not label_not_in_name(page), label_not_in_name(page)
    # Every other page's first Tab goes past the header to its content.
    bob.goto(world.site.url + "/rules/")
    bob.keyboard.press("Tab")
    expect(bob.locator("#skip-link")).to_be_focused()
    expect(bob.locator("#skip-link")).to_have_text("Skip to the content")
    bob.keyboard.press("Enter")
    assert bob.evaluate("() => document.activeElement.id") == "main"


def test_diffusion_chess_is_played_by_keyboard_a_drawn_path_and_a_chosen_destination(
    browser: Browser,
    world: World,
) -> None:
    alice, bob = players(browser, world, "diffusion-chess")
    # Tab to the board: the cursor is on a stone that can move; Enter chooses it.
    expect(alice.locator("g.cell.movable").first).to_be_visible()
    alice.locator("#board").focus()
    alice.keyboard.press("Tab")
    stone = focused(alice, "cell")
    assert stone is not None
    expect(alice.locator(f"g.cell[data-cell='{stone}']")).to_have_class(re.compile("movable"))
    alice.keyboard.press("Enter")
    expect(alice.locator(f"g.cell[data-cell='{stone}']")).to_have_attribute("aria-selected", "true")
    # Shift+arrow draws the path one step, as a drag does; Enter at its end plays it.
    near = None
    for key in ("ArrowUp", "ArrowRight", "ArrowLeft", "ArrowDown"):
        alice.keyboard.press(f"Shift+{key}")
        cell = focused(alice, "cell")
        if cell in targets(alice):
            near = cell
            break
        alice.keyboard.press("Escape")
        cursor_to(alice, stone)
        alice.keyboard.press("Enter")
    assert near is not None, f"no destination next to {stone}"
    expect(alice.locator(f"g.cell[data-cell='{near}']")).to_have_class(re.compile("on-path"))
    alice.keyboard.press("Enter")
    path = f"{stone}-{near}"
    announced(bob).to_contain_text(f"{world.names['alice']} played {path}.")
    # The second move of the turn: a stone chosen, the cursor taken to a destination, Enter.
    expect(alice.locator("g.cell.movable").first).to_be_visible()
    alice.locator("#board").focus()
    alice.keyboard.press("Tab")
    assert focused(alice, "cell") == near  # the cursor stays where the last move left it
    movable = alice.locator("g.cell.movable").evaluate_all("ns => ns.map(n => n.dataset.cell)")
    mover = sorted(movable)[0]
    cursor_to(alice, mover)
    alice.keyboard.press("Enter")
    goal = sorted(targets(alice))[-1]
    cursor_to(alice, goal)
    alice.keyboard.press("Enter")
    announced(alice).to_contain_text(re.compile(rf"You played {mover}-[a-z0-9-]*{goal}\."))
    alice.keyboard.press("d")
    words = alice.locator("#position-text").inner_text()
    assert f"White, {world.names['alice']} (you):" in words and "king on" in words, words


def test_the_players_own_clock_running_low_is_announced_at_once(
    browser: Browser,
    world: World,
) -> None:
    alice, bob = players(browser, world, "diffusion", time_control="3+2", frozen_clock=True)
    alice.locator("g.pit.playable").first.click()
    expect(bob.locator("g.pit.playable").first).to_be_visible()
    bob.locator("g.pit.playable").first.click()
    expect(alice.locator("#clock-1.running")).to_be_visible()
    alice.clock.fast_forward(160_000)  # 2:40 of her 3:00 gone, as her page sees it
    expect(alice.locator("#announce-urgent")).to_have_text("30 seconds left on your clock.")
    expect(bob.locator("#announce-urgent")).to_be_empty()  # only one's own clock


def smallest_pit(page: Page) -> float:
    return smallest_target(page, "g.pit rect.hit")


def test_a_long_pit_board_on_a_phone_offers_a_zoom_with_pits_big_enough_for_a_finger(
    browser: Browser,
    world: World,
) -> None:
    alice, bob = players(browser, world, "zigzag", "small phone", options={"pits": 26, "seeds": 1})
    expect(alice.locator("g.pit.playable").first).to_be_visible()
    assert smallest_pit(alice) < 40  # the whole board in the window: too small to tap
    zoom = alice.locator(".zoom-button")
    expect(zoom).to_have_text("Zoom in: bigger pits")
    zoom.click()
    expect(alice.locator(".zoom-button")).to_have_attribute("aria-pressed", "true")
    assert smallest_pit(alice) >= 40
    scroll, inner = alice.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert scroll <= inner, (scroll, inner)
    keep_screenshot(alice, "board-zigzag-26-zoomed-360", full_page=True)
    pit = alice.locator("g.pit.playable").last
    played = pit.get_attribute("data-pit")
    pit.click()  # scrolled to, as a finger would
    announced(bob).to_contain_text(f"{world.names['alice']} played {played}.")
    # The zoom stays for the next move, and the whole board is one tap away.
    expect(alice.locator(".zoom-button")).to_have_text("Whole board")
    alice.locator(".zoom-button").click()
    assert smallest_pit(alice) < 40
