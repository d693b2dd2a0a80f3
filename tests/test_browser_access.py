"""Accessibility in a real browser: every page and every board type checked by axe-core
against WCAG 2.2 AA (0 violations), signed out and signed in, at a desk (1366x768) and on
phones (390x844, 360x740), with no page scrolling sideways.

The pages share one server and one set of games (started in the lobby by two guests), so the
file runs whole on one worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.browsers import (
    ARTIFACTS,
    Problems,
    Site,
    expect_game_live,
    keep_screenshot,
    make_moderator,
    sweep_once,
)
from tests.servers import migrated_scratch_database
from tests.test_browser import api, challenge_by_request, guest, smallest_target

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages' markup does not depend on the database: checked once"),
]

try:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs them
    pytest.fail("Playwright or axe is missing: run `make dev`", pytrace=False)

SIZES = {
    "desk": {"width": 1366, "height": 768},
    "phone": {"width": 390, "height": 844},
    "small phone": {"width": 360, "height": 740},
}
# WCAG 2.0, 2.1 and 2.2, levels A and AA, and axe's best practices.
AXE_OPTIONS = {
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    },
    "resultTypes": ["violations"],
}
BOARDS = {
    "diffusion 2x6": ("diffusion", None),
    "four-rank diffusion 4x8": ("four-rank-diffusion", None),
    "zigzag 26 pits": ("zigzag", {"pits": 26, "seeds": 1}),
    "diffusion chess 19x19": ("diffusion-chess", None),
}
PAGES_OUT = [
    "/",
    "/login/",
    "/signup/",
    "/rules/",
    "/rules/diffusion/",
    "/rules/zigzag/",
    "/rules/diffusion-chess/",
    "/rules/four-rank-diffusion/",
    "/standings/",
    "/live/",
    "/games/",
    "/puzzles/",
    "/tv/",
    "/help/mail/",
    "/password-reset/",
]
# A registered user's own pages: the settings (the password, address and closing pages share
# the account page's form layout), a report form, and (Dana is a moderator too) the queue.
PAGES_OF_DANA = [
    "/@dana/",
    "/settings/account/",
    "/settings/two-factor/",
    "/settings/privacy/",
    "/moderation/",
]


@dataclass
class World:
    site: Site
    problems: Problems
    games: dict[str, str] = field(default_factory=dict)  # board -> path
    profile: str = ""
    states: dict[str, Any] = field(default_factory=dict)  # each guest's signed-in browser state
    names: dict[str, str] = field(default_factory=dict)
    finished: str = ""  # a game Alice resigned
    tournament: str = ""  # Dana's Swiss, running, Alice and Bob playing in it
    tournament_game: str = ""  # their game in it


@contextmanager
def started_world(
    browser: Browser,
    tmp_path_factory: pytest.TempPathFactory,
    games: bool = True,
    shared: Site | None = None,
) -> Iterator[World]:
    """A server, two guests (Alice and Bob) and, with `games`, a game of every board type
    Alice is to move in, one she resigned, a registered user (Dana), and Dana's Swiss, started,
    with Alice and Bob playing a game in it. With `shared`, on the test process's shared
    server (its guests are new; a server of its own costs a database and a start)."""
    scratch = tmp_path_factory.mktemp("access")
    problems = Problems()
    with (
        nullcontext(None) if shared is not None else migrated_scratch_database(scratch)
    ) as database_url:
        site = shared if shared is not None else Site(scratch, str(database_url))
        with site.serve():
            world = World(site, problems)
            alice = guest(browser, site, problems, "alice")
            bob = guest(browser, site, problems, "bob")
            for who, page in (("alice", alice), ("bob", bob)):
                world.names[who] = str(page.locator("#lobby").get_attribute("data-username"))
            world.profile = f"/@{world.names['alice']}/"
            # The games are made through the API, off the site (every page of it goes to a new
            # game by itself, which would race the navigations below): the pages are checked
            # below.
            for page in (alice, bob):
                page.goto("about:blank")
            for name, (slug, options) in BOARDS.items() if games else ():
                game = challenge_by_request(alice, bob, site, slug, options)
                world.games[name] = f"/games/{game}/"
            if games:
                world.finished = f"/games/{challenge_by_request(alice, bob, site, 'diffusion')}/"
                alice.goto(site.url + world.finished)
                expect_game_live(alice)
                alice.once("dialog", lambda dialog: dialog.accept())
                alice.locator("#abort-button, #resign-button").locator("visible=true").click()
                expect(alice.locator("#banner")).to_be_visible()
            world.states = {"alice": alice.context.storage_state()}
            world.states["bob"] = bob.context.storage_state()
            if games:
                world.states["dana"] = signed_up(browser, site, "dana")
                make_moderator(site, "dana")
                world.tournament, world.tournament_game = started_swiss(browser, world, alice, bob)
            yield world
    assert not problems.errors, problems.errors


@pytest.fixture(scope="module")
def world(
    browser: Browser,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    with started_world(browser, tmp_path_factory) as started:
        yield started


def signed_up(chromium: Browser, site: Site, name: str) -> Any:
    """A registered user's browser state, signed up through the form."""
    context = chromium.new_context()
    page = context.new_page()
    page.goto(site.url + "/signup/")
    page.fill("#id_username", name)
    for field_id in ("#id_password1", "#id_password2"):
        page.fill(field_id, "a long and quiet evening")
    page.locator("form.stacked button[type=submit]").click()
    expect(page.locator("[data-testid=username]")).to_have_text(name)
    state = context.storage_state()
    context.close()
    return state


