"""One player on the web page, the other by mail: each mailed move reaches the page at once,
without a reload, and the web player's moves reach the mail player as "your move" mails."""

from __future__ import annotations

import random
import re
import uuid
from pathlib import Path

import pytest

from games.rules import get_rules
from tests.browsers import Problems, Site
from tests.mail import mail_site, text_of
from tests.test_browser import api, guest, moves_of, username, wait_for_moves

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the page and the mail door, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_web_player_sees_each_move_mailed_by_the_opponent_arrive_live(
    browser: Browser, site: Site, problems: Problems, tmp_path: Path
) -> None:
    bob = f"mail{uuid.uuid4().hex[:8]}"
    address = f"{bob}@players.test"
    shared = {name: site.env[name] for name in ("REDIS_URL", "CHANNEL_LAYER_PREFIX")}
    with site.serve(), mail_site(tmp_path, database_url=site.env["DATABASE_URL"], **shared) as mail:
        assert str(mail.ask(address, f"signup {bob} {bob}-pw")["Subject"]).startswith("signup")
        alice = guest(browser, site, problems, "alice", reduced_motion="reduce")
        name = username(alice)
        options = {"pits": 4, "seeds": 3}
        api(
            alice,
            site,
            "/api/challenges",
            {"user": bob, "slug": "zigzag", "options": options, "side": "first"},
        )
        begun = mail.ask(address, f"zigzag challenge {name} {bob} -pits=4 -seeds=3")
        found = re.search(r"board (\d+)", str(begun["Subject"]))
        assert found, text_of(begun)
        board = int(found.group(1))
        # Alice's lobby page goes to the new game, as for any game.
        expect(alice.locator("#board svg")).to_be_visible()
        assert f"/games/{board}/" in alice.url

        rules = get_rules("zigzag", **options)
        rng = random.Random(3)
        mailed = 0
        told_once = False
        while True:
            state = rules.initial_state()
            for move in moves_of(alice):
                state = rules.play(state, move)
            if rules.outcome(state) is not None:
                break
            played = len(moves_of(alice))
            if rules.to_move(state) == 1:  # Alice clicks
                pits = alice.locator("g.pit.playable")
                expect(pits.first).to_be_visible()
                choices = pits.evaluate_all("ns => ns.map(n => n.dataset.pit)")
                alice.locator(f"g.pit.playable[data-pit='{rng.choice(choices)}']").click()
                wait_for_moves([alice], played + 1)
                if not told_once:
                    # Bob answers his first "your move" mail, as a mail player does: the
                    # sweeper's pass sends it, and a reply that came first would leave none
                    # to send (it is his move no longer).
                    mail.sink.wait_for(
                        lambda m: (
                            address in str(m["X-Envelope-To"])
                            and str(m["Subject"]).startswith("Your move in ZigZag")
                        )
                    )
                    told_once = True
                continue
            move = rng.choice(list(rules.legal_moves(state)))
            reply = mail.ask(address, f"zigzag move {board} {bob} {bob}-pw {move}#{played + 1}")
            assert str(reply["Subject"]).endswith(f"{bob} played {move}"), text_of(reply)
            # On Alice's page without a reload: the move in the list, then her turn.
            wait_for_moves([alice], played + 1)
            assert moves_of(alice)[-1] == move
            mailed += 1
        expect(alice.locator("#banner")).to_be_visible()
        assert mailed >= 3
        final = text_of(mail.ask(address, f"zigzag show {board}"))
        assert "Game over" in final
        # And the reverse: Alice's clicks reached Bob as "your move" mails (he has no page open).
        told = [
            m for m in mail.sink.to(address) if str(m["Subject"]).startswith("Your move in ZigZag")
        ]
        assert told, [str(m["Subject"]) for m in mail.sink.to(address)]
        assert "Traceback" not in mail.output()
