"""Push notices (push/): what each kind says and in whose language, who is told what and
when they no longer need it, the HTTP endpoints and the settings form, the service worker
and the manifest. Sending to a push service is tests/test_push_sending.py; the whole path in
Chromium is tests/test_browser_push.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from accounts.models import User
from games import selectors
from games import services as game_services
from games.models import Game, GameConnection
from lobby.models import Challenge, LobbyConnection
from lobby.services import challenges
from push import keys, notices, payloads, sending, subscriptions
from push.models import KINDS, Choices, Notice, Subscription
from realtime.errors import ServiceError
from tests.games_helpers import make_user
from tournaments.models import Pairing, Tournament, TournamentConnection

ROOT = Path(__file__).resolve().parent.parent
# A push service the tests may subscribe to (nothing is sent in this file).
SERVICE = "http://127.0.0.1:9"


def browser_keys() -> dict[str, str]:
    """A browser's keys as PushSubscription.toJSON() gives them."""
    public, _private = keys.generate()
    return {"p256dh": public, "auth": keys.b64url(os.urandom(16))}


@pytest.fixture(autouse=True)
def _local_push_service(settings: Any) -> None:
    settings.PUSH_SERVICES = [*settings.PUSH_SERVICES, "http://127.0.0.1:*"]
    # Who wants "your move" notices is kept by the process for a few seconds: each test
    # starts from its own database.
    notices.forget_wanting()


def subscribe(user: User, name: str = "phone", language: str = "") -> Subscription:
    subscriptions.subscribe(
        user=user, endpoint=f"{SERVICE}/push/{user.pk}-{name}", language=language, **browser_keys()
    )
    return Subscription.objects.get(endpoint=f"{SERVICE}/push/{user.pk}-{name}")


def first_move(game: Game) -> str:
    return str(sorted(selectors.snapshot(Game.objects.get(pk=game.pk))["legal_moves"])[0])


def move(game: Game, user: User) -> None:
    game.refresh_from_db()
    game_services.play_move(game_id=game.pk, user=user, move=first_move(game), ply=game.ply)


def game_between(
    first: User, second: User, slug: str = "diffusion", control: str = "", **options: int
) -> Game:
    return game_services.create_game(
        slug=slug, options=options, player1=first, player2=second, time_control=control
    )


def queued() -> list[tuple[str, str, int | None, int | None, str]]:
    return [
        (n.user.username, n.kind, n.player, n.ply, n.detail)
        for n in Notice.objects.select_related("user").order_by("pk")
    ]


# --- what each kind says ----------------------------------------------------------------------


def test_each_kind_says_who_and_which_game_and_links_to_its_page() -> None:
    move = payloads.your_move(game_id=12, game_name="ZigZag", opponent="bob", realtime=False)
    assert (move.title, move.body, move.url, move.tag, move.kind, move.lang) == (
        "Your move against bob",
        "bob has moved in ZigZag #12.",
        "/games/12/",
        "game-12",
        "move_correspondence",
        "en",
    )
    fast = payloads.your_move(game_id=12, game_name="ZigZag", opponent="bob", realtime=True)
    assert fast.kind == "move_realtime" and fast.tag == "game-12"
    challenge = payloads.challenge(
        challenge_id=7, challenger="carol", game_name="Diffusion", control="3+2 (real time)"
    )
    assert (challenge.title, challenge.body, challenge.url, challenge.tag, challenge.kind) == (
        "carol challenges you",
        "Diffusion, 3+2 (real time). Answer in the lobby.",
        "/",
        "challenge-7",
        "challenge",
    )
    started = payloads.tournament_game(
        game_id=40, tournament="Sunday arena", game_name="Diffusion", opponent="dave"
    )
    assert (started.title, started.body, started.url, started.kind) == (
        "Your game in Sunday arena has started",
        "Diffusion #40 against dave.",
        "/games/40/",
        "tournament_game",
    )
    draw = payloads.offer(game_id=5, game_name="ZigZag", opponent="bob", offer="draw")
    back = payloads.offer(game_id=5, game_name="ZigZag", opponent="bob", offer="takeback")
    assert draw.title == "bob offers a draw" and back.title == "bob asks to take a move back"
    assert draw.body == back.body == "ZigZag #5: answer on the game's page."
    assert draw.kind == back.kind == "offer" and draw.url == "/games/5/"