def started_swiss(browser: Browser, world: World, *players: Page) -> tuple[str, str]:
    """Dana's casual Swiss, joined by the players and started by a pass of the sweeper (which
    pairs its first round); the paths of its page and of the first game. Correspondence, so
    that the game stays as it is while the pages are checked (a real-time game nobody moves
    in is aborted after 30 seconds)."""
    site = world.site
    context = browser.new_context(storage_state=world.states["dana"])
    dana = context.new_page()
    dana.goto(site.url + "/tournaments/")
    made = api(
        dana,
        site,
        "/api/tournaments",
        {
            "name": "Dana's Friday Swiss",
            "kind": "swiss",
            "slug": "zigzag",
            "time_control": "2d",
            "rounds": 3,
            "starts_in_minutes": 0,
            "rated": False,
        },
    )
    for page in players:
        api(page, site, f"/api/tournaments/{made['tournament_id']}/join")
    sweep_once(site)
    found = dana.request.get(f"{site.url}/api/tournaments/{made['tournament_id']}").json()
    context.close()
    assert found["tournament"]["status"] == "running", found
    return made["url"], f"/games/{found['pairings'][0]['game_id']}/"


def violations(page: Page) -> list[str]:
    results = Axe().run(page, options=AXE_OPTIONS)
    found = []
    for violation in results.response["violations"]:
        for node in violation["nodes"]:
            where = " ".join(node["target"])
            found.append(f"{violation['id']}: {where} ({node['failureSummary']})")
    return found


class Visitor:
    """One browser per person and window size, going from page to page (a new browser per
    page would cost more than the checks)."""

    def __init__(self, chromium: Browser, world: World, size: str, who: str | None) -> None:
        self.world, self.size, self.who = world, size, who
        state = world.states[who] if who else None
        self.context = chromium.new_context(viewport=SIZES[size], storage_state=state)
        self.page = world.problems.watch(who or "visitor", self.context.new_page())

    def check(self, path: str) -> list[str]:
        """axe-core's violations on the page once it has drawn what its socket said, and
        whether it scrolls sideways."""
        page = self.page
        page.goto(self.world.site.url + path)
        if page.locator("#lobby").count():
            expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
        if page.locator("#tournament").count():
            expect(page.locator("#tournament")).to_have_attribute("data-ready", "true")
        if page.locator("#game").count():
            expect(page.locator("#board svg")).to_be_visible()
            expect(page.locator("#position-text p").first).to_be_attached()
        found = violations(page)
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        if scroll > inner:
            found.append(f"scrolls sideways: {scroll} > {inner}")
        return [f"{path} ({self.who or 'signed out'}, {self.size}): {v}" for v in found]

    def close(self) -> None:
        self.context.close()


# axe at a desk and on the smallest phone; the layout checks cover 390 px as well.
AXE_SIZES = ["desk", "small phone"]


