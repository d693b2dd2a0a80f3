"""The developers' pages: /developers/, and docs/API.md and docs/BOTS.md as pages of the site
(/developers/api/, /developers/bots/), rendered from the repository's Markdown as the rules
pages are (games/rules_pages.py), so the page and the file never differ.

A link in the Markdown to one of these documents, to the description or to the notation leads
to its page; a link to another file of the repository (docs/PROTOCOL.md ...) is shown as the
file's name, not as a link that would lead nowhere on the site.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import markdown
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

DOCS = Path(settings.BASE_DIR) / "docs"
# A document's file name -> its page on the site (what a link to it leads to).
PAGES = {
    "API.md": "/developers/api/",
    "BOTS.md": "/developers/bots/",
    "openapi.json": "/api/openapi.json",
    "NOTATION.md": "/analysis/notation/",
}


@dataclass(frozen=True)
class Document:
    title: str
    html: str
    sections: list[tuple[str, str]]  # (anchor, heading) of each `##`


class _Links(Treeprocessor):
    """Links to the repository's files: to their pages, or their names as code."""

    def run(self, root: ElementTree.Element) -> None:
        for parent in root.iter():
            for index, child in enumerate(list(parent)):
                if child.tag != "a":
                    continue
                href = child.get("href", "")
                if not href or "://" in href or href.startswith(("#", "/", "mailto:")):
                    continue
                name, _hash, anchor = href.partition("#")
                page = PAGES.get(Path(name).name)
                if page is not None:
                    child.set("href", page + (f"#{anchor}" if anchor else ""))
                    continue
                # A file of the repository: named, not linked.
                code = ElementTree.Element("code")
                code.text = "".join(child.itertext())
                code.tail = child.tail
                parent.remove(child)
                parent.insert(index, code)


class _Headings(Treeprocessor):
    """Remembers the title (the first `#`) and the sections (`##`), after toc set ids."""

    def __init__(self, md: markdown.Markdown) -> None:
        super().__init__(md)
        self.title = ""
        self.sections: list[tuple[str, str]] = []

    def run(self, root: ElementTree.Element) -> None:
        heading = root.find("h1")
        if heading is not None:
            self.title = "".join(heading.itertext())
        self.sections = [
            (element.get("id", ""), "".join(element.itertext())) for element in root.iter("h2")
        ]


class _DeveloperExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:
        self.headings = _Headings(md)
        md.treeprocessors.register(_Links(md), "developer-links", 2)
        # After toc (priority 5 is the inline processor's; toc runs at its own, lower one).
        md.treeprocessors.register(self.headings, "developer-headings", -1)


def render_document(text: str) -> Document:
    extension = _DeveloperExtension()
    html = markdown.markdown(
        text,
        extensions=[extension, "tables", "fenced_code", "sane_lists", "toc"],
        extension_configs={"toc": {"permalink": False}},
        output_format="html",
    )
    return Document(extension.headings.title, html, extension.headings.sections)


@lru_cache(maxsize=8)
def _cached(path: Path, modified: int) -> Document:
    return render_document(path.read_text(encoding="utf-8"))


def document(name: str) -> Document | None:
    """docs/<name> rendered, or None while it is not written (an edited file is rendered
    again)."""
    path = DOCS / name
    try:
        modified = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    return _cached(path, modified)


def _page(request: HttpRequest, name: str, current: str) -> HttpResponse:
    found = document(name)
    if found is None:
        raise Http404(f"docs/{name} is not written yet.")
    context: dict[str, Any] = {
        "document": found,
        # Trusted: our own Markdown, from the repository.
        "body": mark_safe(found.html),
        "current": current,
        "source": f"docs/{name}",
    }
    return render(request, "botapi/document.html", context)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    documents = [
        ("api", "/developers/api/", _("The Bot API"), document("API.md")),
        ("bots", "/developers/bots/", _("Writing a bot"), document("BOTS.md")),
    ]
    return render(
        request,
        "botapi/developers.html",
        {"documents": [entry for entry in documents if entry[3] is not None]},
    )


@require_GET
def api_page(request: HttpRequest) -> HttpResponse:
    return _page(request, "API.md", "api")


@require_GET
def bots_page(request: HttpRequest) -> HttpResponse:
    return _page(request, "BOTS.md", "bots")
