"""Bot accounts (docs/API.md, "Bot accounts"): the upgrade of an account without games, the
"BOT" mark wherever a name is shown, the bots' own standings, the seek pool that keeps bots
and people apart unless a person asks, the cap on a bot's games at once, tournaments that
allow bots, and the moderators' revoking of a user's tokens."""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounts import bot_accounts, tokens
from accounts.models import ApiToken, User
from bots import services as computer
from games import selectors as game_selectors
from games import services
from games.models import Game
from lobby import matching, payloads
from lobby import selectors as lobby_selectors
from lobby.models import Challenge, Seek
from lobby.services import challenges, seeks
from moderation import actions
from moderation.models import Action, Notice
from realtime.errors import ServiceError
from tests.games_helpers import make_user
from tests.test_live_postgres import race
from tournaments.models import Tournament
from tournaments.services import creation, entries

pytestmark = pytest.mark.django_db
DIFFUSION = [{"slug": "diffusion", "options": {}}]
MARK = re.compile(r'<abbr class="bot-mark" title="bot account">BOT</abbr>')


def make_bot(name: str) -> User:
    user = make_user(name)
    return bot_accounts.upgrade(user=user)


def program(secret: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def upgrade_over_http(user: User, scopes: tuple[str, ...] = ("bot",)) -> Any:
    _row, secret = tokens.create_token(user=user, name="engine", scopes=scopes)
    return program(secret).post("/api/bot/account/upgrade", content_type="application/json")


def refused(code: str, call: Callable[[], Any]) -> None:
    with pytest.raises(ServiceError) as caught:
        call()
    assert caught.value.code == code, caught.value.message


# --- the upgrade ----------------------------------------------------------------------------


def _active_game(user: User) -> None:
    services.create_game(slug="diffusion", options={}, player1=user, player2=make_user("other"))


def _finished_game(user: User) -> None:
    game = services.create_game(
        slug="diffusion", options={}, player1=make_user("other"), player2=user
    )
    services.resign(game_id=game.pk, user=user)


def _aborted_game(user: User) -> None:
    game = services.create_game(
        slug="diffusion", options={}, player1=user, player2=make_user("other")
    )
    services.abort(game_id=game.pk, user=user)


def _computer_game(user: User) -> None:
    computer.play_computer(user=user, slug="diffusion", options={}, level=1, side="first")


@pytest.mark.parametrize(
    ("history", "status", "code"),
    [
        (None, 200, None),
        (_active_game, 409, "has_games"),
        (_finished_game, 409, "has_games"),
        (_aborted_game, 409, "has_games"),
        (_computer_game, 409, "has_games"),
    ],
)
def test_only_an_account_that_never_had_a_game_becomes_a_bot(
    history: Callable[[User], None] | None, status: int, code: str | None
) -> None:
    user = make_user("engine")
    if history is not None:
        history(user)
    answer = upgrade_over_http(user)
    assert answer.status_code == status, answer.content
    user.refresh_from_db()
    if code is None:
        assert answer.json()["ok"] is True and answer.json()["is_bot_account"] is True
        assert user.is_bot_account and not user.is_bot
    else:
        assert answer.json()["error"]["code"] == code
        assert user.bot_since is None


def test_upgrading_twice_answers_ok_and_keeps_the_first_date() -> None:
    user = make_user("engine")
    _row, secret = tokens.create_token(user=user, name="engine", scopes=["bot"])
    first = program(secret).post("/api/bot/account/upgrade").json()
    second = program(secret).post("/api/bot/account/upgrade").json()
    assert first["ok"] and second["ok"] and first["bot_since"] == second["bot_since"]
    # For good: the bot no longer seeks with a person's scopes, only with `bot`.
    _row, person = tokens.create_token(user=user, name="p", scopes=["challenge"])
    answer = program(person).post(
        "/api/seeks", {"games": DIFFUSION}, content_type="application/json"
    )
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "missing_scope"


@pytest.mark.parametrize(
    ("scopes", "status", "code"),
    [(("play", "challenge", "read"), 403, "missing_scope"), (("bot",), 200, None)],
)
def test_the_upgrade_needs_the_bot_scope(
    scopes: tuple[str, ...], status: int, code: str | None
) -> None:
    user = make_user("engine")
    answer = upgrade_over_http(user, scopes)
    assert answer.status_code == status, answer.content
    if code:
        assert answer.json()["error"]["code"] == code
    user.refresh_from_db()
    assert user.is_bot_account == (code is None)


def test_a_browser_session_cannot_upgrade_without_a_token() -> None:
    user = make_user("engine")
    browser = Client()
    browser.force_login(user)
    answer = browser.post("/api/bot/account/upgrade")
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "missing_scope"
    user.refresh_from_db()
    assert not user.is_bot_account


@pytest.mark.parametrize(
    "make",
    [
        lambda: User.objects.create(username="Guest-abcdef", is_guest=True),
        lambda: User.objects.create(username="computer-x", is_bot=True),
        lambda: User.objects.create(username="gone", closed_at=timezone.now()),
    ],
    ids=["guest", "the computer", "closed"],
)
def test_guests_the_computer_and_closed_accounts_are_not_registered(
    make: Callable[[], User],
) -> None:
    user = make()
    refused("not_registered", lambda: bot_accounts.upgrade(user=user))
    user.refresh_from_db()
    assert user.bot_since is None


# --- marked wherever a name is shown ------------------------------------------------------


def test_the_game_snapshot_and_the_lobbys_frames_say_who_is_a_bot_account() -> None:
    bot, alice = make_bot("engine"), make_user("alice")
    game = services.create_game(slug="diffusion", options={}, player1=alice, player2=bot)
    players = game_selectors.snapshot(Game.objects.get(pk=game.pk))["players"]
    assert (players["1"]["is_bot_account"], players["2"]["is_bot_account"]) == (False, True)
    assert (players["1"]["is_bot"], players["2"]["is_bot"]) == (False, False)
    assert payloads.game_summary(game).bot_accounts == ["2"]

    seek, _game = seeks.create_seek(user=bot, games=DIFFUSION, time_control="5+3")
    view = payloads.seek_payload(Seek.objects.select_related("user").get(pk=seek.pk))
    assert (view.user_is_bot_account, view.bots) == (True, False)
    made = challenges.create_challenge(challenger=alice, challenged="engine", slug="diffusion")
    challenge_view = payloads.challenge_payload(made)
    assert (challenge_view.challenger_is_bot_account, challenge_view.challenged_is_bot_account) == (
        False,
        True,
    )
    mine = lobby_selectors.snapshot(bot)
    assert mine.user is not None and mine.user.is_bot_account
    assert mine.challenges.incoming[0].challenged_is_bot_account
    assert [live.bot_accounts for live in lobby_selectors.live_games()] == [["2"]]


def test_the_pages_mark_a_bot_accounts_name_and_a_persons_not() -> None:
    bot, alice = make_bot("engine"), make_user("alice")
    services.create_game(slug="diffusion", options={}, player1=alice, player2=bot)
    browser = Client()
    profile = browser.get("/@engine/").content.decode()
    assert MARK.search(profile.split('id="profile-name"')[1].split("</h1>")[0])
    assert 'id="bot-account-note"' in profile
    assert not MARK.search(browser.get("/@alice/").content.decode().split("</h1>")[0])
    # alice's profile lists her game against the bot, marked.
    assert MARK.search(browser.get("/@alice/").content.decode())
    live = browser.get("/live/").content.decode()
    assert len(MARK.findall(live)) == 1
    lobby = browser.get("/").content.decode()
    assert 'id="seek-bots"' not in lobby  # the seek form is for those who may seek
    alice_browser = Client()
    alice_browser.force_login(alice)
    assert 'id="seek-bots"' in alice_browser.get("/").content.decode()


# --- seeks: bots meet bots, and people who asked for them -------------------------------


def view(seek_id: int, user_id: int, *, bot: bool = False, bots: bool = False) -> Any:
    return matching.SeekView(
        seek_id=seek_id,
        user_id=user_id,
        games=(matching.GameChoice.of("diffusion", {}),),
        bot_account=bot,
        bots=bots,
    )


@pytest.mark.parametrize(
    ("older", "newer", "pairs"),
    [
        ({}, {}, True),  # two people
        ({"bot": True}, {"bot": True}, True),  # two bots
        ({"bot": True}, {}, False),  # a bot and a person who did not ask
        ({}, {"bot": True}, False),
        ({"bot": True}, {"bots": True}, True),  # a person who asked for bots
        ({"bots": True}, {"bot": True}, True),
        ({"bots": True}, {}, True),  # asking for bots does not keep people away
        ({"bot": True, "bots": True}, {}, False),  # a bot's own "bots" changes nothing
    ],
)
def test_matching_keeps_bots_and_people_apart_unless_the_person_asks(
    older: dict[str, bool], newer: dict[str, bool], pairs: bool
) -> None:
    found = matching.shared_game(view(1, 1, **older), view(2, 2, **newer))
    assert (found is not None) == pairs


@pytest.mark.parametrize(
    ("person_asks", "rated", "paired"),
    [(False, False, False), (True, False, True), (True, True, True)],
)
def test_a_bots_seek_pairs_with_a_persons_only_when_asked_rated_too(
    person_asks: bool, rated: bool, paired: bool
) -> None:
    bot, alice = make_bot("engine"), make_user("alice")
    seeks.create_seek(user=bot, games=DIFFUSION, time_control="5+3", rated=rated)
    _seek, game = seeks.create_seek(
        user=alice, games=DIFFUSION, time_control="5+3", rated=rated, bots=person_asks
    )
    assert (game is not None) == paired
    if game is not None:
        assert {game.player1_id, game.player2_id} == {bot.pk, alice.pk}
        assert game.rated == rated


def test_two_bots_seeks_pair_and_the_seek_option_comes_over_http() -> None:
    one, two = make_bot("engine1"), make_bot("engine2")
    _row, secret = tokens.create_token(user=one, name="e", scopes=["bot"])
    seeks.create_seek(user=two, games=DIFFUSION, time_control="5+3")
    answer = program(secret).post(
        "/api/seeks",
        {"games": DIFFUSION, "time_control": "5+3", "bots": True},
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["game_id"] is not None and body["seek"]["user_is_bot_account"] is True
    assert body["seek"]["bots"] is True


def test_people_challenge_bots_and_bots_challenge_people() -> None:
    bot, alice, bob = make_bot("engine"), make_user("alice"), make_user("bob")
    asked = challenges.create_challenge(
        challenger=alice, challenged="engine", slug="diffusion", rated=True
    )
    game = challenges.accept_challenge(user=bot, challenge_id=asked.pk)
    assert game.rated and {game.player1_id, game.player2_id} == {alice.pk, bot.pk}
    offered = challenges.create_challenge(challenger=bot, challenged="bob", slug="zigzag")
    declined = challenges.decline_challenge(user=bob, challenge_id=offered.pk, reason="later")
    assert declined.status == Challenge.Status.DECLINED
    again = challenges.create_challenge(challenger=bot, challenged="bob", slug="zigzag")
    assert challenges.accept_challenge(user=bob, challenge_id=again.pk).slug == "zigzag"


# --- at most BOT_MAX_GAMES games at once ------------------------------------------------


def games_for(bot: User, count: int) -> None:
    for n in range(count):
        services.create_game(
            slug="diffusion", options={}, player1=bot, player2=make_user(f"opponent{n}")
        )


def test_a_bot_at_its_most_games_is_refused_every_new_one(settings: Any) -> None:
    settings.BOT_MAX_GAMES = 2
    bot, alice = make_bot("engine"), make_user("alice")
    waiting = challenges.create_challenge(challenger=alice, challenged="engine", slug="diffusion")
    games_for(bot, 2)
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("accept", lambda: challenges.accept_challenge(user=bot, challenge_id=waiting.pk)),
        (
            "challenged",
            lambda: challenges.create_challenge(
                challenger=alice, challenged="engine", slug="zigzag"
            ),
        ),
        (
            "challenges",
            lambda: challenges.create_challenge(challenger=bot, challenged="alice", slug="zigzag"),
        ),
        ("seeks", lambda: seeks.create_seek(user=bot, games=DIFFUSION)),
        (
            "computer",
            lambda: computer.play_computer(user=bot, slug="diffusion", options={}, level=1),
        ),
    ]
    for name, call in cases:
        with pytest.raises(ServiceError) as caught:
            call()
        assert caught.value.code == "too_many_games", name
    assert Game.objects.filter(status="active").count() == 2
    # Over HTTP: 409, documented.
    _row, secret = tokens.create_token(user=bot, name="e", scopes=["bot"])
    answer = program(secret).post(
        f"/api/challenges/{waiting.pk}/accept", content_type="application/json"
    )
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "too_many_games"
    # A game ends: there is room again.
    services.resign(game_id=Game.objects.filter(status="active").first().pk, user=bot)  # type: ignore[union-attr]
    assert challenges.accept_challenge(user=bot, challenge_id=waiting.pk).pk


def test_a_matchmaking_pass_leaves_a_full_bots_seek_waiting(settings: Any) -> None:
    settings.BOT_MAX_GAMES = 1
    bot, alice = make_bot("engine"), make_user("alice")
    seek, _none = seeks.create_seek(user=bot, games=DIFFUSION, pair_now=False)
    games_for(bot, 1)  # meanwhile, a challenge accepted
    _mine, game = seeks.create_seek(user=alice, games=DIFFUSION, bots=True)
    assert game is None
    assert Seek.objects.get(pk=seek.pk).status == Seek.Status.OPEN
    services.resign(game_id=Game.objects.get(status="active").pk, user=bot)
    assert seeks.pair(seek.pk) is not None


@pytest.mark.postgres(reason="two acceptances at once need a server database's row locks")
@pytest.mark.django_db(transaction=True)
def test_two_acceptances_at_once_for_a_bots_last_place_start_one_game(settings: Any) -> None:
    settings.BOT_MAX_GAMES = 3
    bot = make_bot("engine")
    games_for(bot, 2)
    asked = [
        challenges.create_challenge(
            challenger=make_user(f"fan{n}"), challenged="engine", slug="zigzag"
        )
        for n in range(4)
    ]
    results = race(
        *(
            lambda made=made: challenges.accept_challenge(user=bot, challenge_id=made.pk)
            for made in asked
        )
    )
    started = [r for r in results if isinstance(r, Game)]
    assert len(started) == 1, results
    assert all(
        isinstance(r, ServiceError) and r.code == "too_many_games"
        for r in results
        if not isinstance(r, Game)
    ), results
    assert Game.objects.filter(status="active").count() == 3


# --- the bots' own ratings list --------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_ratings_count_alike_but_each_kind_has_its_own_standings() -> None:
    bot, alice, bob = make_bot("engine"), make_user("alice"), make_user("bob")
    for loser in (alice, bob):
        game = services.create_game(
            slug="zigzag", options={}, player1=bot, player2=loser, time_control="5+3", rated=True
        )
        services.resign(game_id=game.pk, user=loser)
    browser = Client()
    people = browser.get("/api/standings?game=zigzag&speed=realtime").json()
    assert [row["username"] for row in people["standings"]] == ["bob", "alice"] or [
        row["username"] for row in people["standings"]
    ] == ["alice", "bob"]
    assert people["bots"] is False
    for flag in ("true", "1", "yes"):
        bots = browser.get(f"/api/standings?game=zigzag&speed=realtime&bots={flag}").json()
        assert [(r["username"], r["is_bot_account"], r["games"]) for r in bots["standings"]] == [
            ("engine", True, 2)
        ]
    refused_answer = browser.get("/api/standings?game=zigzag&bots=maybe")
    assert refused_answer.status_code == 400
    assert refused_answer.json()["error"]["code"] == "bad_message"
    page = browser.get("/standings/zigzag/").content.decode()
    assert 'data-username="alice"' in page and 'data-username="engine"' not in page
    page = browser.get("/standings/zigzag/?bots=1").content.decode()
    assert 'data-username="engine"' in page and 'data-username="alice"' not in page
    assert MARK.search(page) and "Standings of bot accounts" in page


# --- tournaments that allow bots ------------------------------------------------------------


@pytest.mark.parametrize(("allow", "joined"), [(False, False), (True, True)])
def test_a_bot_joins_only_a_tournament_that_allows_bots(allow: bool, joined: bool) -> None:
    bot, alice = make_bot("engine"), make_user("alice")
    browser = Client()
    browser.force_login(alice)
    made = browser.post(
        "/api/tournaments",
        {
            "kind": "arena",
            "slug": "diffusion",
            "time_control": "3+2",
            "minutes": 30,
            "allow_bots": allow,
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    tournament = Tournament.objects.get(pk=made.json()["tournament_id"])
    assert tournament.allow_bots is allow
    _row, secret = tokens.create_token(user=bot, name="e", scopes=["bot"])
    answer = program(secret).post(
        f"/api/tournaments/{tournament.pk}/join", {}, content_type="application/json"
    )
    if joined:
        assert answer.status_code == 200, answer.content
        snapshot = browser.get(f"/api/tournaments/{tournament.pk}").json()
        assert snapshot["tournament"]["allow_bots"] is True
        assert [(r["name"], r["is_bot_account"]) for r in snapshot["standings"]] == [
            ("engine", True)
        ]
    else:
        assert answer.status_code == 403
        assert answer.json()["error"]["code"] == "bots_not_allowed"
    # People join either kind.
    entries.join(user=alice, tournament_id=tournament.pk)


def test_allow_bots_is_true_or_false() -> None:
    refused(
        "bad_message",
        lambda: creation.create_tournament(
            creator=make_user("alice"),
            kind="arena",
            slug="diffusion",
            time_control="3+2",
            minutes=30,
            allow_bots="yes",  # type: ignore[arg-type]
        ),
    )


# --- moderators revoke a user's tokens ----------------------------------------------------


def test_a_moderator_revokes_every_token_of_a_user_with_a_reason() -> None:
    bot, mo = make_bot("engine"), make_user("mo")
    call_command("moderators", "--add", "mo", stdout=StringIO())
    mo = User.objects.get(pk=mo.pk)
    secrets = [tokens.create_token(user=bot, name=f"t{n}", scopes=["bot"])[1] for n in range(2)]
    assert program(secrets[0]).post("/api/bot/account/upgrade").status_code == 200
    with pytest.raises(ServiceError):  # a reason is required, as for every action
        actions.act(
            actions.Request(moderator=mo, kind="revoke_tokens", reason="", username="engine")
        )
    assert ApiToken.objects.filter(user=bot, revoked_at__isnull=True).count() == 2
    done = actions.act(
        actions.Request(
            moderator=mo, kind="revoke_tokens", reason="flooding the lobby", username="engine"
        )
    )
    assert (done.kind, done.user_id, done.details) == ("revoke_tokens", bot.pk, {"tokens": 2})
    assert set(ApiToken.objects.filter(user=bot).values_list("revoked_why", flat=True)) == {
        "moderator"
    }
    for secret in secrets:
        answer = program(secret).post("/api/bot/account/upgrade")
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "bad_token"
    notice = Notice.objects.get(user=bot)
    assert "revoked your API tokens" in notice.text and "flooding the lobby" in notice.text
    assert Action.objects.filter(kind="revoke_tokens").count() == 1
    # The moderators' form offers it.
    browser = Client()
    browser.force_login(mo)
    assert 'value="revoke_tokens"' in browser.get("/moderation/@engine/").content.decode()