@pytest.mark.parametrize("language", ["fr", "de", "es"])
def test_a_notice_is_built_in_the_language_it_is_asked_in(language: str) -> None:
    with translation.override(language):
        built = [
            payloads.your_move(game_id=1, game_name="ZigZag", opponent="bob", realtime=True),
            payloads.challenge(challenge_id=1, challenger="bob", game_name="ZigZag", control="x"),
            payloads.tournament_game(game_id=1, tournament="T", game_name="Z", opponent="b"),
            payloads.offer(game_id=1, game_name="ZigZag", opponent="bob", offer="draw"),
        ]
    assert {payload.lang for payload in built} == {language}
    # The texts are the catalog's for that language (English until a string is translated).
    with translation.override(language):
        expected = translation.gettext("Your move against %(opponent)s") % {"opponent": "bob"}
    assert built[0].title == expected


def test_a_notice_payload_is_a_small_json_object() -> None:
    payload = payloads.your_move(
        game_id=123456, game_name="Diffusion Chess", opponent="x" * 20, realtime=True
    )
    text = msgspec.json.encode(payload)
    assert set(json.loads(text)) == {"title", "body", "url", "tag", "kind", "lang"}
    # Push services take 4 KB at most; a notice is far below.
    assert len(text) < 400


# --- who is told (after the news commits) ------------------------------------------------------