@pytest.mark.parametrize("size", AXE_SIZES)
def test_every_page_passes_axe_signed_out_and_in(
    browser: Browser,
    world: World,
    size: str,
) -> None:
    # At a desk, every page; on the phone, one page of each kind (the rules pages share one
    # template; what changes with the width is the layout, and every page's header).
    signed_out = PAGES_OUT if size == "desk" else ["/", "/login/", "/rules/zigzag/", "/live/"]
    # The tournaments list and a running Swiss's page, on every screen: their tables become
    # labelled lines on a phone.
    tournaments = ["/tournaments/", world.tournament]
    # Signed in, the pages whose content changes with it (every page's header does too): a
    # player in the Swiss, and its game's page (with its link to the Swiss); Dana, who made
    # it, sees the form that makes one.
    # The tournament pages once per kind of viewer that changes them: a visitor (no buttons),
    # Alice (in it: Withdraw), Dana (the list's form; her own Swiss's page differs from a
    # visitor's by its invitation line only, which this casual open one has not).
    visits = {
        None: [*signed_out, *tournaments],
        "alice": [
            "/",
            "/live/",
            "/standings/",
            "/rules/diffusion/",
            world.profile,
            *tournaments,
            world.tournament_game,
        ],
        "dana": (
            [*PAGES_OF_DANA, f"/report/?user={world.names['alice']}", "/tournaments/"]
            if size == "desk"
            else ["/@dana/", "/settings/two-factor/", "/tournaments/"]
        ),
    }
    found = []
    for who, paths in visits.items():
        visitor = Visitor(browser, world, size, who)
        for path in paths:
            found += visitor.check(path)
        visitor.close()
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", AXE_SIZES)
def test_every_board_passes_axe_for_its_player_and_a_visitor(
    browser: Browser,
    world: World,
    size: str,
) -> None:
    # The player to move sees every control; a visitor's page differs in what it leaves out,
    # checked at a desk.
    found = []
    for who in ("alice", None) if size == "desk" else ("alice",):
        visitor = Visitor(browser, world, size, who)
        for path in [*world.games.values(), world.finished]:
            found += visitor.check(path)
        visitor.close()
    assert not found, "\n".join(found)


# axe's experimental check of WCAG 2.5.3 (Label in Name), which the tags above leave out: a
# control's accessible name holds the text it shows, so that speech input can name it.
NAME_HOLDS_LABEL = {
    "runOnly": {"type": "rule", "values": ["label-content-name-mismatch"]},
    "resultTypes": ["violations"],
}


def label_not_in_name(page: Page) -> list[str]:
    results = Axe().run(page, options=NAME_HOLDS_LABEL)
    return [
        f"{node['target']}: {node['failureSummary']}"
        for violation in results.response["violations"]
        for node in violation["nodes"]
    ]


def test_every_pit_and_cell_is_named_by_what_it_shows(
    browser: Browser,
    world: World,
) -> None:
    # "pit F: 4" was the name of a pit showing "4" then "F": axe flagged every pit (540 on
    # the boards checked). The pit shows "F 4" now, in the order its name says it.
    visitor = Visitor(browser, world, "desk", "alice")
    found = []
    for name, path in world.games.items():
        visitor.page.goto(world.site.url + path)
        expect(visitor.page.locator("g.pit.playable, g.cell.movable").first).to_be_visible()
        found += [f"{name}: {problem}" for problem in label_not_in_name(visitor.page)]
    visitor.close()
    assert not found, "\n".join(found[:20])


def test_no_mark_on_a_board_is_carried_by_colour_alone(
    browser: Browser,
    world: World,
) -> None:
    """Each state a colour shows has a shape too; the boards are saved in grey for review."""
    context = browser.new_context(viewport=SIZES["desk"], storage_state=world.states["alice"])
    page = world.problems.watch("alice", context.new_page())
    for name, path in world.games.items():
        page.goto(world.site.url + path)
        board = page.locator("#board svg")
        expect(board).to_be_visible()
        if "chess" in name:
            expect(page.locator("g.cell.movable").first).to_be_visible()
            washed = page.locator("g.cell:has(rect.group-wash)").count()
            assert washed > 0
            assert page.locator("g.cell text.group-no").count() == washed
        else:
            playable = page.locator("g.pit.playable")
            expect(playable.first).to_be_visible()
            assert page.locator("g.pit.playable circle.ring").count() == playable.count()
            assert page.locator("g.pit:not(.playable) circle.ring").count() == 0
        # Online a filled dot, offline a hollow ring: not the colour alone.
        fills = page.locator(".player .dot").evaluate_all(
            "ns => ns.map(n => [n.closest('.player').classList.contains('online'),"
            " getComputedStyle(n).backgroundColor])"
        )
        for online, fill in fills:
            assert (fill != "rgba(0, 0, 0, 0)") == online, fills
        page.evaluate("() => { document.documentElement.style.filter = 'grayscale(1)'; }")
        keep_screenshot(page, f"grey-{name.replace(' ', '-')}")
    context.close()


