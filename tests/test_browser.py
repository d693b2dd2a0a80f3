"""The web client in a real browser: Playwright driving Debian's Chromium against Daphne with
the Redis channel layer, as people use it. `make screenshots` saves pictures of every board
type under test-artifacts/ (ignored by git) to be looked at.
"""

from __future__ import annotations

import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from games.engine import rules_for
from tests.browsers import TIMEOUT_MS, Problems, Site, expect_game_live, keep_screenshot
from tests.servers import migrated_scratch_database

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page in the browser, not the database, is under test: run once"),
]

try:
    from playwright.sync_api import Browser, BrowserContext, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail(
        "Playwright is missing: run `make dev` (it installs the dev extra, playwright included)",
        pytrace=False,
    )


def guest(browser: Browser, site: Site, problems: Problems, name: str, **options: Any) -> Page:
    """A new browser context that signs in as a guest from the lobby; returns the lobby page."""
    context: BrowserContext = browser.new_context(**options)
    page = problems.watch(name, context.new_page())
    page.goto(site.url + "/")
    page.locator("#guest-form button").click()
    expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    return page


def username(page: Page) -> str:
    return str(page.locator("#lobby").get_attribute("data-username"))


def challenge(
    challenger: Page,
    opponent: Page,
    slug: str,
    options: dict[str, int] | None = None,
    time_control: str = "",
) -> int:
    """The challenger challenges the opponent from the lobby (moving first); the opponent
    accepts; both land on the new game's page. Returns the game's id."""
    challenger.fill("#challenge-user", username(opponent))
    challenger.select_option("#challenge-game", slug)
    for name, value in (options or {}).items():
        challenger.fill(f"#challenge-options input[data-option={name}]", str(value))
    challenger.select_option("#challenge-side", "first")
    challenger.select_option("#challenge-time", time_control)
    challenger.click("#challenge-submit")
    incoming = opponent.locator("#challenges-in li[data-challenge-id]")
    expect(incoming).to_have_count(1)
    expect(opponent).to_have_title(re.compile(r"^\(1\) Challenged · "))  # seen from another tab
    incoming.locator("button.accept").click()
    for page in (challenger, opponent):
        page.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
        expect_game_live(page)
    game_id = int(challenger.url.rstrip("/").split("/")[-1])
    assert opponent.url == challenger.url
    return game_id


def api(page: Page, site: Site, path: str, body: dict[str, Any] | None = None) -> Any:
    """POST to the JSON API as the page's user (its cookies and CSRF token); the answer."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        site.url + path,
        data=json.dumps(body or {}),
        headers={"Content-Type": "application/json", "X-CSRFToken": token},
    )
    assert response.ok, (path, response.status, response.text())
    return response.json()


def challenge_by_request(
    challenger: Page,
    opponent: Page,
    site: Site,
    slug: str,
    options: dict[str, int] | None = None,
) -> int:
    """A game the challenger moves first in, made through the HTTP API (for a test about the
    game's page, not the lobby: the pages are not used to make it, but a lobby page open goes
    to the game, as it does for any new game). Returns the game's id."""
    name = opponent.locator("body").get_attribute("data-username")
    made = api(
        challenger,
        site,
        "/api/challenges",
        {"user": name, "slug": slug, "options": options or {}, "side": "first"},
    )
    accepted = api(opponent, site, f"/api/challenges/{made['challenge']['id']}/accept")
    return int(accepted["game_id"])


def smallest_target(page: Page, selector: str) -> float:
    """The smaller side of the smallest of the elements `selector` finds, in CSS pixels."""
    sizes = page.locator(selector).evaluate_all(
        "ns => ns.map(n => n.getBoundingClientRect()).map(r => Math.min(r.width, r.height))"
    )
    assert sizes, selector
    return float(min(sizes))


def back_to_lobby(site: Site, *pages: Page) -> None:
    for page in pages:
        page.goto(site.url + "/")
        expect(page.locator("#lobby")).to_have_attribute("data-ready", "true")


def moves_of(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("#moves li button").all_inner_texts()]


def wait_for_moves(pages: list[Page], count: int) -> None:
    for page in pages:
        expect(page.locator("#moves .move-link")).to_have_count(count)


