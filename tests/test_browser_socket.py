"""The pages' shared websocket (static/js/socket.js) in a real browser: a page whose socket
drops comes back on its own, resumes from the version it has seen without reloading, and
spaces its tries with a random share so that pages dropped together do not return together.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from typing import Any

import pytest

from tests.browsers import Problems, Site, expect_game_live
from tests.test_browser import challenge, guest, wait_for_moves

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page's socket, not the database, is under test: run once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - test_browser.py says how to install it
    pytest.skip("Playwright is missing", allow_module_level=True)

# Every socket a page opens is recorded (address and time); while `__refuse` is set, a new
# socket is closed before it connects, as if the server were out of reach.
RECORD_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.__refuse = false;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      const entry = { url: String(url), at: performance.now(), socket: this };
      window.__sockets.push(entry);
      this.addEventListener("open", () => { entry.openedAt = performance.now(); });
      this.addEventListener("close", (event) => {
        entry.closed = event.code;
        entry.closedAt = performance.now();
      });
      if (window.__refuse) this.close();
      if (window.__muteNext) this.__muted = true;  // MUTE_SOCKETS: silent from the start
    }
  };
})();
"""


def sockets(page: Page, path: str = "/ws/games/") -> list[dict[str, Any]]:
    """The page's sockets to `path` (a signed-in user's page has a news socket too)."""
    entries = page.evaluate("window.__sockets.map(({ url, at }) => ({ url, at }))")
    return [entry for entry in entries if path in entry["url"]]


def test_a_game_page_whose_socket_drops_catches_up_from_its_version_without_reloading(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        bob.context.add_init_script(RECORD_SOCKETS)
        challenge(alice, bob, "diffusion")
        alice.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 1)
        bob.evaluate("window.__marker = 'same page'")

        # Bob's socket drops, and his tries fail, while Alice asks for a takeback and writes.
        bob.evaluate(
            """() => {
                window.__refuse = true;
                window.__sockets.findLast(({ url }) => url.includes("/ws/games/")).socket.close();
            }"""
        )
        expect(bob.locator("#connection")).to_have_attribute(
            "data-state", re.compile("closed|connecting")
        )
        alice.locator("#takeback-button").click()
        expect(alice.locator("#offers")).to_be_visible()
        alice.fill("#chat-input", "back soon?")
        alice.locator("#chat-form button[type=submit]").click()
        expect(alice.locator("#chat-lines")).to_contain_text("back soon?")
        assert bob.locator("#offers").is_hidden()

        # The next try connects: it names the version and chat line seen, and the server
        # sends only what was missed.
        bob.evaluate("window.__refuse = false")
        expect_game_live(bob)
        expect(bob.locator("#offers")).to_be_visible()
        expect(bob.locator("#offer-text")).to_contain_text("asks to take back")
        expect(bob.locator("#chat-lines")).to_contain_text("back soon?")
        assert re.search(r"/ws/games/\d+/\?v=\d+&chat=\d+$", sockets(bob)[-1]["url"])
        assert bob.evaluate("window.__marker") == "same page"

        bob.locator("#offer-accept").click()
        wait_for_moves([alice, bob], 0)


def test_pages_dropped_together_space_their_tries_by_a_random_share(
    browser: Browser,
    own_site: Site,
    problems: Problems,
) -> None:
    site = own_site  # it is stopped under the pages
    # Two spectators whose random numbers are the lowest and the highest there are: the
    # backoff doubles for both, but the one's waits are three quarters of the base and the
    # other's five quarters (without the random share they would be equal).
    pages = {}
    # Killed, not stopped: a stopping server would ask its pages to move first.
    with site.serve(stop_signal=signal.SIGKILL):
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        game_id = challenge(alice, bob, "diffusion")
        for name, draw in (("low", 0), ("high", 0.999999)):
            context = browser.new_context()
            context.add_init_script(RECORD_SOCKETS + f"Math.random = () => {draw};")
            page = problems.watch(name, context.new_page())
            page.goto(f"{site.url}/games/{game_id}/")
            expect_game_live(page)
            pages[name] = page
    # The server is gone: each page tries again, and again, further apart each time.
    waits = {}
    for name, page in pages.items():
        page.wait_for_function("() => window.__sockets.length >= 4", timeout=20_000)
        times = [entry["at"] for entry in sockets(page)]
        # From the first try after the drop: the waits of 1 and 2 seconds, before the share.
        waits[name] = (times[2] - times[1]) + (times[3] - times[2])
    assert waits["low"] < 2_700, waits  # 2250 ms and what the failed tries took
    assert waits["high"] > 3_300, waits  # 3750 ms


# The page's connection states, as they change (#connection's data-state).
RECORD_STATES = """
document.addEventListener("DOMContentLoaded", () => {
  const node = document.getElementById("connection");
  if (!node) return;
  window.__states = [];
  new MutationObserver(() => window.__states.push(node.dataset.state)).observe(node, {
    attributes: true,
    attributeFilter: ["data-state"],
  });
});
"""