def test_every_board_fits_each_window_with_targets_for_a_finger_or_a_zoom(
    browser: Browser,
    world: World,
) -> None:
    """Each board at each size: its height against the window's, and its smallest target
    (after the page's zoom or close-up on phones). The table goes to test-artifacts/."""
    table = ["board | window | board height | smallest target | zoomed target"]
    visitors = {size: Visitor(browser, world, size, "alice") for size in SIZES}
    for name, path in world.games.items():
        for size, viewport in SIZES.items():
            page = visitors[size].page
            page.goto(world.site.url + path)
            chess = "chess" in name
            hit = "g.cell rect.hit" if chess else "g.pit rect.hit"
            expect(page.locator("g.cell.movable, g.pit.playable").first).to_be_visible()
            box = page.locator("#board svg").bounding_box()
            assert box is not None
            height = box["height"]
            assert height <= viewport["height"], (name, size, height)
            assert box["x"] + box["width"] <= viewport["width"] + 0.5, (name, size, box)
            if size == "desk" and not chess:
                # Lying flat between the players, as wide as the page allows.
                expect(page.locator("#board svg")).to_have_attribute("data-layout", "flat")
            keep_screenshot(page, f"fit-{name.replace(' ', '-')}-{size}")
            smallest = smallest_target(page, hit)
            zoomed = smallest
            if size != "desk" and smallest < 40:
                # The page offers a bigger view: the close-up of a chosen stone, or a zoom.
                if chess:
                    page.locator("g.cell.movable").first.click()
                    expect(page.locator("svg.chessboard.close-up")).to_be_visible()
                else:
                    page.locator(".zoom-button").click()
                    expect(page.locator("svg.mancala.zoomed")).to_be_visible()
                zoomed = smallest_target(page, hit)
                assert zoomed >= 40, (name, size, zoomed)
                scroll = page.evaluate("() => document.documentElement.scrollWidth")
                assert scroll <= viewport["width"], (name, size, scroll)
            table.append(
                f"{name} | {viewport['width']}x{viewport['height']} | {height:.0f} px"
                f" | {smallest:.1f} px | {zoomed:.1f} px"
            )
    for visitor in visitors.values():
        visitor.close()
    (ARTIFACTS / "board-sizes.txt").write_text("\n".join(table) + "\n")
    print("\n".join(table))


def test_the_lobby_with_a_seek_and_a_challenge_just_come_passes_axe(
    browser: Browser,
    world: World,
) -> None:
    pages = {}
    for who, size in (("alice", "phone"), ("bob", "desk")):
        context = browser.new_context(viewport=SIZES[size], storage_state=world.states[who])
        pages[who] = world.problems.watch(who, context.new_page())
        pages[who].goto(world.site.url + "/")
        expect(pages[who].locator("#lobby")).to_have_attribute("data-ready", "true")
    alice, bob = pages["alice"], pages["bob"]
    bob.click("#seek-submit")
    expect(alice.locator("#seeks li[data-seek-id]")).to_have_count(1)
    bob.fill("#challenge-user", world.names["alice"])
    bob.click("#challenge-submit")
    expect(alice.locator("#lobby-notice .actions button.accept")).to_be_visible()
    found = [f"alice's lobby: {v}" for v in violations(alice)]
    found += [f"bob's lobby: {v}" for v in violations(bob)]
    alice.locator("#lobby-notice .actions button.decline").click()
    bob.locator("#seeks li.mine button.cancel").click()
    expect(alice.locator("#seeks li[data-seek-id]")).to_have_count(0)
    assert not found, "\n".join(found)
