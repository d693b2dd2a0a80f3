"""The "How to play" pages (/rules/): one page per game written in docs/rules/<slug>.md, with
board diagrams whose positions the rule engine computes from the moves each diagram names."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from games.models import Game
from games.rules import available_games, get_rules
from games.rules_pages import DiagramError, render_rules
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
SLUGS = ["diffusion", "four-rank-diffusion", "diffusion-chess", "zigzag"]
NAMES = {game["slug"]: game["name"] for game in available_games()}
# Read the Markdown here independently of games/rules_pages.py: the test's own parser.
FENCE = re.compile(r"^```diagram\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def diagrams_on(page: str) -> list[dict[str, Any]]:
    found = re.search(r'<script id="diagrams-data" type="application/json">(.*?)</script>', page)
    assert found, "the diagrams' data is missing"
    data: list[dict[str, Any]] = json.loads(found.group(1))
    return data


def specs_in(slug: str) -> list[dict[str, Any]]:
    text = (ROOT / "docs" / "rules" / f"{slug}.md").read_text(encoding="utf-8")
    return [json.loads(body) for body in FENCE.findall(text)]


def played(slug: str, spec: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(rules, the position before the last move or None, the position after all moves)."""
    rules = get_rules(slug, **spec.get("options", {}))
    before, state = None, rules.initial_state()
    for move in spec.get("moves", []):
        before, state = state, rules.play(state, move)
    return rules, before, state


# --- the pages -------------------------------------------------------------------------------


def test_every_registered_game_has_a_rules_file() -> None:
    assert sorted(NAMES) == sorted(SLUGS)
    for slug in SLUGS:
        assert (ROOT / "docs" / "rules" / f"{slug}.md").is_file(), slug


@pytest.mark.parametrize("slug", SLUGS)
def test_each_game_has_a_rules_page_with_its_title(client: Client, slug: str) -> None:
    response = client.get(f"/rules/{slug}/")
    assert response.status_code == 200
    page = response.content.decode()
    name = NAMES[slug]
    assert f"<title>How to play {name} · Diffusion online</title>" in page
    assert re.search(rf"<h1[^>]*>How to play {re.escape(name)}</h1>", page)
    assert "/static/js/rules.js" in page and 'type="module"' in page
    assert "/static/css/rules.css" in page


def test_the_rules_index_links_to_every_game(client: Client) -> None:
    response = client.get("/rules/")
    assert response.status_code == 200
    page = response.content.decode()
    for slug in SLUGS:
        assert f'href="/rules/{slug}/"' in page, slug
        assert NAMES[slug] in page


def test_an_unknown_game_has_no_rules_page(client: Client) -> None:
    for path in ("/rules/chess/", "/rules/DIFFUSION/", "/rules/diffusion-chess.md/"):
        assert client.get(path).status_code == 404, path


@pytest.mark.parametrize("slug", SLUGS)
def test_each_rules_page_has_three_diagrams_or_more_each_computed_by_the_engine(
    client: Client, slug: str
) -> None:
    page = client.get(f"/rules/{slug}/").content.decode()
    shown = diagrams_on(page)
    specs = specs_in(slug)
    assert len(specs) >= 3
    assert len(shown) == len(specs)
    for index, (view, spec) in enumerate(zip(shown, specs, strict=True)):
        where = f"{slug} diagram {index + 1}"
        rules, before, state = played(slug, spec)
        assert view["state"] == rules.to_json(state), where
        assert view["board"] == rules.board(), where
        if spec.get("moves") and spec.get("changes", True):
            assert view["previous"] == rules.to_json(before), where
            assert view["lastMove"] == rules.canonical_move(before, spec["moves"][-1]), where
        else:
            assert view["previous"] is None, where
        assert view["slug"] == slug
        # The page has the diagram's container, and its caption.
        assert f'<div class="rules-board" data-diagram="{index}">' in page, where
        assert f"<strong>Diagram {index + 1}.</strong>" in page, where


@pytest.mark.parametrize("slug", SLUGS)
def test_every_diagram_checks_the_position_its_caption_describes(slug: str) -> None:
    # A typo that still names legal moves draws another position: the check catches it.
    for index, spec in enumerate(specs_in(slug)):
        assert spec.get("check"), f"{slug} diagram {index + 1} checks nothing"


@pytest.mark.parametrize("slug", SLUGS)
def test_without_javascript_each_diagram_shows_the_engines_text_board(
    client: Client, slug: str
) -> None:
    page = client.get(f"/rules/{slug}/").content.decode()
    boards = [
        unescape(text) for text in re.findall(r'<pre class="board-text">(.*?)</pre>', page, re.S)
    ]
    expected = []
    for spec in specs_in(slug):
        rules, _, state = played(slug, spec)
        expected.append(rules.render_text(state))
    assert boards == expected


