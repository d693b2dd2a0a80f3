"""The house, read from the source so a new import that runs back up fails here.

From the ground up: realtime (errors, the protocol edge, sockets, database threads, presence,
channel layers, limits) knows no app; accounts, then games, then ratings and bots (the
computer opponents), the lobby and follows on top; config (settings, URLs, socket routing,
ASGI, the server's launcher) is the roof and may import any of them. The tooling (devtools:
benchmarks, load generators, fault injection) stands beside the house: it may import the
product, and nothing of the product imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ["accounts", "games", "ratings", "bots", "lobby", "follows"]
PRODUCT = ["realtime", *APPS, "config"]
FORBIDDEN = {
    "realtime": {*APPS, "config", "devtools"},
    "accounts": {"games", "ratings", "bots", "lobby", "follows", "config", "devtools"},
    "games": {"ratings", "bots", "lobby", "follows", "config", "devtools"},
    "ratings": {"bots", "lobby", "follows", "config", "devtools"},
    "bots": {"lobby", "follows", "config", "devtools"},
    "lobby": {"follows", "config", "devtools"},
    "follows": {"config", "devtools"},
    "config": {"devtools"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def modules(package: str) -> list[Path]:
    return [path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts]


def test_every_product_package_has_its_place() -> None:
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    assert packages - {"tests", "devtools"} == set(PRODUCT)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_runs_back_up_the_tree(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in modules(package)
    }
    wrong = {path: names for path, names in wrong.items() if names}
    assert not wrong, f"{package} must not import {sorted(FORBIDDEN[package])}: {wrong}"


def test_the_product_names_no_tooling_module_even_as_text() -> None:
    """Settings name apps and middleware as strings, which an import check does not see."""
    named = [
        str(path.relative_to(ROOT))
        for package in PRODUCT
        for path in modules(package)
        if "devtools." in path.read_text() or '"devtools"' in path.read_text()
    ]
    assert not named


def test_the_rule_engines_import_no_django() -> None:
    for path in (ROOT / "games" / "rules").rglob("*.py"):
        assert "django" not in imported_packages(path), path


def lobby_imports() -> dict[str, set[str]]:
    """The lobby's own modules (lobby/*.py, lobby/services/*.py) and which of them each
    imports, read from the source (`from lobby.services import feed` names lobby.services.feed)."""
    files = [*(ROOT / "lobby").glob("*.py"), *(ROOT / "lobby" / "services").glob("*.py")]
    names = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in files
    }
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        graph[name] = {other for other in found & set(names) if other not in (name, "lobby")}
    return graph


def test_the_lobbys_reads_import_no_service() -> None:
    """Services read through the selectors and draw rows with the payloads; the reverse arrow
    made a circle (services -> selectors -> services)."""
    graph = lobby_imports()
    for reader in ("lobby.selectors", "lobby.payloads", "lobby.protocol"):
        writes = sorted(m for m in graph[reader] if m.startswith("lobby.services"))
        assert not writes, f"{reader} imports {writes}"


def test_no_import_circle_inside_the_lobby() -> None:
    graph = lobby_imports()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            circle = [*path[path.index(module) :], module]
            raise AssertionError(f"an import circle: {' -> '.join(circle)}")
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
