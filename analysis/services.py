"""Every change to an analysis: the row is locked, the tree changed (analysis/tree.py) and
saved with the next version. Only its owner changes an analysis; nothing here touches a game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from analysis import selectors
from analysis.models import Analysis
from analysis.tree import ROOT, Tree, TreeError
from bots import searches
from bots.models import SearchJob
from games import selectors as games
from games.engine import normalized_options, rules_for
from games.messages import translated
from games.models import Game
from games.rules import InvalidOptions, game_info
from games.rules.notation import BadNotation, parse_game, parse_position, position_text
from realtime.errors import ServiceError

MOST_ANALYSES = 200  # per user: the oldest must be deleted before more are made


def start(
    *,
    user: User,
    game_id: int | None = None,
    ply: int | None = None,
    copy: str | None = None,
    slug: str | None = None,
    options: dict[str, Any] | None = None,
    position: str | None = None,
    moves: str | None = None,
) -> Analysis:
    """A new analysis: a copy of another one, of a game (its moves as the main line, `ply`
    the move shown), or of a position (the game's start by default) with moves played from
    it."""
    if Analysis.objects.filter(owner=user).count() >= MOST_ANALYSES:
        raise ServiceError(
            "too_many_analyses",
            _("You have %(count)s analyses: delete some before making more.")
            % {"count": MOST_ANALYSES},
        )
    if copy is not None:
        original = Analysis.objects.filter(key=copy).first()
        if original is None:
            raise ServiceError("no_such_analysis", _("There is no such analysis to copy."))
        return Analysis.objects.create(
            owner=user,
            slug=original.slug,
            options=original.options,
            game=original.game,
            ply=original.ply,
            tree=original.tree,
            current=original.current,
        )
    if game_id is not None:
        return _from_game(user, game_id, ply)
    if slug is None:
        raise ServiceError("bad_message", _("Give a game (`game`) or a game's `slug`."))
    try:
        specs = {spec.name: spec for spec in game_info(slug).options}
        # Whole numbers, as a game's options are kept (a form sends text).
        options = {k: specs[k].check(v) for k, v in normalized_options(slug, options or {}).items()}
        rules = rules_for(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    try:
        state = rules.initial_state() if position is None else parse_position(rules, position)
    except BadNotation as error:
        raise ServiceError("bad_position", translated(error)) from None
    try:
        line = [] if moves is None else parse_game(rules, moves, state)
    except BadNotation as error:
        raise ServiceError("bad_game", translated(error)) from None
    tree, last = _tree_of(rules, state, line)
    return Analysis.objects.create(
        owner=user, slug=slug, options=options, tree=tree.to_json(), current=last
    )


def _from_game(user: User, game_id: int, ply: int | None) -> Analysis:
    game = games.load_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    if game.status == Game.Status.ACTIVE and user.pk in (game.player1_id, game.player2_id):
        raise ServiceError(
            "game_in_progress", _("A game you play can be analysed once it is over.")
        )
    rules = rules_for(game.slug, game.options)
    line = [move for _, move in games.played(game)]
    if ply is not None and ply > len(line):
        raise ServiceError(
            "bad_message", _("ply must be from 0 to %(last)s in this game.") % {"last": len(line)}
        )
    tree, _node = _tree_of(rules, rules.initial_state(), line)
    shown = tree.main_line()[len(line) if ply is None else ply]
    return Analysis.objects.create(
        owner=user,
        slug=game.slug,
        options=game.options,
        game=game,
        ply=ply,
        tree=tree.to_json(),
        current=shown,
    )


def _tree_of(rules: Any, state: Any, line: list[str]) -> tuple[Tree, int]:
    try:
        return Tree.starting_at(position_text(rules, state)).play_line(rules, ROOT, line)
    except TreeError as error:
        raise ServiceError(error.code, translated(error)) from None


def play(*, user: User, key: str, node: int, move: str) -> tuple[Analysis, int]:
    """The move played at `node`: the node it leads to (made if new) becomes the current."""
    found: list[int] = []

    def change(analysis: Analysis, tree: Tree) -> Tree:
        changed, child = tree.play(rules_for(analysis.slug, analysis.options), node, move)
        found.append(child)
        analysis.current = child
        return changed

    return _change(user, key, change), found[0]


def delete_line(*, user: User, key: str, node: int) -> Analysis:
    """The node and all that follows it deleted; its parent becomes the current node."""

    def change(analysis: Analysis, tree: Tree) -> Tree:
        parent = tree.node(node).parent
        changed = tree.delete(node)
        if analysis.current not in changed.nodes:
            analysis.current = parent if parent is not None else ROOT
        return changed

    return _change(user, key, change)


def promote(*, user: User, key: str, node: int) -> Analysis:
    """The line to `node` made the main line."""
    return _change(user, key, lambda analysis, tree: tree.promote(node))


def go(*, user: User, key: str, node: int) -> Analysis:
    """`node` becomes the current node (the one the page opens on)."""

    def change(analysis: Analysis, tree: Tree) -> Tree:
        tree.node(node)
        analysis.current = node
        return tree

    return _change(user, key, change)


def remove(*, user: User, key: str) -> None:
    with transaction.atomic():
        _locked(user, key).delete()


def _change(user: User, key: str, change: Callable[[Analysis, Tree], Tree]) -> Analysis:
    with transaction.atomic():
        analysis = _locked(user, key)
        try:
            tree = change(analysis, Tree.from_json(analysis.tree))
        except TreeError as error:
            raise ServiceError(error.code, translated(error)) from None
        analysis.tree = tree.to_json()
        analysis.version += 1
        analysis.save(update_fields=["tree", "current", "version", "updated"])
        return analysis


def _locked(user: User, key: str) -> Analysis:
    analysis = Analysis.objects.select_for_update().filter(key=key).first()
    if analysis is None:
        raise ServiceError("no_such_analysis", _("There is no such analysis."))
    if analysis.owner_id != user.pk:
        raise ServiceError("not_yours", _("Only its owner changes an analysis: make a copy."))
    return analysis


def ask_computer(*, user: User, analysis: Analysis, node: int) -> SearchJob:
    """The computer's view of the node's position, asked for by `user` (anyone signed in who
    has the link: it changes nothing of the analysis). The user's older requests beyond
    bots.searches.MOST_PER_USER are cancelled."""
    tree = Tree.from_json(analysis.tree)
    try:
        position = tree.node(node).position
    except TreeError as error:
        raise ServiceError(error.code, translated(error)) from None
    rules = rules_for(analysis.slug, analysis.options)
    state = parse_position(rules, position)
    return searches.ask(
        owner=user,
        purpose=selectors.computer_purpose(analysis, node),
        slug=analysis.slug,
        options=analysis.options,
        state=rules.to_json(state),
        # Over: the result is known at once (one round, nothing to search).
        budgets=[1] if rules.outcome(state) is not None else None,
    )
