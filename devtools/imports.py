"""The house's import graph, read from the source: `python -m devtools.imports [--root DIR]`.

Prints the lines of product and tooling code, every import that runs from a lower floor of
the house up to a higher one (the floors are FLOORS: the ground first, config's roof last),
and every import circle between modules. `--root` reads another checkout, so a tree from
before a restructuring can be measured the same way. tests/test_architecture.py holds the
rules; this prints the figures.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

# From the ground up. Packages on one floor may not import each other either way only where
# the architecture test says so; here a floor number is what "up" means.
FLOORS = {
    "realtime": 0,
    "accounts": 1,
    "games": 2,
    "ratings": 3,
    "bots": 3,
    "lobby": 4,
    "follows": 5,
    "config": 6,
}
TOOLING = ("devtools",)
# Before the restructuring the tooling lived inside the product: these paths were tooling.
OLD_TOOLING = (
    "lobby/chaos/",
    "lobby/management/commands/chaos.py",
    "lobby/management/commands/wsburst.py",
    "lobby/management/commands/lobbybench.py",
    "games/management/commands/loadtest.py",
    "games/management/commands/stackfloor.py",
    "bots/management/commands/botbench.py",
    "bots/loadbench.py",
    "bots/search/ladder.py",
    "config/benchservers.py",
    "config/bare_asgi.py",
    "config/benchstats.py",
    "games/rules/bench.py",
)


def sources(root: Path, packages: tuple[str, ...]) -> Iterator[Path]:
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The project modules `path` imports (`from a import b` counts as a.b when that is a
    module, else as a)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
                break
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def lines(paths: list[Path]) -> int:
    return sum(len(path.read_text().splitlines()) for path in paths)


def report(root: Path) -> None:
    product_packages = tuple(p for p in FLOORS if (root / p).is_dir())
    product = list(sources(root, product_packages))
    tooling = list(sources(root, tuple(p for p in TOOLING if (root / p).is_dir())))
    old = [p for p in product if str(p.relative_to(root)).startswith(OLD_TOOLING)]
    product = [p for p in product if p not in old]
    tooling += old
    print(
        f"lines of Python: product {lines(product):,}  tooling {lines(tooling):,} "
        f"(of which inside the product's packages: {lines(old):,})"
    )

    modules = {module_name(root, path): path for path in product}
    known = set(modules)
    graph = {name: imports_of(path, known) - {name} for name, path in modules.items()}
    up: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, targets in graph.items():
        for target in targets:
            here, there = name.split(".")[0], target.split(".")[0]
            if FLOORS[there] > FLOORS[here]:
                up[(here, there)].append(f"{name} -> {target}")
    edges = sum(len(found) for found in up.values())
    print(f"imports that run up the house: {edges} between {len(up)} pair(s) of packages")
    for (here, there), found in sorted(up.items()):
        print(f"  {here} -> {there}: {', '.join(sorted(found))}")
    loops = circles(graph)
    print(f"import circles: {len(loops)}")
    for loop in loops:
        print(f"  {' <-> '.join(loop)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    report(parser.parse_args().root.resolve())


if __name__ == "__main__":
    main()
