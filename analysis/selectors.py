"""What the analysis board shows: the tree, and the position at one node drawn as a game's
page draws it (the engine's state, the legal moves, the result)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from analysis.models import Analysis
from analysis.tree import Tree, TreeError
from bots.models import SearchJob
from games.engine import client_moves, normalized_options, rules_for
from games.messages import translated
from games.rules import InvalidOptions
from games.rules.notation import editor_fields, game_text, parse_position, position_text
from games.selectors import title_for
from realtime.errors import ServiceError


def load(key: str) -> Analysis:
    analysis = Analysis.objects.select_related("owner").filter(key=key).first()
    if analysis is None:
        raise ServiceError("no_such_analysis", _("There is no such analysis."))
    return analysis


def analysis_json(analysis: Analysis, node_id: int | None = None) -> dict[str, Any]:
    """The analysis, with the position at `node_id` (its current node by default)."""
    tree = Tree.from_json(analysis.tree)
    shown = analysis.current if node_id is None else node_id
    try:
        node = tree.node(shown)
    except TreeError as error:
        raise ServiceError(error.code, translated(error)) from None
    rules = rules_for(analysis.slug, analysis.options)
    state = parse_position(rules, node.position)
    outcome = rules.outcome(state)
    return {
        "key": analysis.key,
        "slug": analysis.slug,
        "options": analysis.options,
        "title": title_for(analysis.slug, analysis.options),
        "owner": analysis.owner.username,
        "game": analysis.game_id,
        "ply": analysis.ply,
        "version": analysis.version,
        "current": analysis.current,
        "board": rules.board(),
        # Without each node's position: the page needs the moves, and the shown node's
        # position below (a long game's positions would make every answer ten times larger).
        "tree": {
            "nodes": [
                {key: value for key, value in node.items() if key != "position"}
                for node in tree.to_json()["nodes"]
            ],
            "next_id": tree.next_id,
        },
        "node": {
            "id": node.id,
            "moves": tree.moves_to(node.id),
            # The line as a game's text (docs/NOTATION.md), to copy and paste elsewhere.
            "line": game_text(tree.moves_to(node.id)),
            "position": node.position,
            "state": rules.to_json(state),
            "to_move": rules.to_move(state),
            "legal": client_moves(rules, state) if outcome is None else [],
            "result": None
            if outcome is None
            else {"winner": outcome.winner, "reason": translated(outcome)},
        },
    }


def listed(user: Any) -> list[dict[str, Any]]:
    """The user's analyses, the latest changed first (the newest 200)."""
    return [
        {
            "key": analysis.key,
            "title": title_for(analysis.slug, analysis.options),
            "game": analysis.game_id,
            "updated": analysis.updated.isoformat(),
        }
        for analysis in Analysis.objects.filter(owner=user).order_by("-updated")[:200]
    ]


def computer_view(analysis: Analysis, node: int) -> SearchJob | None:
    """The latest search asked for at this node, whoever asked."""
    return (
        SearchJob.objects.filter(purpose=computer_purpose(analysis, node))
        .exclude(status=SearchJob.Status.CANCELLED)
        .order_by("-id")
        .first()
    )


def board_of(slug: str, options: dict[str, Any]) -> dict[str, Any]:
    """A game's board description, its start as a position's text and how the position
    editor sets up each field of that text (its words in the active language)."""
    try:
        rules = rules_for(slug, normalized_options(slug, options))
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    return {
        "slug": slug,
        "board": rules.board(),
        "start": position_text(rules, rules.initial_state()),
        "editor": {"fields": [_said(field) for field in editor_fields(rules)]},
    }


# The words of an editor's field, marked in English by the engine (games/rules/notation.py).
_WORDS = ("label", "hint")


def _said(field: dict[str, Any]) -> dict[str, Any]:
    """An editor's field with its words in the active language (a copy: the engine's stays)."""
    said = {key: translated(value) if key in _WORDS else value for key, value in field.items()}
    if "labels" in field:
        said["labels"] = [translated(label) for label in field["labels"]]
    for key in ("choices", "men"):
        if key in field:
            said[key] = [_said(item) for item in field[key]]
    return said


def computer_purpose(analysis: Analysis, node: int) -> str:
    """The search jobs' purpose for the computer's view of one node (bots/searches.py)."""
    return f"analysis:{analysis.key}:{node}"
