"""Chat, takebacks and draws used as people use them: two players and a spectator, each in
their own browser, clicking and typing only."""

from __future__ import annotations

import pytest

from games.engine import rules_for
from tests.browsers import Problems, Site, expect_game_live, keep_screenshot, mark_bot_account
from tests.test_browser import back_to_lobby, challenge, guest, moves_of, wait_for_moves

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres(reason="three browsers on the production shape: run once"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

PAYLOAD = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> gl'


def chat(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.locator("#chat-form button").click()


def lines(page: Page) -> list[str]:
    """Each line as its speaker and text (without the line's report link)."""
    said = page.locator("#chat-lines li").evaluate_all(
        "ns => ns.map(n => n.querySelector('strong').textContent"
        " + n.querySelector('span').textContent)"
    )
    return [str(text).strip() for text in said]


def play_first_pit(page: Page) -> None:
    pit = page.locator("g.pit.playable").first
    expect(pit).to_be_visible()
    pit.click()


def test_players_and_a_spectator_chat_take_back_and_agree_a_draw(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        carol = guest(browser, site, problems, "carol")
        game_id = challenge(alice, bob, "zigzag", {"pits": 4, "seeds": 3})
        carol.goto(f"{site.url}/games/{game_id}/")
        expect_game_live(carol)
        expect(alice.locator("#chat-room")).to_have_text("Chat with your opponent")
        expect(carol.locator("#chat-room")).to_have_text("Spectators' chat")

        # A script in a chat line is shown as the text it is, and runs nowhere.
        chat(alice, PAYLOAD)
        for page in (alice, bob):
            expect(page.locator("#chat-lines li")).to_have_count(1)
            assert lines(page)[0].endswith(PAYLOAD)
            assert page.locator("#chat-lines img, #chat-lines script").count() == 0
            assert page.evaluate("() => window.pwned") is None
        chat(carol, "nice opening")
        expect(carol.locator("#chat-lines li")).to_have_count(1)
        # Each room keeps to itself.
        bob.wait_for_timeout(300)
        assert len(lines(bob)) == 1 and len(lines(carol)) == 1
        assert "nice opening" not in " ".join(lines(alice))

        # Bob mutes Alice: her next line does not reach him.
        bob.locator("#chat-mute-box").check()
        bob.wait_for_timeout(300)
        chat(alice, "are you there?")
        expect(alice.locator("#chat-lines li")).to_have_count(2)
        bob.wait_for_timeout(500)
        assert len(lines(bob)) == 1

        # A takeback: asked by Alice after her move, accepted by Bob, seen by everyone.
        play_first_pit(alice)
        wait_for_moves([alice, bob, carol], 1)
        first = moves_of(alice)[0]
        expect(bob.locator("#takeback-button")).to_be_hidden()
        alice.locator("#takeback-button").click()
        expect(bob.locator("#offer-text")).to_contain_text("asks to take back")
        expect(carol.locator("#offer-text")).to_contain_text("asks to take back")
        expect(carol.locator("#offer-accept")).to_be_hidden()
        bob.locator("#offer-accept").click()
        for page in (alice, bob, carol):
            wait_for_moves([page], 0)
            expect(page.locator("#moves .takeback-mark")).to_have_text("↶ 1 move taken back")
            expect(page.locator("#offers")).to_be_hidden()
        play_first_pit(alice)
        wait_for_moves([alice, bob, carol], 1)
        assert moves_of(bob) == [first]

        # A draw offered and declined, then offered again and accepted.
        bob.locator("#draw-button").click()
        expect(alice.locator("#offer-text")).to_contain_text("offers a draw")
        alice.locator("#offer-decline").click()
        expect(bob.locator("#message")).to_contain_text("declined the draw offer")
        expect(bob.locator("#draw-button")).to_be_enabled()
        alice.locator("#draw-button").click()
        expect(bob.locator("#offer-text")).to_contain_text("offers a draw")
        keep_screenshot(bob, "community-draw-offer", full_page=True)
        keep_screenshot(carol, "community-spectator", full_page=True)
        bob.locator("#offer-accept").click()
        for page in (alice, bob, carol):
            expect(page.locator("#banner")).to_have_text("Draw — drawn by agreement")
            expect(page.locator("#draw-button")).to_be_hidden()

        # Diffusion cannot be drawn: no button, and the page says why.
        back_to_lobby(site, alice, bob)
        diffusion = challenge(alice, bob, "diffusion")
        assert diffusion != game_id
        expect(alice.locator("#draw-button")).to_be_hidden()
        expect(alice.locator("#no-draws")).to_contain_text("No draws in this game")


def legal_after(url: str, page: Page, game_id: int, *moves: str) -> list[str]:
    """What the server lists as legal after `moves` (the test reads the board as a player
    would; the page itself knows no rules)."""
    game = page.request.get(f"{url}/api/games/{game_id}").json()["game"]
    rules = rules_for(game["slug"], game["options"])
    state = rules.from_json(game["state"])
    for move in moves:
        state = rules.play(state, move)
    return sorted(rules.legal_moves(state))


def test_a_correspondence_player_queues_an_answer_goes_on_vacation_and_blocks_a_pest(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        game_id = challenge(alice, bob, "diffusion", time_control="3d")
        expect(alice.locator("#queue-form")).to_be_hidden()  # her move: no queue
        play_first_pit(alice)
        wait_for_moves([alice, bob], 1)

        # Alice queues "if bob plays X, answer Y" while Bob thinks.
        expected = legal_after(site.url, alice, game_id)[0]
        answer = legal_after(site.url, alice, game_id, expected)[0]
        expect(alice.locator("#queue-form")).to_be_visible()
        alice.fill("#queue-input", f"{expected.lower()} {answer}")
        alice.locator("#queue-form button[type=submit]").click()
        expect(alice.locator("#queue-now")).to_have_text(f"Queued: if {expected}, then {answer}.")
        expect(bob.locator("#queue-now")).to_have_text("Nothing queued.")
        bob.locator(f"g.pit.playable[data-pit='{expected}']").click()
        wait_for_moves([alice, bob], 3)
        assert moves_of(bob)[-2:] == [expected, answer]
        expect(alice.locator("#queue-now")).to_have_text("Nothing queued.")

        # Alice goes on vacation from her profile: the game's clocks stand still.
        name = alice.locator("body").get_attribute("data-username")
        alice.goto(f"{site.url}/@{name}/")
        alice.fill("#vacation-days", "3")
        alice.locator("#vacation-start").click()
        expect(alice.locator("#vacation-status")).to_contain_text("On vacation until")
        expect(bob.locator("#time-control")).to_contain_text("clocks paused (vacation)")
        alice.locator("#vacation-end").click()
        expect(alice.locator("#vacation-start")).to_be_visible()

        # Bob blocks Alice from her profile: her chat lines no longer reach him.
        bob.goto(f"{site.url}/@{name}/")
        bob.locator("#block-button").click()
        expect(bob.locator("#block-button")).to_have_text(f"Unblock {name}")
        bob.goto(f"{site.url}/games/{game_id}/")
        alice.goto(f"{site.url}/games/{game_id}/")
        expect_game_live(bob)
        chat(alice, "still there?")
        expect(alice.locator("#chat-lines li")).to_have_count(1)
        bob.wait_for_timeout(500)
        assert lines(bob) == []


def test_a_follower_hears_when_a_player_starts_a_game_and_when_it_ends(
    browser: Browser,
    site: Site,
    problems: Problems,
) -> None:
    with site.serve():
        alice = guest(browser, site, problems, "alice")
        bob = guest(browser, site, problems, "bob")
        carol = guest(browser, site, problems, "carol")
        name = alice.locator("body").get_attribute("data-username")
        carol.goto(f"{site.url}/@{name}/")
        carol.locator("#follow-button").click()
        expect(carol.locator("#follow-button")).to_have_text("Unfollow")
        carol.goto(f"{site.url}/live/")
        game_id = challenge(alice, bob, "diffusion")
        news = carol.locator("#notices .notice", has_text=f"{name} started Diffusion")
        expect(news).to_be_visible()
        news.get_by_role("link", name="Watch").click()
        expect(carol).to_have_url(f"{site.url}/games/{game_id}/")
        carol.locator("#follow-button").click()
        expect(carol.locator("#follow-button")).to_have_text("Unfollow")
        carol.goto(f"{site.url}/live/")
        # Bob counts as a bot account from here: the news of the end marks his name BOT.
        bob_name = bob.locator("body").get_attribute("data-username")
        mark_bot_account(site, str(bob_name))
        play_first_pit(alice)
        wait_for_moves([alice, bob], 1)
        play_first_pit(bob)
        wait_for_moves([alice, bob], 2)
        alice.once("dialog", lambda dialog: dialog.accept())
        alice.locator("#resign-button").click()
        ended = carol.locator("#notices .notice", has_text=f"Diffusion #{game_id} is over")
        expect(ended).to_contain_text(f"{bob_name} BOT won")
        expect(ended.locator("abbr.bot-mark")).to_have_attribute("title", "bot account")