@pytest.mark.django_db(transaction=True)
class TestWhoIsTold:
    def test_the_player_to_move_is_told_only_if_they_turned_push_on(self) -> None:
        alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
        subscribe(bob)
        game = game_between(alice, bob)
        move(game, alice)
        assert queued() == [("bob", "move_correspondence", 2, 1, "")]
        # Carol has no push: her opponent's move queues nothing.
        other = game_between(alice, carol)
        move(other, alice)
        assert len(queued()) == 1

    def test_a_move_asks_the_database_nothing_about_notices(self) -> None:
        alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
        subscribe(carol)
        game = game_between(alice, bob)
        move(game, alice)  # who wants notices is read once for the process
        with CaptureQueriesContext(connection) as seen:
            move(game, bob)
        assert not [q["sql"] for q in seen.captured_queries if "push_" in q["sql"]]
        # What this process changes it knows at once: bob's next turn is told.
        subscribe(bob)
        move(game, alice)
        assert [row[0] for row in queued()] == ["bob"]

    def test_a_closed_account_is_told_nothing(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        game = game_between(alice, bob)
        User.objects.filter(pk=bob.pk).update(is_active=False)
        move(game, alice)
        assert queued() == []

    def test_a_real_time_move_is_its_own_kind_and_each_kind_can_be_turned_off(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        game = game_between(alice, bob, control="5+3")
        move(game, alice)
        assert queued() == [("bob", "move_realtime", 2, 1, "")]
        subscriptions.set_kinds(user=bob, changes={"move_realtime": False})
        Notice.objects.all().delete()
        move(game, bob)
        move(game, alice)
        assert queued() == []

    def test_nobody_is_told_of_a_move_that_ends_the_game_and_the_mover_never(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(alice)
        subscribe(bob)
        game = game_between(alice, bob)
        move(game, alice)
        assert [row[0] for row in queued()] == ["bob"]
        game_services.resign(game_id=game.pk, user=bob)
        assert [row[0] for row in queued()] == ["bob"]

    def test_a_draw_offer_and_a_takeback_request_tell_the_opponent(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        game = game_between(alice, bob, slug="zigzag", pits=4, seeds=3)
        move(game, alice)
        Notice.objects.all().delete()
        game_services.offer_draw(game_id=game.pk, user=alice)
        game_services.offer_takeback(game_id=game.pk, user=alice)
        assert queued() == [
            ("bob", "offer", 2, 1, "draw"),
            ("bob", "offer", 2, 1, "takeback"),
        ]

    def test_a_challenge_by_name_tells_the_challenged_and_an_open_one_nobody(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        subscribe(alice)
        made = challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
        challenges.create_challenge(challenger=alice, challenged=None, slug="diffusion")
        assert [(n.user_id, n.kind, n.challenge_id) for n in Notice.objects.all()] == [
            (bob.pk, "challenge", made.pk)
        ]

    def test_a_tournament_game_tells_both_players_who_asked_and_other_games_nobody(self) -> None:
        alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
        for user in (alice, bob, carol):
            subscribe(user)
        event = Tournament.objects.create(
            name="Sunday arena", kind="arena", slug="diffusion", starts_at=timezone.now()
        )
        subscriptions.set_kinds(user=bob, changes={"tournament_game": False})
        # As tournaments.services.rounds makes a wave: the games and their pairings commit
        # together, and the games' announcement comes after the commit.
        with transaction.atomic():
            made = game_services.create_games(
                [game_services.new_game(slug="diffusion", options={}, player1=alice, player2=bob)]
            )
            Pairing.objects.create(tournament=event, round=1, game=made[0], first=alice, second=bob)
        game_between(carol, bob)  # not a tournament's
        assert [
            (n.user.username, n.kind, n.player, n.tournament_id)
            for n in Notice.objects.select_related("user")
        ] == [("alice", "tournament_game", 1, event.pk)]

    def test_the_news_costs_a_move_one_query_for_players_without_push(
        self, django_assert_max_num_queries: Any
    ) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        game = game_between(alice, bob)
        with django_assert_max_num_queries(1):
            notices.turn_passed(game=game, player=2, ply=1)
        subscribe(bob)
        with django_assert_max_num_queries(2):
            notices.turn_passed(game=game, player=2, ply=1)
        assert len(queued()) == 1


# --- when it is no longer news (the sweeper's pass decides) ------------------------------------


@pytest.mark.django_db(transaction=True)
class TestStillNews:
    def test_a_move_notice_goes_to_every_browser_of_the_reader_in_its_language(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob, "phone", language="de")
        subscribe(bob, "laptop", language="es")
        game = game_between(alice, bob)
        move(game, alice)
        sends = sending.claim()
        assert sorted(d.endpoint.rsplit("-", 1)[1] for d in sends) == ["laptop", "phone"]
        assert {sending.payload_of(d)["lang"] for d in sends} == {"de", "es"}
        assert {sending.payload_of(d)["url"] for d in sends} == {f"/games/{game.pk}/"}
        assert Notice.objects.count() == 0  # claimed: nobody else sends it
        # The account's own language comes first.
        User.objects.filter(pk=bob.pk).update(language="fr")
        move(game, bob)
        move(game, alice)
        assert {sending.payload_of(d)["lang"] for d in sending.claim()} == {"fr"}

    def test_nothing_is_sent_to_a_player_who_has_the_game_open_or_moved_already(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        game = game_between(alice, bob)
        move(game, alice)
        connection = GameConnection.objects.create(
            game=game, channel_name="x!1", user=bob, player=2
        )
        assert sending.claim() == []  # the game is open on one of bob's screens
        connection.delete()
        move(game, bob)
        move(game, alice)
        assert len(queued()) == 1
        move(game, bob)  # played through another door before the sweeper's pass
        assert sending.claim() == []
        assert Notice.objects.count() == 0

    def test_a_kind_turned_off_before_the_pass_is_not_sent(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        move(game_between(alice, bob), alice)
        subscriptions.set_kinds(user=bob, changes={"move_correspondence": False})
        assert sending.claim() == []

    def test_an_answered_offer_or_challenge_and_one_seen_in_the_lobby_are_not_sent(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(bob)
        game = game_between(alice, bob, slug="zigzag", pits=4, seeds=3)
        move(game, alice)
        Notice.objects.all().delete()
        game_services.offer_draw(game_id=game.pk, user=alice)
        [offer] = sending.claim()
        assert sending.payload_of(offer)["title"] == "alice offers a draw"
        game_services.offer_draw(game_id=game.pk, user=alice)  # already offered: no news
        assert sending.claim() == []
        game_services.offer_takeback(game_id=game.pk, user=alice)
        game_services.answer_takeback(game_id=game.pk, user=bob, accept=False)
        assert sending.claim() == []
        made = challenges.create_challenge(challenger=alice, challenged="bob", slug="diffusion")
        LobbyConnection.objects.create(channel_name="lobby!1", user=bob)
        assert sending.claim() == []
        LobbyConnection.objects.all().delete()
        challenges.create_challenge(challenger=alice, challenged="bob", slug="zigzag")
        challenges.decline_challenge(
            user=bob, challenge_id=Challenge.objects.exclude(pk=made.pk).get().pk
        )
        assert sending.claim() == []

    def test_a_tournament_game_is_not_announced_to_a_player_on_the_tournaments_page(
        self,
    ) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        subscribe(alice)
        subscribe(bob)
        event = Tournament.objects.create(
            name="Swiss", kind="swiss", slug="diffusion", starts_at=timezone.now()
        )
        TournamentConnection.objects.create(tournament=event, channel_name="t!1", user=bob)
        with transaction.atomic():
            [game] = game_services.create_games(
                [game_services.new_game(slug="diffusion", options={}, player1=alice, player2=bob)]
            )
            Pairing.objects.create(tournament=event, round=1, game=game, first=alice, second=bob)
        sends = sending.claim()
        assert [sending.payload_of(d)["title"] for d in sends] == ["Your game in Swiss has started"]
        assert sends[0].endpoint.endswith(f"/{alice.pk}-phone")

    def test_a_retry_goes_to_its_one_browser_and_waits_until_it_is_due(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        phone, _laptop = subscribe(bob, "phone"), subscribe(bob, "laptop")
        game = game_between(alice, bob)
        move(game, alice)
        Notice.objects.update(
            subscription=phone, attempts=1, due_at=timezone.now() + timedelta(minutes=1)
        )
        assert sending.claim() == []
        [retry] = sending.claim(now=timezone.now() + timedelta(minutes=2))
        assert (retry.endpoint, retry.attempt) == (phone.endpoint, 2)


# --- the endpoints and the settings form -------------------------------------------------------


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def post_json(client: Client, path: str, body: Any, method: str = "post") -> Any:
    return getattr(client, method)(path, data=json.dumps(body), content_type="application/json")


@pytest.mark.django_db
class TestEndpoints:
    def test_the_public_key_is_the_sites(self) -> None:
        answer = Client().get("/api/push/key")
        assert answer.status_code == 200 and answer.json() == {"key": settings.VAPID_PUBLIC_KEY}
        assert len(keys.b64url_decode(answer.json()["key"])) == 65

    def test_a_subscription_turns_every_kind_on_and_a_delete_forgets_it(self) -> None:
        bob = make_user("bob")
        client = signed_in(bob)
        assert client.get("/api/push/kinds").json() == {
            "kinds": dict.fromkeys(KINDS, False),
            "browsers": 0,
        }
        body = {"endpoint": f"{SERVICE}/push/b1", "expirationTime": None, "keys": browser_keys()}
        answer = post_json(client, "/api/push/subscriptions", body)
        assert answer.status_code == 201
        assert answer.json() == {"kinds": dict.fromkeys(KINDS, True), "browsers": 1}
        stored = Subscription.objects.get()
        assert (stored.user, stored.p256dh, stored.language) == (bob, body["keys"]["p256dh"], "en")
        assert stored.session_key == client.session.session_key
        # Posting it again changes nothing; some kinds off stay off on the next browser.
        post_json(client, "/api/push/kinds", {"challenge": False, "offer": False})
        post_json(client, "/api/push/subscriptions", body)
        second = {**body, "endpoint": f"{SERVICE}/push/b2"}
        kinds = post_json(client, "/api/push/subscriptions", second).json()["kinds"]
        assert kinds == {**dict.fromkeys(KINDS, True), "challenge": False, "offer": False}
        gone = post_json(
            client, "/api/push/subscriptions", {"endpoint": body["endpoint"]}, "delete"
        )
        assert gone.json() == {"removed": True}
        assert list(Subscription.objects.values_list("endpoint", flat=True)) == [second["endpoint"]]
        again = post_json(
            client, "/api/push/subscriptions", {"endpoint": body["endpoint"]}, "delete"
        )
        assert again.json() == {"removed": False}

    def test_a_browser_that_subscribes_for_another_account_is_that_ones_now(self) -> None:
        alice, bob = make_user("alice"), make_user("bob")
        body = {"endpoint": f"{SERVICE}/push/shared", "keys": browser_keys()}
        post_json(signed_in(alice), "/api/push/subscriptions", body)
        post_json(signed_in(bob), "/api/push/subscriptions", body)
        assert Subscription.objects.get().user == bob

    @pytest.mark.parametrize(
        ("body", "status", "code"),
        [
            ({"endpoint": "https://evil.example/push/1"}, 400, "unknown_push_service"),
            ({"endpoint": "http://10.0.0.1:9100/metrics"}, 400, "unknown_push_service"),
            ({"endpoint": "https://user@fcm.googleapis.com/x"}, 400, "unknown_push_service"),
            ({"keys": {"p256dh": "AAAA", "auth": "AAAA"}}, 400, "bad_subscription"),
            ({"keys": {"p256dh": 7}}, 400, "bad_message"),
            ({"endpoint": ""}, 400, "bad_message"),
        ],
    )
    def test_a_bad_subscription_is_refused_and_changes_nothing(
        self, body: dict[str, Any], status: int, code: str
    ) -> None:
        client = signed_in(make_user("bob"))
        full = {"endpoint": f"{SERVICE}/push/x", "keys": browser_keys(), **body}
        answer = post_json(client, "/api/push/subscriptions", full)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
        assert not Subscription.objects.exists() and not Choices.objects.exists()

    def test_the_endpoints_want_a_signed_in_user_and_json(self) -> None:
        body = {"endpoint": f"{SERVICE}/push/x", "keys": browser_keys()}
        for answer in (
            post_json(Client(), "/api/push/subscriptions", body),
            Client().get("/api/push/kinds"),
            post_json(Client(), "/api/push/kinds", {"offer": True}),
        ):
            assert (answer.status_code, answer.json()["error"]["code"]) == (403, "not_logged_in")
        client = signed_in(make_user("bob"))
        broken = client.post("/api/push/subscriptions", data="{", content_type="application/json")
        assert (broken.status_code, broken.json()["error"]["code"]) == (400, "bad_json")
        unknown = post_json(client, "/api/push/kinds", {"everything": True})
        assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "bad_message")
        assert client.put("/api/push/subscriptions").status_code == 405

    def test_logging_out_stops_that_browsers_notices_only(self) -> None:
        bob = make_user("bob")
        here, there = signed_in(bob), signed_in(bob)
        post_json(
            here,
            "/api/push/subscriptions",
            {"endpoint": f"{SERVICE}/push/h", "keys": browser_keys()},
        )
        post_json(
            there,
            "/api/push/subscriptions",
            {"endpoint": f"{SERVICE}/push/t", "keys": browser_keys()},
        )
        here.post("/logout/")
        assert list(Subscription.objects.values_list("endpoint", flat=True)) == [
            f"{SERVICE}/push/t"
        ]

    def test_the_profile_page_has_the_push_section_and_its_form_saves_the_kinds(self) -> None:
        bob = make_user("bob")
        client = signed_in(bob)
        page = client.get("/@bob/").content.decode()
        assert 'id="push-form"' in page and "js/push.js" in page
        assert page.count('name="kinds"') == len(KINDS)
        assert 'id="push-kind-move_realtime" checked' not in page  # off until turned on
        answer = client.post("/settings/push/", {"kinds": ["move_realtime", "challenge"]})
        assert answer.status_code == 302 and answer["Location"].endswith("/@bob/#push-form")
        assert subscriptions.kinds_of(bob) == {
            **dict.fromkeys(KINDS, False),
            "move_realtime": True,
            "challenge": True,
        }
        page = client.get("/@bob/").content.decode()
        assert 'id="push-kind-move_realtime" checked' in page
        # Someone else's profile has no such section.
        make_user("carol")
        assert 'id="push-form"' not in client.get("/@carol/").content.decode()
        assert Client().post("/settings/push/", {"kinds": ["offer"]}).status_code == 302
        assert subscriptions.kinds_of(bob)["offer"] is False

    def test_set_kinds_refuses_a_kind_it_does_not_have(self) -> None:
        with pytest.raises(ServiceError) as refused:
            subscriptions.set_kinds(user=make_user("bob"), changes={"gossip": True})
        assert refused.value.code == "bad_message"


# --- the installable site ----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_service_worker_is_served_from_the_root_for_the_whole_site() -> None:
    answer = Client().get("/sw.js")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/javascript")
    assert answer["Service-Worker-Allowed"] == "/"
    assert "no-cache" in answer["Cache-Control"]
    text = answer.content.decode()
    assert 'addEventListener("push"' in text and 'addEventListener("notificationclick"' in text
    assert "{%" not in text and "/static/img/icon-192.png" in text


@pytest.mark.django_db
def test_the_manifest_makes_the_site_installable_and_every_page_links_it() -> None:
    answer = Client().get("/manifest.webmanifest")
    assert answer["Content-Type"] == "application/manifest+json"
    manifest = answer.json()
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert manifest["name"] == "Diffusion online" and manifest["short_name"] == "Diffusion"
    assert manifest["theme_color"] == "#1d2430"
    sizes = {icon["sizes"]: icon for icon in manifest["icons"]}
    assert set(sizes) == {"192x192", "512x512", "any"}
    for size in ("192", "512"):
        path = ROOT / "static" / "img" / f"icon-{size}.png"
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == int.from_bytes(data[20:24], "big") == int(size)
    assert sizes["any"]["type"] == "image/svg+xml"
    page = Client().get("/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert '<meta name="theme-color" content="#1d2430">' in page
    policy = dict(
        part.strip().split(" ", 1) for part in answer["Content-Security-Policy"].split(";")
    )
    assert policy["worker-src"] == policy["manifest-src"] == "'self'"


# --- the keys ----------------------------------------------------------------------------------


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("VAPID_", "DJANGO_"))}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings"
            "; print(settings.VAPID_PUBLIC_KEY)",
        ],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_SECRET_KEY": "k", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_refuses_to_start_without_a_matching_vapid_key_pair() -> None:
    missing = load_settings()
    assert missing.returncode != 0
    assert "VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT must be set" in missing.stderr
    public, private = keys.generate()
    other, _ = keys.generate()
    pair = {"VAPID_PUBLIC_KEY": public, "VAPID_PRIVATE_KEY": private}
    wrong = load_settings(**{**pair, "VAPID_PUBLIC_KEY": other}, VAPID_SUBJECT="mailto:a@b.org")
    assert "is not the public key of VAPID_PRIVATE_KEY" in wrong.stderr
    bad_subject = load_settings(**pair, VAPID_SUBJECT="ops@example.org")
    assert "VAPID_SUBJECT must be a mailto: or https: address" in bad_subject.stderr
    good = load_settings(**pair, VAPID_SUBJECT="mailto:ops@example.org")
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == public


def test_a_development_pair_is_made_once_into_a_local_file(tmp_path: Path) -> None:
    path = tmp_path / ".vapid_keys"
    public, private = keys.local_keys(path)
    assert keys.local_keys(path) == (public, private)
    assert keys.public_of(private) == public
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def keys_command(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "push.keys", *arguments],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_keys_command_answers_help_and_writes_no_file(tmp_path: Path) -> None:
    answer = keys_command("--help", cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert "usage: python -m push.keys [-h] [file]" in answer.stdout
    assert list(tmp_path.iterdir()) == []
    refused = keys_command("a", "b", cwd=tmp_path)
    assert refused.returncode == 2
    assert "unrecognized arguments: b" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_empty_key_file_gets_a_pair_as_a_missing_one_does(tmp_path: Path) -> None:
    # What make's .vapid_keys rule leaves when its first run stops halfway: make never runs
    # the rule again on an existing file, so the command fills it.
    path = tmp_path / ".vapid_keys"
    path.write_text("\n")
    made = keys_command(str(path), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    public, private = keys.local_keys(path)
    assert keys.public_of(private) == public
    assert made.stdout == f"VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}\n"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("public=abc\n", "holds no key pair (public=... and private=... lines)"),
        ("# a pair, once\nprivate=not-a-key\npublic=abc\n", "the public key is not the private"),
    ],
)
def test_a_key_file_without_a_pair_is_refused_clearly_and_kept(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / ".vapid_keys"
    path.write_text(text)
    refused = keys_command(str(path), cwd=tmp_path)
    assert refused.returncode == 2
    assert said in refused.stderr and "delete it to have a new pair made" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert path.read_text() == text
    # manage.py's way in (use_local_keys) stops as clearly, without a traceback.
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAPID_")}
    stopped = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from pathlib import Path; from push.keys import use_local_keys"
            f"; use_local_keys(Path({str(path)!r}))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopped.returncode == 1
    assert "Traceback" not in stopped.stderr and said in stopped.stderr