def drag_path(page: Page, cells: list[str]) -> None:
    """Press on the first cell, move through the others, release on the last."""

    def centre(cell: str) -> tuple[float, float]:
        box = page.locator(f"g.cell[data-cell='{cell}'] rect.hit").bounding_box()
        assert box, cell
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    page.mouse.move(*centre(cells[0]))
    page.mouse.down()
    for cell in cells[1:]:
        page.mouse.move(*centre(cell), steps=4)
    page.mouse.up()


def play_by_clicking(
    players: list[Page], watchers: list[Page], rng: random.Random, most: int = 2000
) -> int:
    """Click random playable pits on whichever player's page offers them until the game
    ends (or `most` moves are played); every page must show every move. Returns the number
    of moves."""
    pages = players + watchers
    count = len(moves_of(players[0]))
    for _ in range(most):
        if players[0].locator("#banner").is_visible():
            return count
        for page in players:
            pits = page.locator("g.pit.playable")
            if pits.count():
                names = [
                    str(name) for name in pits.evaluate_all("ns => ns.map(n => n.dataset.pit)")
                ]
                page.locator(f"g.pit.playable[data-pit='{rng.choice(list(names))}']").click()
                count += 1
                wait_for_moves(pages, count)
                break
        else:
            # Nobody can move: the sowing is still being shown, or the game is over (the
            # banner may still be on its way).
            for _ in range(150):
                if players[0].locator("#banner").is_visible() or any(
                    page.locator("g.pit.playable").count() for page in players
                ):
                    break
                players[0].wait_for_timeout(100)
            else:
                raise AssertionError("nobody can move, and no result is shown")
    if most < 2000:
        return count
    raise AssertionError("the game did not end")


