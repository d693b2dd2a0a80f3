"""The "How to play" pages: /rules/ and /rules/<slug>/.

Each game's rules are written in Markdown in docs/rules/<slug>.md. A board diagram is a
fenced block that names moves, never a position:

    ```diagram
    {"moves": ["H", "C"], "caption": "North scoops C ...", "check": {"stores": [0, 2]}}
    ```

The page plays those moves from the opening with the rule engine (games/rules), so a diagram
cannot show a position the rules do not reach; a move the engine refuses, an unknown key or a
`check` (part of the state JSON the caption relies on) that does not hold is an error naming
the file and the diagram. The computed states go to the page as JSON data, and
static/js/rules.js draws them with the game page's own renderers.

Keys of a diagram: `moves` (from the opening, in the notation players type), `caption`
(Markdown), `options` (game options, e.g. ZigZag's pits and seeds), `changes` (mark what the
last move changed; default true), `flipped` (North's or Black's view) and `check` (keys of
the state JSON and the values the caption relies on; a mapping is checked for the entries it
names only, e.g. {"sizes": {"c9": 2}}).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import markdown
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.functional import Promise
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy
from django.views.decorators.http import require_GET
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from games.messages import described_games, translated
from games.rules import IllegalMove, InvalidOptions, available_games, get_rules

RULES_DIR = Path(settings.BASE_DIR) / "docs" / "rules"
DIAGRAM_KEYS = frozenset({"moves", "caption", "options", "changes", "flipped", "check"})
# A fenced block whose info string is "diagram"; its body is one JSON object.
DIAGRAM_FENCE = re.compile(r"^```diagram[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# What static/js/rules.js reads of a diagram to draw it.
DRAWN = frozenset({"slug", "board", "state", "previous", "lastMove", "flipped", "ply"})
# How the pages name the two players (player 1 moves first and sits at the bottom).
PLAYER_NAMES: dict[str, tuple[Promise, Promise]] = {
    "diffusion-chess": (pgettext_lazy("player", "White"), pgettext_lazy("player", "Black"))
}
DEFAULT_PLAYER_NAMES = (pgettext_lazy("player", "South"), pgettext_lazy("player", "North"))


class DiagramError(ValueError):
    """A diagram the engine cannot draw: the message names the file, the diagram and why."""


@dataclass(frozen=True)
class RulesPage:
    slug: str
    name: str
    title: str  # the Markdown's first heading
    html: str
    diagrams: list[dict[str, Any]]


def documented_games() -> list[dict[str, Any]]:
    """The registered games that have a rules page, in the registry's order."""
    return [game for game in described_games() if (RULES_DIR / f"{game['slug']}.md").is_file()]


def diagram(slug: str, spec: dict[str, Any], where: str) -> dict[str, Any]:
    """The view a board renderer takes, computed by the engine from the spec's moves."""
    if not isinstance(spec, dict):
        raise DiagramError(f"{where}: a diagram is a JSON object")
    unknown = sorted(set(spec) - DIAGRAM_KEYS)
    if unknown:
        raise DiagramError(f"{where}: unknown key {', '.join(unknown)}")
    moves, options = spec.get("moves", []), spec.get("options", {})
    caption = spec.get("caption")
    if not isinstance(caption, str) or not caption.strip():
        raise DiagramError(f"{where}: a diagram needs a caption")
    if not isinstance(moves, list) or not all(isinstance(move, str) for move in moves):
        raise DiagramError(f"{where}: moves must be a list of moves written as text")
    if not isinstance(options, dict):
        raise DiagramError(f"{where}: options must be an object")
    try:
        rules = get_rules(slug, **options)
    except InvalidOptions as error:
        raise DiagramError(f"{where}: {error}") from None
    state = rules.initial_state()
    previous, last = None, None
    for number, move in enumerate(moves, 1):
        try:
            last = rules.canonical_move(state, move)
            previous, state = state, rules.play(state, move)
        except IllegalMove as error:
            raise DiagramError(f"{where}: move {number} ({move}) is refused: {error}") from None
    data = rules.to_json(state)
    check = spec.get("check") or {}
    if not isinstance(check, dict):
        raise DiagramError(f"{where}: check must be an object")
    for key, wanted in check.items():
        found = data.get(key)
        if isinstance(wanted, dict) and isinstance(found, dict):
            # A part of a mapping, e.g. {"sizes": {"c9": 2}}: only the entries named.
            found = {name: found.get(name) for name in wanted}
        if found != wanted:
            raise DiagramError(
                f"{where}: after its moves {key} is {found!r}, not {wanted!r} as checked"
            )
    changes = spec.get("changes", True)
    return {
        "slug": slug,
        "options": options,
        "moves": moves,
        "caption": caption,
        "board": rules.board(),
        "state": data,
        "previous": rules.to_json(previous) if previous is not None and changes else None,
        "lastMove": last,
        "flipped": bool(spec.get("flipped", False)),
        "ply": len(moves),
        "status": _status(slug, rules, state),
        "text": rules.render_text(state),
    }


def _status(slug: str, rules: Any, state: Any) -> str:
    names = PLAYER_NAMES.get(slug, DEFAULT_PLAYER_NAMES)
    outcome = rules.outcome(state)
    if outcome is None:
        return _("%(name)s to move.") % {"name": names[rules.to_move(state) - 1]}
    if outcome.winner is None:
        return _("Game over, a draw: %(reason)s.") % {"reason": translated(outcome)}
    return _("Game over, %(name)s wins: %(reason)s.") % {
        "name": names[outcome.winner - 1],
        "reason": translated(outcome),
    }


