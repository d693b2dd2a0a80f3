"""The game database as a player meets it: a game just resigned is on /games/ at once, the
form narrows the list (a player, a result), a game's link replays it, and the download link
gives the search's records. Once counted (`manage.py explorer`, as an operator catches up),
the replay and the analysis board show the opening explorer at the position shown."""

from __future__ import annotations

import json

import pytest

from tests.browsers import Problems, Site, expect_game_live, manage_on_site
from tests.test_browser import challenge_by_request, guest
from tests.test_browser_access import label_not_in_name, violations

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages in the browser, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)


def test_a_resigned_game_is_found_by_the_form_replayed_and_downloaded(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        name = str(alice.locator("#lobby").get_attribute("data-username"))
        for page in (alice, bob):
            page.goto("about:blank")  # off the site: its pages go to a new game by themselves
        game_id = challenge_by_request(alice, bob, site, "diffusion")
        for page in (alice, bob):
            page.goto(f"{site.url}/games/{game_id}/")
            expect_game_live(page)
        for page, move, ply in ((alice, "I", 1), (bob, "A", 2)):
            page.fill("#move-input", move)
            page.locator("#move-form button[type=submit]").click()
            expect(alice.locator("#moves .move-link")).to_have_count(ply)
        alice.once("dialog", lambda dialog: dialog.accept())
        alice.locator("#resign-button").click()
        expect(alice.locator("#banner")).to_be_visible()

        # From her profile to the database, her games only.
        alice.goto(f"{site.url}/@{name}/")
        alice.locator("#profile-game-database").click()
        expect(alice.locator("#search-player")).to_have_value(name)
        row = alice.locator(f"#games-found tr[data-game='{game_id}']")
        expect(row).to_contain_text("0\u20131")  # "0, en dash, 1": the second won
        # She lost it: asking for her wins finds nothing; her losses find it.
        alice.select_option("#search-result", "win")
        alice.locator("#games-search button[type=submit]").click()
        expect(alice.locator("#search-empty")).to_be_visible()
        alice.select_option("#search-result", "loss")
        alice.locator("#games-search button[type=submit]").click()
        expect(row).to_be_visible()
        assert "result=loss" in alice.url and f"player={name}" in alice.url

        # The download is the search's records, one a line.
        export = alice.locator("#export-json").get_attribute("href")
        assert export is not None
        answer = alice.request.get(site.url + export)
        assert answer.ok
        [record] = [json.loads(line) for line in answer.text().splitlines()]
        assert record["id"] == game_id and record["result"]["termination"] == "resignation"
        assert [move["move"] for move in record["moves"]] == ["I", "A"]

        # A bad search says what is wrong; the link replays the game.
        alice.fill("#search-min-plies", "many")
        alice.locator("#games-search button[type=submit]").click()
        expect(alice.locator("#search-error")).to_contain_text("min_plies")
        alice.fill("#search-min-plies", "")
        alice.locator("#games-search button[type=submit]").click()
        row.locator("a").first.click()
        alice.wait_for_url(f"{site.url}/games/{game_id}/")
        expect(alice.locator("#moves .move-link")).to_have_count(2)

        # The opening explorer beside the replay: the first move, marked as this game's, with
        # the counts the API gives (the site is shared: other tests' games count too).
        manage_on_site(site, "explorer")

        def counted(ply: int) -> dict[str, int]:
            answer = alice.request.get(f"{site.url}/api/explorer?game_id={game_id}&ply={ply}")
            return {move["move"]: move["games"] for move in answer.json()["moves"]}

        alice.locator("#first-button").click()
        explorer = alice.locator("#explorer")
        expect(explorer).to_be_visible()
        played = explorer.locator("tbody tr.played")
        expect(played).to_have_count(1)
        expect(played.locator("th")).to_contain_text("I")
        expect(played.locator("td").first).to_have_text(str(counted(0)["I"]))
        assert counted(0)["I"] >= 1
        expect(explorer.locator("tbody tr")).to_have_count(len(counted(0)))
        # Checked once the explorer has its answer: while it asks, its rows are dimmed.
        expect(explorer).to_have_attribute("data-loading", "false")
        assert violations(alice) == [] and label_not_in_name(alice) == []
        alice.locator("#next-button").click()
        expect(played.locator("th")).to_contain_text("A")
        expect(played.locator("td").first).to_have_text(str(counted(1)["A"]))
        alice.locator("#next-button").click()  # the end: what others played from there
        if counted(2):
            expect(explorer.locator("tbody tr")).to_have_count(len(counted(2)))
        else:
            expect(explorer.locator(".explorer-status")).not_to_be_empty()

        # A link to one moment of the game opens there, and browsing keeps the address.
        alice.goto(f"{site.url}/games/{game_id}/?ply=1")
        expect(played.locator("th")).to_contain_text("A")  # after I: bob's A comes next
        alice.locator("#first-button").click()
        expect(played.locator("th")).to_contain_text("I")
        assert alice.url.endswith("?ply=0")
        # The picture link names the moment shown; its picture is that position's.
        picture = alice.locator("#picture-link")
        expect(picture).to_have_attribute("href", f"{site.url}/games/{game_id}.png?ply=0")
        drawn = alice.request.get(str(picture.get_attribute("href")))
        assert drawn.ok and drawn.headers["content-type"] == "image/png"
        assert drawn.body() == alice.request.get(f"{site.url}/games/{game_id}.png?ply=0").body()

        # On the analysis board (opened at the start, shown now), a move of the explorer is
        # played onto the board.
        alice.locator("#analyse-button").click()
        alice.wait_for_url("**/analysis/*/")
        alice.locator("#explorer .explorer-move", has_text="I").click()
        expect(alice.locator("#line-text")).to_have_value("1. I")
        expect(alice.locator("#explorer .explorer-move", has_text="A")).to_be_visible()
        # Checked once the explorer has its answer: while it asks, its rows are dimmed.
        expect(explorer).to_have_attribute("data-loading", "false")
        assert violations(alice) == [] and label_not_in_name(alice) == []
        # A band no game was played in: nothing, and the filter is kept for the next page.
        alice.locator("#explorer summary").click()
        alice.locator("#explorer input[name=ratings][value='2200']").check()
        expect(alice.locator("#explorer .explorer-move")).to_have_count(0)
        expect(alice.locator("#explorer .explorer-status")).not_to_be_empty()