def test_two_players_meet_through_a_challenge_and_play_diffusion_while_a_visitor_watches(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        # The players see no sowing animation (reduced motion), so the game goes at their
        # pace; the visitor's page animates every sowing, moves arriving mid-sowing included.
        calm = {"reduced_motion": "reduce"}
        alice = guest(browser, site, problems, "alice", **calm)
        bob = guest(browser, site, problems, "bob", viewport={"width": 390, "height": 844}, **calm)
        keep_screenshot(alice, "lobby", full_page=True)
        names = username(alice), username(bob)
        # A checkbox and its words on one line.
        lines = alice.locator("label.check:has(#seek-computer)").evaluate(
            "l => l.getBoundingClientRect().height / parseFloat(getComputedStyle(l).fontSize)"
        )
        assert lines < 2, lines
        game_id = challenge(alice, bob, "diffusion")
        visitor = problems.watch("visitor", browser.new_context().new_page())
        visitor.goto(f"{site.url}/games/{game_id}/")
        expect_game_live(visitor)
        expect(alice.locator("#spectators")).to_have_text("1")
        # Each player's name leads to their profile.
        for seat, name in (("1", names[0]), ("2", names[1])):
            expect(visitor.locator(f"#player-{seat} a.name")).to_have_attribute(
                "href", f"/@{name}/"
            )
        # The blocks say whose they are by name: Alice's is hers, the other is Bob's.
        labels = alice.locator("#board text.block-label").all_text_contents()
        assert sorted(label.split(" · ")[1] for label in labels) == sorted([names[1], "yours"])
        # Alice moves first: her pits are playable, Bob's page offers nothing yet.
        expect(alice.locator("g.pit.playable").first).to_be_visible()
        assert bob.locator("g.pit.playable").count() == 0
        assert visitor.locator("g.pit.playable").count() == 0
        keep_screenshot(alice, "diffusion-2x6", full_page=True)
        # A page at rest does no work: the clocks' tick (ten a second) writes nothing that
        # has not changed, and the move list and position words stay as they are.
        changes = alice.evaluate(
            """() => new Promise((resolve) => {
                let count = 0;
                const observer = new MutationObserver((records) => { count += records.length; });
                for (const id of ["clock-1", "clock-2", "time-control", "away", "moves",
                                  "position-text"]) {
                    observer.observe(document.getElementById(id),
                        { subtree: true, childList: true, attributes: true, characterData: true });
                }
                setTimeout(() => { observer.disconnect(); resolve(count); }, 1000);
            })"""
        )
        assert changes == 0, changes

        plies = play_by_clicking([alice, bob], [visitor], random.Random(game_id))

        assert plies > 0
        banners = set()
        for page in (alice, bob, visitor):
            expect(page.locator("#banner")).to_be_visible()
            banners.add(page.locator("#banner").inner_text())
            assert moves_of(page) == moves_of(alice)
            # Connected still, but the game is no longer live.
            expect(page.locator("#connection")).to_have_text("connected")
        assert len(banners) == 1, banners
        assert re.search(r"(wins|Draw) — block [AB] is empty", banners.pop())
        keep_screenshot(bob, "diffusion-2x6-final-phone", full_page=True)
        # Stepping back through the history, then back to live.
        visitor.locator("#moves li button").first.click()
        expect(visitor.locator("#live-button")).to_be_visible()
        visitor.locator("#live-button").click()
        expect(visitor.locator("#live-button")).to_be_hidden()


def test_a_pit_clicked_while_the_opponents_move_is_still_being_sown_is_played(
    browser: Browser, site: Site, problems: Problems
) -> None:
    rules = rules_for("diffusion", {})
    first = sorted(rules.legal_moves(rules.initial_state()))[0]
    answer = sorted(rules.legal_moves(rules.play(rules.initial_state(), first)))[-1]
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        # Bob's timers run on a clock the test holds: the sowing of Alice's move stops at its
        # first seed, so Bob's click surely lands while it is being shown.
        bob.clock.install()
        challenge(alice, bob, "diffusion")
        expect(alice.locator("g.pit.playable").first).to_be_visible()
        bob.clock.pause_at(datetime.now() + timedelta(seconds=1))
        # Alice plays by keyboard: the focused pit is framed for all to see; Enter plays it.
        pit = alice.locator(f"g.pit.playable[data-pit='{first}']")
        alice.locator("#board").focus()
        alice.keyboard.press("Tab")
        for _ in range(12):  # arrows go from playable pit to playable pit
            if alice.evaluate("() => document.activeElement.dataset.pit") == first:
                break
            alice.keyboard.press("ArrowRight")
        frame = pit.locator("rect.hit").evaluate(
            "n => [getComputedStyle(n).stroke, getComputedStyle(n).strokeWidth]"
        )
        assert frame == ["rgb(29, 78, 216)", "4px"], frame
        alice.keyboard.press("Enter")
        expect(bob.locator("#board")).to_have_attribute("aria-busy", "true")

        bob.locator(f"g.pit[data-pit='{answer}']").click()

        for page in (alice, bob):
            wait_for_moves([page], 2)
        assert moves_of(alice) == moves_of(bob)
        assert moves_of(bob)[-1].endswith(answer), moves_of(bob)
        assert "turn" not in bob.locator("#message").inner_text()
        bob.clock.resume()
        expect(bob.locator("#board")).to_have_attribute("aria-busy", "false")


def test_zigzag_is_played_to_the_end_and_diffusion_chess_takes_a_path_and_an_echo(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        # Alice's page animates every sowing; Bob's shows each move at once (reduced motion).
        bob = guest(browser, site, problems, "bob", reduced_motion="reduce")

        challenge(alice, bob, "zigzag", {"pits": 4, "seeds": 3})
        expect(alice.locator("g.pit.playable[data-pit='a']")).to_be_visible()
        keep_screenshot(alice, "zigzag", full_page=True)
        play_by_clicking([alice, bob], [], random.Random(7))
        banner = alice.locator("#banner").inner_text()
        assert re.search(r"South \d+, North \d+", banner), banner
        expect(alice.locator("svg.mancala .captured")).to_contain_text("captured: South")

        back_to_lobby(site, alice, bob)
        challenge(alice, bob, "four-rank-diffusion")
        expect(alice.locator("g.pit.playable").first).to_be_visible()
        keep_screenshot(alice, "four-rank-4x8", full_page=True)

        back_to_lobby(site, alice, bob)
        challenge(alice, bob, "diffusion-chess")
        expect(alice.locator("svg.chessboard")).to_be_visible()
        # A path drawn by dragging: the stone on j3 (king group, size 9) through j4 to k4.
        drag_path(alice, ["j3", "j4", "k4"])
        wait_for_moves([alice, bob], 1)
        assert moves_of(bob) == ["j3-j4-k4"]
        # The echo repeats the steps (north, east) from k4: k5, l5.
        expect(alice.locator("#echo-button")).to_be_visible()
        alice.locator("#echo-button").click()
        wait_for_moves([alice, bob], 2)
        expect(bob.locator("g.cell[data-cell='l5'] .stone.white")).to_have_count(1)
        # Click a stone, then a destination: the move goes at once, by the shortest path.
        alice.locator("g.cell.movable[data-cell='b2']").click()
        alice.locator("g.cell.target[data-cell='b4']").click()
        wait_for_moves([alice, bob], 3)
        assert moves_of(bob)[-1] == "b2-b3-b4"
        expect(alice.locator("#turn-info")).to_contain_text("White to move · 1 move left")
        keep_screenshot(alice, "diffusion-chess", full_page=True)


def test_a_players_page_reconnects_after_the_server_restarts_and_play_goes_on(
    browser: Browser, own_site: Site, problems: Problems
) -> None:
    site = own_site  # it is stopped and started again
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        challenge(alice, bob, "diffusion")
        alice.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 1)
    # The server is gone: both pages say so and keep trying.
    for page in (alice, bob):
        expect(page.locator("#connection")).to_have_attribute(
            "data-state", re.compile("closed|connecting")
        )
    with site.serve():
        for page in (alice, bob):
            expect_game_live(page)
        url = bob.url
        expect(bob.locator("g.pit.playable").first).to_be_visible()
        bob.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 2)
        assert moves_of(alice) == moves_of(bob)
        assert bob.url == url  # no reload was needed