def _figure(index: int, view: dict[str, Any]) -> str:
    moves = " ".join(f"<code>{escape(move)}</code>" for move in view["moves"])
    played = (
        _("Moves from the start: %(moves)s.") % {"moves": moves}
        if moves
        else _("The starting position.")
    )
    caption = markdown.markdown(view["caption"])
    label = "<strong>" + escape(_("Diagram %(number)s.") % {"number": index + 1}) + "</strong> "
    caption = f"<p>{label}{caption[3:]}" if caption.startswith("<p>") else label + caption
    return (
        f'<figure class="rules-diagram" id="diagram-{index + 1}">'
        f'<div class="rules-board" data-diagram="{index}">'
        # Without JavaScript, the board as text (rules.js draws it in its place).
        f'<noscript><pre class="board-text">{escape(view["text"])}</pre></noscript></div>'
        f"<figcaption>{caption}"
        f'<p class="diagram-facts">{played} {escape(view["status"])}</p></figcaption>'
        "</figure>"
    )


class _Diagrams(Preprocessor):
    """Replaces each ```diagram block by its figure (kept out of Markdown's reach)."""

    def __init__(self, md: markdown.Markdown, slug: str, source: str) -> None:
        super().__init__(md)
        self.slug = slug
        self.source = source
        self.views: list[dict[str, Any]] = []

    def run(self, lines: list[str]) -> list[str]:
        def replace(found: re.Match[str]) -> str:
            index = len(self.views)
            where = f"{self.source}, diagram {index + 1}"
            try:
                spec = json.loads(found.group("body"))
            except json.JSONDecodeError as error:
                raise DiagramError(f"{where}: not JSON: {error}") from None
            view = diagram(self.slug, spec, where)
            self.views.append(view)
            return "\n\n" + self.md.htmlStash.store(_figure(index, view)) + "\n\n"

        return DIAGRAM_FENCE.sub(replace, "\n".join(lines)).split("\n")


class _Title(Treeprocessor):
    """Remembers the first heading: the page's title."""

    title = ""

    def run(self, root: ElementTree.Element) -> None:
        heading = root.find("h1")
        if heading is not None:
            self.title = "".join(heading.itertext())


class _RulesExtension(Extension):
    def __init__(self, slug: str, source: str) -> None:
        super().__init__()
        self.slug = slug
        self.source = source
        self.diagrams: _Diagrams | None = None
        self.titles = _Title()

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        self.diagrams = _Diagrams(md, self.slug, self.source)
        self.titles.md = md
        # After whitespace normalisation (30), which would strip the stash's placeholder
        # markers, and before fenced code (25) and raw HTML (20) could touch the fences.
        md.preprocessors.register(self.diagrams, "rules-diagrams", 28)
        md.treeprocessors.register(self.titles, "rules-title", 1)


def render_rules(slug: str, text: str, source: str = "rules") -> RulesPage:
    """The page for one game's rules Markdown; DiagramError if a diagram cannot be drawn."""
    names = {game["slug"]: game["name"] for game in available_games()}
    extension = _RulesExtension(slug, source)
    html = markdown.markdown(
        text, extensions=[extension, "tables", "sane_lists", "toc"], output_format="html"
    )
    return RulesPage(
        slug=slug,
        name=names[slug],
        title=extension.titles.title or names[slug],
        html=html,
        diagrams=extension.diagrams.views if extension.diagrams else [],
    )


def rules_path(slug: str, language: str) -> Path:
    """The page's Markdown in a language: docs/rules/<language>/<slug>.md, English's at the
    top (a language without its translation of a page falls back to English)."""
    translated = RULES_DIR / language / f"{slug}.md"
    if language != settings.LANGUAGE_CODE and translated.is_file():
        return translated
    return RULES_DIR / f"{slug}.md"


@lru_cache(maxsize=64)
def _cached(slug: str, language: str, path: Path, modified: int) -> RulesPage:
    # Rendered in the page's language: the diagrams' facts ("South to move.") are the site's.
    with translation.override(language):
        source = str(path.relative_to(settings.BASE_DIR))
        return render_rules(slug, path.read_text(encoding="utf-8"), source)


def rules_page_for(slug: str, language: str | None = None) -> RulesPage | None:
    """The rendered page of a game in a language (the active one by default), or None when
    there is no such game or no page for it."""
    if slug not in {game["slug"] for game in available_games()}:
        return None
    language = language or translation.get_language() or settings.LANGUAGE_CODE
    path = rules_path(slug, language)
    try:
        modified = path.stat().st_mtime_ns  # an edited file is rendered again
    except FileNotFoundError:
        return None
    return _cached(slug, language, path, modified)


@require_GET
def rules_index(request: HttpRequest) -> HttpResponse:
    return render(request, "games/rules_index.html", {"games": documented_games()})


@require_GET
def rules_page(request: HttpRequest, slug: str) -> HttpResponse:
    page = rules_page_for(slug)
    if page is None:
        raise Http404(f"There are no rules for {slug!r}.")
    context = {
        "page": page,
        # Trusted: our own Markdown, from the repository (raw HTML in it is passed through).
        "body": mark_safe(page.html),
        # What rules.js needs to draw each board (captions and text boards are in the page).
        "diagrams": [
            {key: value for key, value in view.items() if key in DRAWN} for view in page.diagrams
        ],
        "games": documented_games(),
    }
    return render(request, "games/rules.html", context)
