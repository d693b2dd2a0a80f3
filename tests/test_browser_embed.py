"""A game framed on another site (/embed/<id>/): a page of another origin frames it, the board
follows the game live through the spectator socket to its end, and the site sets no cookie
in that browser; every other page still refuses to be framed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.browsers import Problems, Site, expect_game_live
from tests.servers import free_port
from tests.test_browser import challenge_by_request, guest
from tests.test_browser_access import violations

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages in the browser, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


@contextmanager
def blog(html: str) -> Iterator[str]:
    """Another site (another origin: its own port) serving one page."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_game_framed_on_another_site_follows_the_game_and_sets_no_cookie(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        for page in (alice, bob):
            page.goto("about:blank")
        game_id = challenge_by_request(alice, bob, site, "diffusion")
        alice.goto(f"{site.url}/games/{game_id}/")
        expect_game_live(alice)

        embed = f"{site.url}/embed/{game_id}/"
        headers = alice.request.get(embed).headers
        assert "x-frame-options" not in headers
        assert "frame-ancestors *" in headers["content-security-policy"]
        refused = alice.request.get(f"{site.url}/games/{game_id}/").headers
        assert refused["x-frame-options"] == "DENY"

        reader = browser.new_context()
        page = problems.watch("reader", reader.new_page())
        html = (
            "<!doctype html><title>A blog</title>"
            f'<iframe src="{embed}" title="a game" width="640" height="560"></iframe>'
        )
        with blog(html) as address:
            page.goto(address)
            frame = page.frame_locator("iframe")
            root = frame.locator("#embed")
            expect(root).to_have_attribute("data-ready", "true")
            expect(frame.locator("#board svg")).to_be_visible()
            expect(root).to_have_attribute("data-ply", "0")

            alice.fill("#move-input", "I")
            alice.locator("#move-form button[type=submit]").click()
            expect(root).to_have_attribute("data-ply", "1")
            expect(frame.locator("#embed-status")).to_contain_text("2")  # move 2 is next

            alice.once("dialog", lambda dialog: dialog.accept())
            alice.locator("#abort-button, #resign-button").locator("visible=true").click()
            expect(root).not_to_have_attribute("data-status", "active")
            assert reader.cookies(site.url) == []
        reader.close()
        # The embed on its own passes axe as the other pages do.
        alice.goto(embed)
        expect(alice.locator("#embed")).to_have_attribute("data-ready", "true")
        assert violations(alice) == []


def test_tv_shows_a_live_game_and_goes_on_to_the_next_when_it_ends(
    browser: Browser, own_site: Site, problems: Problems
) -> None:
    """On a site of its own: no other test's games on TV."""
    site = own_site
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        name = str(alice.locator("#lobby").get_attribute("data-username"))
        for page in (alice, bob):
            page.goto("about:blank")
        games = [challenge_by_request(alice, bob, site, "diffusion") for _ in range(2)]

        viewer = problems.watch("viewer", browser.new_context().new_page())
        viewer.goto(f"{site.url}/tv/")
        tv = viewer.locator("#tv")
        shown = int(str(tv.get_attribute("data-game")))
        assert shown in games
        # Drawn from the TV socket: the game's snapshot, its board and whose move it is.
        on_tv = viewer.locator("#tv-game")
        expect(on_tv).to_have_attribute("data-status", "active")
        expect(on_tv).to_have_attribute("data-ply", "0")
        expect(viewer.locator("#board svg").first).to_be_visible()
        expect(viewer.locator("#tv-status")).to_contain_text("to play")
        assert violations(viewer) == []

        # The home page shows it too, as a picture of its position (no socket).
        home = problems.watch("home", browser.new_context().new_page())
        home.goto(f"{site.url}/")
        expect(home.locator("#featured")).to_be_visible()
        expect(home.locator("#featured-board")).to_have_attribute(
            "src", f"/games/{shown}.png?ply=0&width=360"
        )
        expect(home.locator("#featured-board")).to_have_js_property("complete", True)
        assert int(home.locator("#featured-board").evaluate("img => img.naturalWidth")) == 360
        home.context.close()

        # A player who follows alice finds her games first in the lobby, marked.
        carol = guest(browser, site, problems, "carol")
        token = next(
            c["value"] for c in carol.context.cookies(site.url) if c["name"] == "csrftoken"
        )
        followed = carol.request.post(
            f"{site.url}/api/follows",
            data=json.dumps({"user": name}),
            headers={"X-CSRFToken": token, "Content-Type": "application/json"},
        )
        assert followed.ok, followed.text()
        carol.reload()
        first = carol.locator("#live-games li").first
        expect(first).to_have_class("followed")
        expect(first.locator(".followed-mark")).to_be_visible()

        # The game on TV ends: the server pushes the other one on the same socket; the page
        # says which, and keeps the result of the one that ended.
        alice.goto(f"{site.url}/games/{shown}/")
        expect_game_live(alice)
        alice.once("dialog", lambda dialog: dialog.accept())
        alice.locator("#abort-button, #resign-button").locator("visible=true").click()
        other = next(game for game in games if game != shown)
        expect(tv).to_have_attribute("data-game", str(other))
        expect(viewer.locator("#tv-now")).to_contain_text("Next game")
        expect(viewer.locator("#tv-last")).to_contain_text("Previous game")
        expect(on_tv).to_have_attribute("data-status", "active")
        expect(viewer.locator("#tv-game-link")).to_have_attribute("href", f"/games/{other}/")

        # A channel with no game says so.
        viewer.goto(f"{site.url}/tv/zigzag/")
        expect(viewer.locator("#tv-game")).to_be_hidden()
        expect(viewer.locator("#tv-now")).not_to_be_empty()
        answer = viewer.request.get(f"{site.url}/api/tv?game=zigzag").json()
        assert answer == {"game": None}
        assert viewer.request.get(f"{site.url}/api/tv?game=chess").status == 400