def test_clocks_show_the_first_move_countdown_then_tick_for_the_side_to_move(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        challenge(alice, bob, "diffusion", time_control="3+2")
        expect(alice.locator("#time-control")).to_have_text("3+2 (real time)")
        expect(alice.locator("#clock-1")).to_contain_text("first move:")
        expect(bob.locator("#clock-2")).to_have_text("3:00")
        alice.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 1)
        expect(bob.locator("#clock-2")).to_contain_text("first move:")
        expect(alice.locator("#clock-1")).to_have_text("3:00")  # the first move was free
        bob.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 2)
        # Alice's clock runs now, on both pages; first moves are free and add nothing.
        expect(bob.locator("#clock-1.running")).to_be_visible()
        expect(alice.locator("#clock-1")).to_have_text(re.compile(r"2:5\d"), timeout=5_000)
        expect(alice.locator("#clock-2")).to_have_text("3:00")
        keep_screenshot(alice, "clocks", full_page=True)


def test_a_fifth_pit_game_registered_only_in_the_tests_is_drawn_and_played_to_the_end(
    browser: Browser, tmp_path: Path, problems: Problems
) -> None:
    # One registry line on the server (tests/fifth_game.py); the browser has no code for it.
    with migrated_scratch_database(tmp_path) as database_url:
        site = Site(tmp_path, database_url, settings="tests.fifth_game_settings")
        with site.serve():
            # Without the sowing animation (reduced motion): what is under test is the board
            # drawn from the server's description; the animation is tested above.
            calm = {"reduced_motion": "reduce"}
            alice = guest(browser, site, problems, "alice", **calm)
            bob = guest(browser, site, problems, "bob", **calm)
            challenge(alice, bob, "test-pits")
            # The board is drawn after the snapshot arrives: wait for it, then read it.
            expect(alice.locator("g.pit")).to_have_count(8)
            names = alice.locator("g.pit").evaluate_all("ns => ns.map(n => n.dataset.pit)")
            assert sorted(names) == ["A", "B", "C", "D", "a", "b", "c", "d"]
            keep_screenshot(alice.locator("#board"), "board-test-pits")
            moves = play_by_clicking([alice, bob], [], random.Random(5))
            assert moves > 0
            expect(alice.locator("#banner")).to_be_visible()
            # The analysis board's position editor too is drawn from the server's description
            # of the game's fields: its captures, and who captured last, after the no-return
            # field it leaves at its usual value.
            alice.goto(f"{site.url}/analysis/")
            alice.select_option("#analysis-slug", "test-pits")
            alice.locator("#editor-open").click()
            position = alice.locator("#analysis-position")
            expect(position).to_have_value("3,3,3,3/3,3,3,3 0,0 1")
            expect(alice.locator("#editor")).to_contain_text("South has captured")
            alice.fill("#store-0", "1")
            alice.fill("#pit-a", "2")
            alice.select_option("#editor-last", "1")
            expect(position).to_have_value("3,3,3,3/2,3,3,3 1,0 1 - 1")
            alice.select_option("#editor-last", "0")
            expect(position).to_have_value("3,3,3,3/2,3,3,3 1,0 1")


