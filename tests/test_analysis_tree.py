"""The analysis board's tree (analysis/tree.py, pure): variations, promotion, deletion, and
the moves it refuses. Positions are the notation's text, so each node shows what it holds."""

from __future__ import annotations

from typing import Any

import pytest

from analysis.tree import MOST_NODES, ROOT, Tree, TreeError
from games.rules import get_rules
from games.rules.notation import parse_position, position_text

DIFFUSION: Any = get_rules("diffusion")
START = position_text(DIFFUSION, DIFFUSION.initial_state())


def grown(*lines: list[str]) -> Tree:
    """A tree with each line played from the start."""
    tree = Tree.starting_at(START)
    for line in lines:
        tree, _ = tree.play_line(DIFFUSION, ROOT, line)
    return tree


def moves(tree: Tree, ids: list[int]) -> list[str | None]:
    return [tree.nodes[n].move for n in ids]


def test_a_move_played_again_where_it_was_played_is_the_same_node() -> None:
    tree, first = Tree.starting_at(START).play(DIFFUSION, ROOT, "i")
    again, second = tree.play(DIFFUSION, ROOT, "I")  # written canonically: the same move
    assert first == second and again is tree
    assert tree.nodes[first].move == "I"
    assert parse_position(DIFFUSION, tree.nodes[first].position) == DIFFUSION.play(
        DIFFUSION.initial_state(), "I"
    )


def test_a_new_move_is_a_variation_after_the_main_line() -> None:
    tree = grown(["I", "A", "J"], ["I", "B"], ["K"])
    assert moves(tree, tree.main_line()) == [None, "I", "A", "J"]
    first = tree.nodes[ROOT].children
    assert moves(tree, list(first)) == ["I", "K"]
    after_i = tree.nodes[first[0]].children
    assert moves(tree, list(after_i)) == ["A", "B"]
    assert tree.moves_to(after_i[1]) == ["I", "B"]


def test_promoting_a_variation_makes_its_whole_line_the_main_line() -> None:
    tree = grown(["I", "A", "J"], ["K", "C"])
    k_line = tree.nodes[ROOT].children[1]
    deep = tree.nodes[k_line].children[0]
    promoted = tree.promote(deep)
    assert moves(promoted, promoted.main_line()) == [None, "K", "C"]
    assert moves(promoted, list(promoted.nodes[ROOT].children)) == ["K", "I"]
    assert moves(tree, tree.main_line()) == [None, "I", "A", "J"]  # trees are values


def test_deleting_a_node_takes_all_that_follows_it() -> None:
    tree = grown(["I", "A", "J"], ["I", "B", "K"])
    i = tree.nodes[ROOT].children[0]
    b = tree.nodes[i].children[1]
    pruned = tree.delete(b)
    assert len(pruned.nodes) == len(tree.nodes) - 2
    assert moves(pruned, list(pruned.nodes[i].children)) == ["A"]
    pruned = pruned.delete(i)
    assert list(pruned.nodes) == [ROOT] and pruned.nodes[ROOT].children == ()
    # Ids are not reused: a link to a deleted node never shows another one.
    _, again = pruned.play(DIFFUSION, ROOT, "I")
    assert again not in tree.nodes


@pytest.mark.parametrize(
    ("act", "code"),
    [
        (lambda t: t.play(DIFFUSION, ROOT, "Q"), "illegal_move"),
        (lambda t: t.play(DIFFUSION, ROOT, 7), "illegal_move"),
        (lambda t: t.play(DIFFUSION, 99, "I"), "no_such_node"),
        (lambda t: t.delete(ROOT), "cannot_delete_root"),
        (lambda t: t.promote(99), "no_such_node"),
        (lambda t: t.node("1"), "no_such_node"),
    ],
)
def test_what_the_tree_refuses(act: Any, code: str) -> None:
    tree = grown(["I"])
    with pytest.raises(TreeError) as refused:
        act(tree)
    assert refused.value.code == code and str(refused.value)


def test_a_tree_holds_at_most_its_limit_of_moves() -> None:
    chess: Any = get_rules("diffusion-chess")
    tree = Tree.starting_at(position_text(chess, chess.initial_state()))
    legal = chess.client_moves(chess.initial_state())["destinations"]
    paths = [path for targets in legal.values() for path in targets.values()]
    assert len(paths) < MOST_NODES
    for path in paths:
        tree, _ = tree.play(chess, ROOT, path)
    filler = Tree(
        {**tree.nodes, **{n: tree.nodes[1] for n in range(10_000, 10_000 + MOST_NODES)}}, 20_000
    )
    with pytest.raises(TreeError) as refused:
        filler.play(chess, 1, "echo")
    assert refused.value.code == "analysis_too_big"


def test_a_tree_reads_back_from_its_json() -> None:
    tree = grown(["I", "A"], ["K"])
    assert Tree.from_json(tree.to_json()) == tree