def test_a_server_restart_moves_the_page_to_the_new_server_without_a_notice(
    browser: Browser,
    own_site: Site,
    problems: Problems,
) -> None:
    site = own_site
    # A window of many seconds for these few sockets (16 s for four; at most 18 s with this
    # grace): the new server is up before it ends even on a loaded machine, where starting one
    # took over 8 s (a page that tries before it is up tries again, within the window).
    site.env["RESTART_MOVES_PER_SECOND"] = "0.25"
    site.env["SHUTDOWN_GRACE_SECONDS"] = "30"
    old = site.serve()
    server = old.__enter__()
    try:
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        # Bob's page moves in the middle of the window (at 0.6 x 80% of it), and tries again
        # until it ends if the new server is not up yet.
        bob.context.add_init_script(RECORD_SOCKETS + RECORD_STATES + "Math.random = () => 0.6;")
        challenge(alice, bob, "diffusion")
        expect_game_live(bob)
        bob.evaluate("window.__states = []")

        # A deploy: the server is told to stop; it takes no new connections at once, and a
        # new one starts on the same address (as behind the proxy, another process).
        server.process.send_signal(signal.SIGTERM)
        bob.wait_for_timeout(300)
        with site.serve():
            bob.wait_for_function(
                "() => window.__sockets.filter(({ url }) => url.includes('/ws/games/'))"
                ".length >= 2",
                timeout=30_000,
            )
            expect_game_live(bob)
            # The old server is gone once its pages moved; play goes on on the new one.
            server.process.wait(timeout=30)
            alice.locator("g.pit.playable").first.click()
            wait_for_moves([alice, bob], 1)
            states = bob.evaluate("window.__states")
            moved_to = sockets(bob)[-1]["url"]
            game_sockets = bob.evaluate(
                """window.__sockets.filter(({ url }) => url.includes('/ws/games/'))
                    .map(({ closed, closedAt, openedAt }) => ({ closed, closedAt, openedAt }))"""
            )
            old_socket, new_socket = game_sockets[0], game_sockets[-1]
    finally:
        old.__exit__(None, None, None)
    # Bob's page never showed anything but "open": no "connecting…", no "reconnecting…".
    assert set(states) <= {"open"}, states
    # It moved from the version it had, with its new socket open before it closed the old one
    # itself (1000: not the server's 1012, which a page that ignored the notice would get).
    assert re.search(r"/ws/games/\d+/\?v=\d+", moved_to), moved_to
    assert old_socket["closed"] == 1000, old_socket
    assert new_socket["openedAt"] <= old_socket["closedAt"], (old_socket, new_socket)


# A socket whose path went dead without a close (its server's host cut off behind the
# proxy): once `__muted` is set on it, nothing it receives reaches the page and nothing the
# page sends on it leaves.
MUTE_SOCKETS = """
(() => {
  const proto = window.WebSocket.prototype;
  const send = proto.send;
  proto.send = function (data) {
    if (!this.__muted) send.call(this, data);
  };
  const listen = proto.addEventListener;
  proto.addEventListener = function (type, listener, options) {
    if (type !== "message") return listen.call(this, type, listener, options);
    return listen.call(this, type, (event) => this.__muted || listener(event), options);
  };
})();
"""


def mute_game_socket_while(
    page: Page, act: Callable[[], object], *, new_sockets: int, timeout: int
) -> None:
    """Silence the page's game socket, `act`, and wait until it has dialled `new_sockets` more."""
    count = len(sockets(page))
    page.evaluate(
        """window.__sockets.findLast(({ url }) => url.includes("/ws/games/"))
            .socket.__muted = true"""
    )
    act()
    page.wait_for_function(
        f"() => window.__sockets.filter(({{ url }}) => url.includes('/ws/games/'))"
        f".length >= {count + new_sockets}",
        timeout=timeout,
    )


def test_a_page_whose_socket_goes_silent_gives_it_up_and_resumes_on_a_new_one(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        bob.context.add_init_script(RECORD_SOCKETS + MUTE_SOCKETS)
        challenge(alice, bob, "diffusion")
        expect_game_live(bob)
        # Alice moves into the silence: Bob's page hears nothing, and its ping goes nowhere.
        mute_game_socket_while(
            bob,
            lambda: alice.locator("g.pit.playable").first.click(),
            new_sockets=1,
            timeout=20_000,
        )
        # The new socket names the version the page has: the server sends the missed move.
        assert re.search(r"/ws/games/\d+/\?v=\d+", sockets(bob)[-1]["url"])
        wait_for_moves([alice, bob], 1)
        expect_game_live(bob)
        # And play goes on over it.
        bob.locator("g.pit.playable").first.click()
        wait_for_moves([alice, bob], 2)
        # Silent again, and so is the socket that replaces it (a live server too busy to
        # answer): the second in a row is given twice as long, 3 s and then 4 s.
        bob.evaluate("window.__muteNext = true")
        mute_game_socket_while(
            bob,
            lambda: alice.locator("g.pit.playable").first.click(),
            new_sockets=2,
            timeout=30_000,
        )
        bob.evaluate("window.__muteNext = false")
        second = bob.evaluate(
            """(() => {
                const games = window.__sockets.filter(({ url }) => url.includes("/ws/games/"));
                const entry = games[games.length - 2];
                return { openedAt: entry.openedAt, closedAt: entry.closedAt,
                         next: games[games.length - 1].at };
            })()"""
        )
        # Given up (the next socket dialled) no sooner than 3 + 4 s after it opened.
        assert second["next"] - second["openedAt"] >= 6_500, second
        wait_for_moves([alice, bob], 3)
        expect_game_live(bob)
        # Bob moves into a silent socket: the move is lost with it, and the page sends it
        # again on the next one. Nobody clicks twice.
        mute_game_socket_while(
            bob,
            lambda: bob.locator("g.pit.playable").first.click(),
            new_sockets=1,
            timeout=20_000,
        )
        wait_for_moves([alice, bob], 4)
        expect(bob.locator("#message")).not_to_have_attribute("data-kind", "error")
