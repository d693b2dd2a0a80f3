"""A push notice reaching a player who is not looking at the game, in Chromium: the profile
page registers the service worker and subscribes, the opponent moves, the server's sweeper
pushes the notice to a push service, and the page's service worker shows it.

Headless Chromium cannot reach a browser vendor's push service (nor receive from one), so
two things stand in for the vendor: the push service is tests/pushservice.py on this
machine (it checks the site's VAPID signature and decrypts the notice with the browser's
key, as FCM or autopush and the browser would), and the page's init script makes
PushManager.subscribe answer with a subscription to that service, with the keys the test
made for this browser. What the service decrypted is handed to the page's service worker
through the Chrome DevTools Protocol (ServiceWorker.deliverPushMessage), as the vendor's
connection would hand it over; everything else is the site's own code."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.browsers import WHOLE_CHROMIUM, Problems, Site, keep_screenshot, launched, sweeper
from tests.pushservice import PushService
from tests.servers import migrated_scratch_database
from tests.test_browser import api, guest, username

pytestmark = [pytest.mark.browser, pytest.mark.redis]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The whole Chromium: the headless shell the other browser tests use shows no service
    worker's notifications."""
    with launched(WHOLE_CHROMIUM) as chromium:
        yield chromium


# Stands in for the browser vendor's push service (see the module's docstring): the
# subscription the page gets is to the test's push service, with the test's keys.
FAKE_SUBSCRIBE = """
(subscription) => {
  let held = null;
  PushManager.prototype.subscribe = async function (options) {
    window.pushSubscribedWith = Array.from(new Uint8Array(options.applicationServerKey));
    held = {
      endpoint: subscription.endpoint,
      expirationTime: null,
      options,
      toJSON: () => subscription,
      unsubscribe: async () => { held = null; return true; },
    };
    return held;
  };
  PushManager.prototype.getSubscription = async function () { return held; };
}
"""

NOTIFICATIONS = """async () => {
  const registration = await navigator.serviceWorker.ready;
  return (await registration.getNotifications()).map((n) => ({
    title: n.title, body: n.body, tag: n.tag, lang: n.lang, data: n.data, icon: n.icon,
  }));
}"""
REDELIVER_SECONDS = 5.0
# Started and left running: window.seenNotifications holds the first non-empty answer.
WATCH_NOTIFICATIONS = f"""() => {{
  window.seenNotifications = null;
  const ask = {NOTIFICATIONS};
  (async () => {{
    const until = Date.now() + {TIMEOUT_MS};
    while (!window.seenNotifications && Date.now() < until) {{
      const found = await ask();
      if (found.length) window.seenNotifications = found;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }}
  }})();
}}"""


@pytest.fixture
def push_site(tmp_path: Path) -> Iterator[Site]:
    """A server of the test's own, which sends to push services on this machine."""
    with migrated_scratch_database(tmp_path) as database_url:
        yield Site(tmp_path, database_url, PUSH_SERVICES="http://127.0.0.1:*")


def registration_id(page: Page) -> str:
    """The service worker registration of the page's origin, as DevTools knows it."""
    cdp = page.context.new_cdp_session(page)
    found: dict[str, str] = {}

    def updated(event: dict[str, Any]) -> None:
        for registration in event["registrations"]:
            if registration["scopeURL"].rstrip("/") == page.url.split("/@")[0].rstrip("/"):
                found["id"] = registration["registrationId"]

    cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 10
    while "id" not in found and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert "id" in found, "the page registered no service worker"
    page.cdp = cdp  # type: ignore[attr-defined]
    return found["id"]


def legal_move(page: Page, site: Site, game_id: int) -> tuple[str, int]:
    snapshot = page.request.get(f"{site.url}/api/games/{game_id}").json()
    return sorted(snapshot["game"]["legal_moves"])[0], int(snapshot["game"]["ply"])


