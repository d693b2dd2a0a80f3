"""An analysis's moves as a tree (pure: no Django): variations, going back, promoting a line,
deleting one. Each node holds the move that led to it and the position after it (its text,
games/rules/notation.py), so a node is shown without replaying the line.

A node's first child is its main line; the others are variations, in the order they were
first played. Trees are values: every operation returns a new tree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from games.rules import IllegalMove
from games.rules.base import Refusal, gettext_noop
from games.rules.notation import parse_position, position_text

ROOT = 0
MOST_NODES = 2_000  # an analysis larger than this is refused: it is a page, not a database


class TreeError(Refusal):
    """An operation the tree refuses; `code` is the API's error code, the message a template
    and its params (as the engine's errors: games/messages.py translates it)."""

    def __init__(self, code: str, template: str, /, **params: Any) -> None:
        super().__init__(template, **params)
        self.code = code

    def __reduce__(self) -> tuple[Any, ...]:
        return (_tree_error, (self.code, self.template, self.params))


def _tree_error(code: str, template: str, params: dict[str, Any]) -> TreeError:
    return TreeError(code, template, **params)


@dataclass(frozen=True)
class Node:
    id: int
    parent: int | None
    move: str | None  # None at the root
    position: str
    children: tuple[int, ...] = ()


@dataclass(frozen=True)
class Tree:
    nodes: dict[int, Node] = field(default_factory=dict)
    next_id: int = 1

    @classmethod
    def starting_at(cls, position: str) -> Tree:
        return cls({ROOT: Node(ROOT, None, None, position)}, 1)

    def node(self, node_id: object) -> Node:
        if type(node_id) is not int or node_id not in self.nodes:
            raise TreeError(
                "no_such_node",
                gettext_noop("this analysis has no node %(node)s"),
                node=repr(node_id)[:20],
            )
        return self.nodes[node_id]

    def line(self, node_id: int) -> list[int]:
        """The nodes from the root to this one, the root first."""
        found = [node_id]
        parent = self.node(node_id).parent
        while parent is not None:
            found.append(parent)
            parent = self.nodes[parent].parent
        return found[::-1]

    def moves_to(self, node_id: int) -> list[str]:
        return [str(self.nodes[n].move) for n in self.line(node_id)[1:]]

    def main_line(self, node_id: int = ROOT) -> list[int]:
        """This node and, after it, the first child of each node to the end."""
        found = [node_id]
        while self.node(found[-1]).children:
            found.append(self.nodes[found[-1]].children[0])
        return found

    def play(self, rules: Any, node_id: int, move: object) -> tuple[Tree, int]:
        """The tree with `move` played at this node, and the node it leads to: an existing
        child if the move was played there before (written canonically), else a new last
        child. TreeError (`illegal_move`) when the move is not legal there."""
        parent = self.node(node_id)
        state = parse_position(rules, parent.position)
        if not isinstance(move, str):
            raise TreeError("illegal_move", gettext_noop("a move is text"))
        try:
            canonical = rules.canonical_move(state, move)
            after = rules.play(state, canonical)
        except IllegalMove as error:
            raise TreeError("illegal_move", error.template, **error.params) from None
        for child in parent.children:
            if self.nodes[child].move == canonical:
                return self, child
        if len(self.nodes) >= MOST_NODES:
            raise TreeError(
                "analysis_too_big",
                gettext_noop("an analysis holds at most %(most)s moves: delete a line"),
                most=MOST_NODES,
            )
        new = Node(self.next_id, node_id, canonical, position_text(rules, after))
        nodes = dict(self.nodes)
        nodes[new.id] = new
        nodes[node_id] = replace(parent, children=(*parent.children, new.id))
        return Tree(nodes, self.next_id + 1), new.id

    def play_line(self, rules: Any, node_id: int, moves: list[str]) -> tuple[Tree, int]:
        tree = self
        for move in moves:
            tree, node_id = tree.play(rules, node_id, move)
        return tree, node_id

    def delete(self, node_id: int) -> Tree:
        """The tree without this node and all that follows it (not the root)."""
        node = self.node(node_id)
        if node.parent is None:
            raise TreeError(
                "cannot_delete_root", gettext_noop("the starting position cannot be deleted")
            )
        gone: set[int] = set()
        frontier = [node_id]
        while frontier:
            current = frontier.pop()
            gone.add(current)
            frontier.extend(self.nodes[current].children)
        nodes = {n: kept for n, kept in self.nodes.items() if n not in gone}
        parent = nodes[node.parent]
        nodes[node.parent] = replace(
            parent, children=tuple(c for c in parent.children if c != node_id)
        )
        return Tree(nodes, self.next_id)

    def promote(self, node_id: int) -> Tree:
        """The tree with the line to this node made the main line: at each node on the way,
        the child towards it becomes the first."""
        nodes = dict(self.nodes)
        line = self.line(node_id)
        for parent, child in itertools.pairwise(line):
            children = nodes[parent].children
            nodes[parent] = replace(
                nodes[parent], children=(child, *(c for c in children if c != child))
            )
        return Tree(nodes, self.next_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [
                {
                    "id": n.id,
                    "parent": n.parent,
                    "move": n.move,
                    "position": n.position,
                    "children": list(n.children),
                }
                for n in sorted(self.nodes.values(), key=lambda n: n.id)
            ],
            "next_id": self.next_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tree:
        nodes = {
            item["id"]: Node(
                item["id"], item["parent"], item["move"], item["position"], tuple(item["children"])
            )
            for item in data["nodes"]
        }
        return cls(nodes, data["next_id"])
