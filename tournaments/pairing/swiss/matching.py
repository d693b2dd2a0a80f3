"""Matchings the Dutch system needs to look ahead: can these players all be paired?

Edmonds' blossom algorithm for general graphs (players of any score may meet), and Kuhn's
augmenting paths for the two-sided question of how many floaters a bracket can take.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

Allowed = Callable[[int, int], bool]


def maximum_matching(adjacency: Sequence[Sequence[int]], *, stop_short: bool = False) -> int:
    """The number of pairs in a maximum matching of a graph given by its adjacency lists
    (vertex i's neighbours, by index; in rank order, which the greedy start relies on).

    With `stop_short`, gives up (returning what it has) at the first vertex left single: the
    answer is then below a perfect matching whenever one does not exist, which is all the
    completion test asks, at a fraction of the cost.
    """
    n = len(adjacency)
    match = [-1] * n
    # Greedily first, nearest neighbours in rank order: it leaves few vertices for the search.
    for v in range(n):
        if match[v] == -1:
            for u in adjacency[v]:
                if match[u] == -1:
                    match[u], match[v] = v, u
                    break
    for root in range(n):
        if match[root] == -1 and not _augment(root, adjacency, match) and stop_short:
            break
    return sum(1 for m in match if m != -1) // 2


def _augment(root: int, adjacency: Sequence[Sequence[int]], match: list[int]) -> bool:
    """Search an augmenting path from the single `root`, contracting blossoms; apply it."""
    n = len(adjacency)
    parent = [-1] * n
    base = list(range(n))
    used = [False] * n
    used[root] = True
    queue = deque([root])

    def lowest_common_ancestor(a: int, b: int) -> int:
        seen = [False] * n
        while True:
            a = base[a]
            seen[a] = True
            if match[a] == -1:
                break
            a = parent[match[a]]
        while True:
            b = base[b]
            if seen[b]:
                return b
            b = parent[match[b]]

    def mark_path(v: int, stem: int, child: int, blossom: list[bool]) -> None:
        while base[v] != stem:
            blossom[base[v]] = blossom[base[match[v]]] = True
            parent[v] = child
            child = match[v]
            v = parent[match[v]]

    while queue:
        v = queue.popleft()
        for to in adjacency[v]:
            if base[v] == base[to] or match[v] == to:
                continue
            if to == root or (match[to] != -1 and parent[match[to]] != -1):
                stem = lowest_common_ancestor(v, to)
                blossom = [False] * n
                mark_path(v, stem, to, blossom)
                mark_path(to, stem, v, blossom)
                for i in range(n):
                    if blossom[base[i]]:
                        base[i] = stem
                        if not used[i]:
                            used[i] = True
                            queue.append(i)
            elif parent[to] == -1:
                parent[to] = v
                if match[to] == -1:
                    while to != -1:  # flip the path back to the root
                        previous = parent[to]
                        following = match[previous]
                        match[to], match[previous] = previous, to
                        to = following
                    return True
                used[match[to]] = True
                queue.append(match[to])
    return False


def bipartite_matching(left: Sequence[int], right: Sequence[int], allowed: Allowed) -> int:
    """The most players of `left` that can each be paired with a different one of `right`."""
    owner: dict[int, int] = {}

    def place(a: int, seen: set[int]) -> bool:
        for b in right:
            if b not in seen and allowed(a, b):
                seen.add(b)
                if b not in owner or place(owner[b], seen):
                    owner[b] = a
                    return True
        return False

    return sum(1 for a in left if place(a, set()))