def test_logging_out_in_one_tab_signs_the_users_other_tabs_out_at_once(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        name = username(alice)
        challenge(alice, bob, "diffusion")
        # A second tab of Alice's browser, on the lobby, signed in as her.
        lobby = problems.watch("alice-lobby", alice.context.new_page())
        lobby.goto(site.url + "/")
        expect(lobby.locator("#lobby")).to_have_attribute("data-username", name)

        alice.locator("form[action='/logout/'] button").click()

        # The other tab's socket is closed by the server and the page shows a visitor's lobby.
        expect(lobby.locator("#guest-form button")).to_be_visible(timeout=5_000)
        expect(lobby.locator("#lobby")).to_have_attribute("data-ready", "true")
        assert username(lobby) == ""
        expect(alice.locator("#guest-form button")).to_be_visible()  # logged out lands home
        # Bob, signed in elsewhere, keeps his socket.
        expect_game_live(bob)


def test_a_game_that_starts_while_its_players_play_another_is_announced_then_gone_to_after(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        first = challenge(alice, bob, "diffusion")
        for page in (alice, bob):
            expect(page.locator("#game")).to_have_attribute("data-playing", "true")
        # A second game of theirs starts (made through the API, as from another tab): neither
        # page leaves the game it plays, each says the new one has started.
        second = challenge_by_request(alice, bob, site, "zigzag", {"pits": 4, "seeds": 3})
        for page in (alice, bob):
            news = page.locator("#notices .notice").filter(has_text=str(second))
            expect(news.get_by_role("link")).to_have_attribute("href", f"/games/{second}/")
            assert page.url == f"{site.url}/games/{first}/"
        # Bob would rather stay: he dismisses the news. Alice aborts the first game (the
        # page's end of the game may come after the news, as in an arena's next wave).
        bob.locator("#notices .notice").filter(has_text=str(second)).locator(".dismiss").click()
        alice.locator("#abort-button").click()
        # Once it is over, Alice's page takes her to the game that is waiting for her.
        alice.wait_for_url(f"{site.url}/games/{second}/", timeout=TIMEOUT_MS)
        expect_game_live(alice)
        expect(bob.locator("#game")).to_have_attribute("data-playing", "false")
        expect(bob.locator("#connection")).to_have_attribute("data-game", "over")
        assert bob.url == f"{site.url}/games/{first}/"


def test_the_pages_work_under_their_content_security_policy_and_an_injected_script_does_not_run(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")  # the lobby works (its socket too)
        header = alice.request.get(site.url + "/").headers["content-security-policy"]
        assert "script-src 'self'" in header
        ran = alice.evaluate(
            """() => {
                window.injected = false;
                const script = document.createElement("script");
                script.textContent = "window.injected = true";
                document.body.appendChild(script);
                return window.injected;
            }"""
        )
        assert ran is False
        # The refusal is the browser's: clear it from what the fixture counts as a problem.
        assert any("Content Security Policy" in error for error in problems.errors)
        problems.errors.clear()


def test_the_rules_pages_draw_every_diagram_on_a_wide_screen_and_a_phone(
    browser: Browser, site: Site, problems: Problems
) -> None:
    # /rules/<slug>/: the diagrams' positions come from the server's engine; the page draws
    # them with the game page's board renderers, under the site's Content-Security-Policy.
    # Each with the name a screen reader gives its boards.
    slugs = {
        "diffusion": "Diffusion board",
        "four-rank-diffusion": "Four-rank Diffusion board",
        "diffusion-chess": "Diffusion Chess board",
        "zigzag": "ZigZag board",
    }
    console: list[str] = []
    failed: list[str] = []
    with site.serve():
        for width, height in ((1366, 768), (390, 844)):
            context = browser.new_context(viewport={"width": width, "height": height})
            page = problems.watch(f"rules-{width}", context.new_page())
            # A resource that fails is listed with its address below; the rest must be silent.
            page.on(
                "console",
                lambda message: (
                    console.append(message.text)
                    if message.type == "error"
                    and not message.text.startswith("Failed to load resource")
                    else None
                ),
            )
            page.on(
                "response",
                lambda response: (
                    failed.append(f"{response.status} {response.url}")
                    if response.status >= 400 and not response.url.endswith("/favicon.ico")
                    else None
                ),
            )
            for slug, label in slugs.items():
                page.goto(f"{site.url}/rules/{slug}/")
                boards = page.locator(".rules-board")
                expect(boards.last).to_have_attribute("data-drawn", "true")
                assert boards.count() >= 3, slug
                for index in range(boards.count()):
                    expect(boards.nth(index).locator("svg")).to_have_count(1)
                    expect(boards.nth(index).locator("svg")).to_have_attribute("aria-label", label)
                # Nothing wider than the screen: the page never scrolls sideways.
                assert page.evaluate("document.documentElement.scrollWidth") <= width, slug
                keep_screenshot(page, f"rules-{slug}-{width}", full_page=True)
            context.close()
    assert not console, f"console errors: {console}"
    assert not failed, f"failed requests: {failed}"


def test_a_player_who_asks_for_bots_too_meets_a_bot_accounts_seek_and_sees_it_marked(
    browser: Browser, site: Site, problems: Problems
) -> None:
    """docs/API.md, "Bot accounts": a program upgrades its account and seeks through the API;
    the lobby lists the seek with BOT; a guest who ticks "Play bots too" is paired with it,
    and the game page marks the bot's name."""
    from tests.test_browser_ratings import sign_up

    with site.serve():
        name = f"engine{random.randrange(10**6)}"  # the shared site's names are everyone's
        owner = sign_up(browser, site.url, problems, name)
        owner.goto(site.url + "/settings/tokens/")
        owner.fill("#id_token_name", "my engine")
        owner.check("#id_scope_bot")
        owner.locator("button[value=create]").click()
        secret = owner.locator("#new-token-secret").inner_text().strip()
        bearer = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
        upgraded = owner.request.post(site.url + "/api/bot/account/upgrade", headers=bearer)
        assert upgraded.ok and upgraded.json()["is_bot_account"], upgraded.text()
        zigzag = {"slug": "zigzag", "options": {"pits": 4, "seeds": 3}}
        seek = owner.request.post(
            site.url + "/api/seeks", data=json.dumps({"games": [zigzag]}), headers=bearer
        )
        assert seek.ok and seek.json()["game_id"] is None, seek.text()
        alice = guest(browser, site, problems, "alice")
        listed = alice.locator(f"#seeks li[data-user={name}]")
        expect(listed.locator("abbr.bot-mark")).to_have_text("BOT")
        expect(listed.locator("abbr.bot-mark")).to_have_attribute("title", "bot account")
        alice.select_option("#seek-game", "zigzag")
        alice.fill("#seek-options input[data-option=pits]", "4")
        alice.fill("#seek-options input[data-option=seeds]", "3")
        alice.check("#seek-bots")
        alice.click("#seek-submit")
        alice.wait_for_url(re.compile(r"/games/\d+/$"), timeout=TIMEOUT_MS)
        expect_game_live(alice)
        marks = alice.locator(".player abbr.bot-mark")
        expect(marks).to_have_count(1)
        bot_seat = alice.locator(".player").filter(has=alice.locator("abbr.bot-mark"))
        expect(bot_seat.locator("a.name")).to_have_text(name)
