"""The analysis board over HTTP (docs/PROTOCOL.md, "Analysis"): making one from a position, a
move list or a game, playing and pruning its tree, who may change it, every refusal, and
that nothing done to it touches the game it came from."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from accounts.models import User
from analysis.models import Analysis
from analysis.services import MOST_ANALYSES
from games import services as games
from games.models import Game
from games.rules import available_games, get_rules
from games.rules.notation import position_text
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def client_of(user: User | None) -> Client:
    browser = Client()
    if user is not None:
        browser.force_login(user)
    return browser


def post(browser: Client, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = browser.post(path, json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


@pytest.fixture
def alice() -> User:
    return make_user("alice")


@pytest.fixture
def bob() -> User:
    return make_user("bob")


def played_game(p1: User, p2: User, moves: list[str], over: bool) -> Game:
    game = games.create_game(slug="diffusion", options={}, player1=p1, player2=p2)
    for ply, move in enumerate(moves):
        games.play_move(game_id=game.pk, user=(p1, p2)[ply % 2], move=move, ply=ply)
    if over:
        games.resign(game_id=game.pk, user=p2)
    return Game.objects.get(pk=game.pk)


def test_an_analysis_from_a_pasted_position_and_moves_shows_the_last_move(alice: User) -> None:
    status, answer = post(
        client_of(alice),
        "/api/analysis",
        {"slug": "diffusion", "position": "4,4,4,4,4,4/4,4,4,4,4,4 0,0 1", "moves": "1. i 2. A"},
    )
    assert status == 201
    analysis = answer["analysis"]
    assert analysis["owner"] == "alice" and analysis["slug"] == "diffusion"
    assert analysis["node"]["moves"] == ["I", "A"]
    assert analysis["node"]["line"] == "1. I 2. A"
    assert analysis["node"]["to_move"] == 1 and analysis["node"]["legal"]
    assert [n["move"] for n in analysis["tree"]["nodes"]] == [None, "I", "A"]
    assert analysis["board"]["renderer"] == "pits"
    # Only the shown node's position travels: a long game's would weigh on every answer.
    assert all("position" not in n for n in analysis["tree"]["nodes"])
    rules: Any = get_rules("diffusion")
    after = rules.play(rules.play(rules.initial_state(), "I"), "A")
    assert analysis["node"]["position"] == position_text(rules, after)


def test_the_editor_of_every_game_is_described_by_the_server_in_the_readers_language() -> None:
    # static/js/editor.js knew ZigZag by its slug (its labels, its no-return field): the
    # server describes each field of the position's text, as it describes boards.
    with translation.override("fr"):
        to_move = translation.gettext("To move")
    assert to_move != "To move"
    kinds = {}
    for game in available_games():
        browser = Client()
        browser.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
        answer = browser.get("/api/analysis/board", {"slug": game["slug"]}).json()
        fields = answer["editor"]["fields"]
        kinds[game["slug"]] = [field["kind"] for field in fields]
        # What an editor writes from the fields, each at its start value, is the start.
        values = answer["start"].split()
        written = [
            field["value"]
            if field["kind"] == "fixed"
            else values[i]
            if i < len(values)
            else field.get("usual", "")
            for i, field in enumerate(fields)
        ]
        while written and fields[len(written) - 1].get("usual") == written[-1]:
            written.pop()
        assert " ".join(written) == answer["start"], game["slug"]
        words = [field.get("label") for field in fields] + [
            item["label"] for field in fields for item in field.get("choices", [])
        ]
        assert to_move in words, words
    assert kinds["diffusion"] == ["pits", "numbers", "choice"]
    assert kinds["zigzag"] == ["pits", "numbers", "choice", "fixed", "choice"]
    assert kinds["diffusion-chess"] == ["grid", "choice", "number", "number"]


def test_playing_branching_promoting_and_deleting_through_the_api(alice: User) -> None:
    browser = client_of(alice)
    _, made = post(browser, "/api/analysis", {"slug": "zigzag", "options": {"pits": 4, "seeds": 3}})
    key = made["analysis"]["key"]
    assert made["analysis"]["options"] == {"pits": 4, "seeds": 3}
    first = made["analysis"]["node"]["legal"][0]
    other = made["analysis"]["node"]["legal"][1]
    _, a = post(browser, f"/api/analysis/{key}/play", {"node": 0, "move": first})
    _, b = post(browser, f"/api/analysis/{key}/play", {"node": 0, "move": other})
    b_node = b["analysis"]["node"]["id"]
    assert b["analysis"]["current"] == b_node and b["analysis"]["node"]["moves"] == [other]
    _, promoted = post(browser, f"/api/analysis/{key}/promote", {"node": b_node})
    root = promoted["analysis"]["tree"]["nodes"][0]
    assert root["children"] == [b_node, a["analysis"]["node"]["id"]]
    _, deleted = post(browser, f"/api/analysis/{key}/delete", {"node": b_node})
    assert deleted["analysis"]["current"] == 0
    assert [n["move"] for n in deleted["analysis"]["tree"]["nodes"]] == [None, first]
    _, went = post(browser, f"/api/analysis/{key}/go", {"node": a["analysis"]["node"]["id"]})
    assert went["analysis"]["node"]["moves"] == [first]
    assert Analysis.objects.get(key=key).version == 5


def test_anyone_may_look_but_only_the_owner_changes(alice: User, bob: User) -> None:
    _, made = post(client_of(alice), "/api/analysis", {"slug": "diffusion", "moves": "I"})
    key = made["analysis"]["key"]
    looked = client_of(None).get(f"/api/analysis/{key}?node=0").json()["analysis"]
    assert looked["node"]["id"] == 0 and looked["node"]["moves"] == []
    status, refused = post(client_of(bob), f"/api/analysis/{key}/play", {"node": 0, "move": "J"})
    assert (status, refused["error"]["code"]) == (403, "not_yours")
    status, refused = post(client_of(None), f"/api/analysis/{key}/play", {"node": 0, "move": "J"})
    assert (status, refused["error"]["code"]) == (403, "not_logged_in")
    status, copied = post(client_of(bob), "/api/analysis", {"copy": key})
    assert status == 201 and copied["analysis"]["owner"] == "bob"
    assert copied["analysis"]["tree"] == made["analysis"]["tree"]
    assert Analysis.objects.get(key=key).version == 0


def test_a_finished_game_opens_at_the_move_asked_for_and_stays_as_it_was(
    alice: User, bob: User
) -> None:
    game = played_game(alice, bob, ["I", "A", "J"], over=True)
    before = (game.state, game.ply, game.version, game.status)
    browser = client_of(alice)
    status, made = post(browser, "/api/analysis", {"game": game.pk, "ply": 1})
    assert status == 201
    analysis = made["analysis"]
    assert analysis["game"] == game.pk and analysis["node"]["moves"] == ["I"]
    assert [n["move"] for n in analysis["tree"]["nodes"]] == [None, "I", "A", "J"]
    key = analysis["key"]
    legal = analysis["node"]["legal"]
    other = next(move for move in legal if move != "A")
    post(browser, f"/api/analysis/{key}/play", {"node": analysis["current"], "move": other})
    game.refresh_from_db()
    assert (game.state, game.ply, game.version, game.status) == before


def test_a_game_in_play_is_analysed_by_spectators_not_by_its_players(
    alice: User, bob: User
) -> None:
    game = played_game(alice, bob, ["I"], over=False)
    status, refused = post(client_of(alice), "/api/analysis", {"game": game.pk})
    assert (status, refused["error"]["code"]) == (403, "game_in_progress")
    carol = make_user("carol")
    status, made = post(client_of(carol), "/api/analysis", {"game": game.pk})
    assert status == 201 and made["analysis"]["node"]["moves"] == ["I"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"slug": "chess"}, 400, "invalid_options"),
        ({"slug": "zigzag", "options": {"pits": 3}}, 400, "invalid_options"),
        ({"slug": "diffusion", "position": "4,4 0,0 1"}, 400, "bad_position"),
        ({"slug": "diffusion", "moves": "1. I 2. Q"}, 400, "bad_game"),
        ({"game": 999_999}, 404, "no_such_game"),
        ({"copy": "nope"}, 404, "no_such_analysis"),
        ({}, 400, "bad_message"),
        ({"slug": 5}, 400, "bad_message"),
    ],
)
def test_a_bad_start_is_refused_with_its_code(
    alice: User, body: dict[str, Any], status: int, code: str
) -> None:
    answer = post(client_of(alice), "/api/analysis", body)
    assert (answer[0], answer[1]["error"]["code"]) == (status, code)
    assert answer[1]["error"]["message"]
    assert not Analysis.objects.exists()


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/play", {"node": 0, "move": "Q"}, 422, "illegal_move"),
        ("/play", {"node": 42, "move": "I"}, 404, "no_such_node"),
        ("/play", {"node": 0}, 400, "bad_message"),
        ("/delete", {"node": 0}, 400, "cannot_delete_root"),
        ("/promote", {"node": 42}, 404, "no_such_node"),
        ("/go", {"node": -1}, 400, "bad_message"),
    ],
)
def test_a_bad_change_is_refused_and_changes_nothing(
    alice: User, path: str, body: dict[str, Any], status: int, code: str
) -> None:
    browser = client_of(alice)
    _, made = post(browser, "/api/analysis", {"slug": "diffusion"})
    key = made["analysis"]["key"]
    answer = post(browser, f"/api/analysis/{key}{path}", body)
    assert (answer[0], answer[1]["error"]["code"]) == (status, code)
    assert Analysis.objects.get(key=key).version == 0


def test_unknown_analyses_and_nodes_are_404s(alice: User) -> None:
    assert client_of(None).get("/api/analysis/nope").json()["error"]["code"] == "no_such_analysis"
    _, made = post(client_of(alice), "/api/analysis", {"slug": "diffusion"})
    key = made["analysis"]["key"]
    answer = client_of(None).get(f"/api/analysis/{key}?node=x")
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "no_such_node")
    assert client_of(None).get("/analysis/nope/").status_code == 404


def test_a_user_keeps_a_limited_number_and_may_remove_them(alice: User) -> None:
    browser = client_of(alice)
    _, made = post(browser, "/api/analysis", {"slug": "diffusion"})
    stored = Analysis.objects.get(key=made["analysis"]["key"]).tree
    Analysis.objects.bulk_create(
        Analysis(owner=alice, slug="diffusion", tree=stored) for _ in range(MOST_ANALYSES - 1)
    )
    status, refused = post(browser, "/api/analysis", {"slug": "diffusion"})
    assert (status, refused["error"]["code"]) == (409, "too_many_analyses")
    key = made["analysis"]["key"]
    assert post(browser, f"/api/analysis/{key}/remove", {}) == (200, {"removed": key})
    assert len(browser.get("/api/analysis").json()["analyses"]) == MOST_ANALYSES - 1
    assert post(browser, "/api/analysis", {"slug": "diffusion"})[0] == 201


def test_the_pages_make_show_and_explain_an_analysis(alice: User) -> None:
    browser = client_of(alice)
    page = browser.get("/analysis/?slug=zigzag&option-pits=4&position=3,3,3,3/3,3,3,3+0,0+1")
    text = page.content.decode()
    assert page.status_code == 200 and "3,3,3,3/3,3,3,3 0,0 1</textarea>" in text
    made = browser.post(
        "/analysis/", {"slug": "zigzag", "option-pits": "4", "option-seeds": "3", "moves": "a"}
    )
    assert made.status_code == 302
    key = made["Location"].rstrip("/").rsplit("/", 1)[1]
    assert Analysis.objects.get(key=key).options == {"pits": 4, "seeds": 3}
    board = browser.get(made["Location"]).content.decode()
    assert 'data-mine="true"' in board and "js/analysis.js" in board
    refused = browser.post("/analysis/", {"slug": "diffusion", "position": "nonsense"}, follow=True)
    assert "bad_position" in refused.content.decode()
    assert "DIFFUSION-CHESS" not in browser.get("/analysis/notation/").content.decode()
    assert (
        "<h1>Writing positions and games down</h1>"
        in browser.get("/analysis/notation/").content.decode()
    )