def test_the_opponents_move_reaches_a_player_on_another_page_as_a_notification(
    browser: Browser, push_site: Site, problems: Problems
) -> None:
    site = push_site
    with (
        site.serve(),
        sweeper(site),
        PushService(settings.VAPID_PUBLIC_KEY) as service,
    ):
        alice = guest(browser, site, problems, "alice", permissions=["notifications"])
        bob = guest(browser, site, problems, "bob")
        opponent, me = username(bob), username(alice)
        phone = service.browser("alice-chromium")
        alice.context.add_init_script(
            script=f"({FAKE_SUBSCRIBE})({json.dumps(phone.subscription())})"
        )
        made = api(
            alice,
            site,
            "/api/challenges",
            {
                "user": opponent,
                "slug": "zigzag",
                "options": {"pits": 4, "seeds": 3},
                "side": "first",
            },
        )
        game_id = int(
            api(bob, site, f"/api/challenges/{made['challenge']['id']}/accept")["game_id"]
        )
        for page in (alice, bob):  # the lobby takes both to the game
            page.wait_for_url(re.compile(rf"/games/{game_id}/$"), timeout=TIMEOUT_MS)

        # Alice goes to her profile and turns notices on for this browser.
        alice.goto(f"{site.url}/@{me}/#push-form")
        form = alice.locator("#push-form")
        expect(form).to_have_attribute("data-ready", "true")
        expect(alice.locator("#push-state")).to_have_text("Notices are off in this browser.")
        alice.locator("#push-on").click()
        expect(alice.locator("#push-state")).to_have_text("Notices are on in this browser.")
        expect(form).to_have_attribute("data-subscribed", "true")
        for kind in ("move_correspondence", "move_realtime", "challenge", "offer"):
            expect(alice.locator(f"#push-kind-{kind}")).to_be_checked()
        assert alice.evaluate("() => window.pushSubscribedWith") == list(
            base64url(settings.VAPID_PUBLIC_KEY)
        )
        keep_screenshot(form, "push-settings")
        worker = registration_id(alice)
        assert (
            alice.evaluate("async () => (await navigator.serviceWorker.ready).scope")
            == f"{site.url}/"
        )

        # The players move; alice's page is not the game's.
        first, _ = legal_move(alice, site, game_id)
        api(alice, site, f"/api/games/{game_id}/move", {"move": first, "ply": 0})
        reply, ply = legal_move(bob, site, game_id)
        moved = time.monotonic()
        api(bob, site, f"/api/games/{game_id}/move", {"move": reply, "ply": ply})
        pushed = service.next(timeout=15)
        at_service = pushed.at - moved
        assert service.refusals == []
        assert pushed.browser == "alice-chromium"
        assert pushed.payload["title"] == f"Your move against {opponent}"

        # The page watches for the notice from before it is pushed, asking every few
        # milliseconds in the page itself and keeping the first answer that has one: asked
        # from here every 50 ms, a notice Chromium let go again soon was missed on a busy
        # machine (three times in some thirty runs).
        alice.evaluate(WATCH_NOTIFICATIONS)
        # The vendor's connection hands the decrypted push to the browser's service worker,
        # again if nothing was shown after a while, as a push service delivers a message
        # again until its time to live runs out: once in some twenty runs on a busy machine
        # the worker never had the first one (the notice has a tag, so a second delivery
        # replaces the first notice, never adds one).
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        notifications = None
        while not notifications:
            assert time.monotonic() < deadline, "the service worker showed no notice"
            alice.cdp.send(  # type: ignore[attr-defined]
                "ServiceWorker.deliverPushMessage",
                {"origin": site.url, "registrationId": worker, "data": json.dumps(pushed.payload)},
            )
            again = min(deadline, time.monotonic() + REDELIVER_SECONDS)
            while not (notifications := alice.evaluate("() => window.seenNotifications")):
                if time.monotonic() > again:
                    break
                time.sleep(0.05)
        shown = time.monotonic() - moved
        [notification] = notifications
        assert notification["title"] == f"Your move against {opponent}"
        assert (
            notification["body"] == f"{opponent} has moved in ZigZag (pits 4, seeds 3) #{game_id}."
        )
        assert notification["tag"] == f"game-{game_id}"
        assert notification["lang"] == "en"
        assert notification["data"] == {
            "url": f"{site.url}/games/{game_id}/",
            "kind": "move_correspondence",
        }
        assert re.search(r"/static/img/icon-192(\.[0-9a-f]+)?\.png$", notification["icon"])
        print(
            f"\npush delivery: move -> at the push service {at_service * 1000:.0f} ms, "
            f"-> notification shown {shown * 1000:.0f} ms "
            "(sweeper passes at most 0.2 s apart here, 1 s under make run)"
        )

        # Turning notices off forgets this browser on the server too.
        alice.locator("#push-off").click()
        expect(alice.locator("#push-state")).to_have_text("Notices are off in this browser.")
        assert api_get(alice, site, "/api/push/kinds")["browsers"] == 0


def api_get(page: Page, site: Site, path: str) -> Any:
    response = page.request.get(site.url + path)
    assert response.ok, (path, response.status)
    return response.json()


def base64url(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