@pytest.mark.parametrize("slug", SLUGS)
def test_the_rules_pages_hold_nothing_the_content_security_policy_would_block(
    client: Client, slug: str
) -> None:
    response = client.get(f"/rules/{slug}/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    page = response.content.decode()
    assert "style=" not in page
    assert "<style" not in page
    for tag in re.findall(r"<script[^>]*>", page):
        assert 'type="application/json"' in tag or " src=" in tag, tag
    assert not re.search(r"<[^>]+\son[a-z]+=", page), "an inline event handler"


# --- what a diagram may say ------------------------------------------------------------------


def diagram_page(spec: str, slug: str = "diffusion") -> Any:
    return render_rules(slug, f"# Test\n\n```diagram\n{spec}\n```\n", "docs/rules/test.md")


def test_a_diagram_is_drawn_from_its_moves_with_what_the_last_move_changed() -> None:
    page = diagram_page('{"moves": ["H", "c"], "caption": "Two moves."}')
    assert page.title == "Test"
    (view,) = page.diagrams
    rules = get_rules("diffusion")
    after_h = rules.play(rules.initial_state(), "H")
    assert view["state"] == rules.to_json(rules.play(after_h, "C"))
    assert view["previous"] == rules.to_json(after_h)
    assert view["lastMove"] == "C"
    assert view["status"] == "South to move."
    assert 'id="diagram-1"' in page.html and "Two moves." in page.html


def test_a_zigzag_diagram_takes_the_games_options() -> None:
    page = diagram_page(
        '{"options": {"pits": 4, "seeds": 3}, "moves": ["a"], "caption": "Small."}', "zigzag"
    )
    assert page.diagrams[0]["state"]["rows"] == [[3, 4, 3, 4], [0, 3, 4, 3]]


def test_a_check_on_a_mapping_looks_only_at_the_entries_it_names() -> None:
    def checked(sizes: dict[str, int]) -> Any:
        spec = {"moves": ["j3-j4-k4"], "caption": "x", "check": {"sizes": sizes}}
        return render_rules("diffusion-chess", f"```diagram\n{json.dumps(spec)}\n```\n")

    assert checked({"k4": 9}).diagrams[0]["state"]["sizes"]["k4"] == 9
    with pytest.raises(DiagramError, match=re.escape("sizes is {'k4': 9}, not {'k4': 4}")):
        checked({"k4": 4})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('{"moves": ["H", "H"], "caption": "x"}', "move 2 (H) is refused: pit H is empty"),
        ('{"moves": ["Q"], "caption": "x"}', "move 1 (Q) is refused: no such pit: Q"),
        ('{"moves": [], "caption": "x", "check": {"stores": [1, 0]}}', "stores is [0, 0]"),
        ('{"moves": [], "caption": "x", "colour": "red"}', "unknown key colour"),
        ('{"moves": []}', "needs a caption"),
        ('{"moves": "H", "caption": "x"}', "moves must be a list"),
        ('{"options": {"pits": 3}, "caption": "x"}', "Diffusion has no option pits"),
        ('{"moves": [H], "caption": "x"}', "not JSON"),
    ],
)
def test_a_diagram_the_engine_cannot_draw_is_refused_naming_the_file_and_why(
    spec: str, message: str
) -> None:
    with pytest.raises(DiagramError) as refused:
        diagram_page(spec)
    assert str(refused.value).startswith("docs/rules/test.md, diagram 1: ")
    assert message in str(refused.value)


# --- links to the rules ----------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_every_game_page_links_to_its_rules_in_one_click(client: Client, slug: str) -> None:
    game: Game = new_game(slug)
    page = client.get(f"/games/{game.pk}/").content.decode()
    head = page.index('class="game-head"')
    link = page.index(f'href="/rules/{slug}/"')
    assert head < link < page.index('class="game-body'), "the link belongs to the game's head"
    # A phone's narrow head says it in one word, as the site's menu does.
    assert re.search(
        rf'<a [^>]*href="/rules/{slug}/"[^>]*><span class="wide-only">How&nbsp;to&nbsp;play'
        r'</span><span class="narrow-only">Rules</span></a>',
        page,
    )
    assert client.get(f"/rules/{slug}/").status_code == 200


def test_the_lobby_links_to_the_rules_beside_its_forms_and_for_each_game(client: Client) -> None:
    visitor = client.get("/").content.decode()
    assert 'id="nav-rules"' in visitor and 'href="/rules/"' in visitor
    for slug in SLUGS:
        assert f'href="/rules/{slug}/"' in visitor, slug
    player = Client()
    player.force_login(make_user("alice"))
    page = player.get("/").content.decode()
    for form in ("seek", "challenge"):
        start = page.index(f'<form id="{form}-form"')
        end = page.index("</form>", start)
        assert 'href="/rules/"' in page[start:end], form
