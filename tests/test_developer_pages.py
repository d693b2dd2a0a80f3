"""The developers' pages (botapi/developers.py): docs/API.md and docs/BOTS.md as pages of the
site, with its layout, reached from every page's footer and from the tokens page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from botapi.developers import render_document
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parent.parent / "docs"


def headings(markdown_text: str, level: str) -> list[str]:
    return re.findall(rf"^{level} (.+)$", markdown_text, re.M)


@pytest.mark.parametrize(
    ("path", "name"), [("/developers/api/", "API.md"), ("/developers/bots/", "BOTS.md")]
)
def test_each_document_is_a_page_of_the_site_with_every_section(path: str, name: str) -> None:
    text = (DOCS / name).read_text()
    page = Client().get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="site-footer"' in html  # the site's layout
    (title,) = headings(text, "#")
    assert f"<title>{title}" in html or title in html.split("</title>")[0]
    # Every section, in order, with an anchor to link to.
    found = re.findall(r"<h2 id=\"[^\"]+\">(.*?)</h2>", html)
    assert [re.sub(r"<[^>]+>", "", h) for h in found] == [
        re.sub(r"[`*]", "", h) for h in headings(text, "##")
    ]
    assert "<table>" in html or "|" not in text  # Markdown tables become tables
    assert 'aria-current="page"' in html


def test_the_api_page_has_the_tokens_limits_and_description_sections() -> None:
    html = Client().get("/developers/api/").content.decode()
    for anchor in ("tokens", "limits", "the-published-description"):
        assert f'id="{anchor}"' in html, anchor
    assert 'href="/api/openapi.json"' in html


def test_the_index_lists_the_documents_sections_and_the_description() -> None:
    html = Client().get("/developers/").content.decode()
    assert 'href="/developers/api/#tokens"' in html
    assert 'href="/developers/bots/"' in html
    assert 'href="/api/openapi.json"' in html
    assert 'href="/settings/tokens/"' in html


def test_every_page_links_to_the_developers_and_the_tokens_page_to_both_documents() -> None:
    home = Client().get("/").content.decode()
    assert '<a href="/developers/" id="footer-developers">' in home
    browser = Client()
    browser.force_login(make_user("alice"))
    tokens_page = browser.get("/settings/tokens/").content.decode()
    for link in re.findall(r'href="(/developers/[^"]*)"', tokens_page):
        assert browser.get(link).status_code == 200, link
    assert {"/developers/api/", "/developers/bots/"} <= set(
        re.findall(r'href="(/developers/[^"]*)"', tokens_page)
    )


def test_links_to_documents_lead_to_their_pages_and_other_files_are_named() -> None:
    document = render_document(
        "# T\n\nSee [the bots](BOTS.md#five-minutes), [API](docs/API.md), "
        "[errors](PROTOCOL.md), [notation](NOTATION.md), [lichess](https://lichess.org/) "
        "and [above](#t).\n\n## One\n\n## Two `x`\n"
    )
    assert document.title == "T"
    assert [heading for _anchor, heading in document.sections] == ["One", "Two x"]
    html = document.html
    assert '<a href="/developers/bots/#five-minutes">the bots</a>' in html
    assert '<a href="/developers/api/">API</a>' in html
    assert "<code>errors</code>" in html and "PROTOCOL.md" not in html
    assert '<a href="/analysis/notation/">notation</a>' in html
    assert '<a href="https://lichess.org/">lichess</a>' in html
    assert '<a href="#t">above</a>' in html
