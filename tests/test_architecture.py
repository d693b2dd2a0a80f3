"""The apps form a tree: accounts at the bottom, games above it, then ratings, bots (the
computer opponents), the lobby and follows on top; config's
infrastructure modules (errors, protocol edge, sockets, database threads, presence) know no
app. Read from the source, so a new import that runs back up fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# config's wiring (settings, URLs, routing, ASGI) sits above every app; the rest below them.
CONFIG_WIRING = {"settings.py", "urls.py", "routing.py", "asgi.py", "benchservers.py"}
FORBIDDEN = {
    "accounts": {"games", "ratings", "bots", "lobby", "follows"},
    "games": {"ratings", "bots", "lobby", "follows"},
    "ratings": {"bots", "lobby", "follows"},
    "bots": {"lobby", "follows"},
    "lobby": {"follows"},
    "config": {"accounts", "games", "ratings", "bots", "lobby", "follows"},
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
    return [
        path
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
        and not (package == "config" and path.name in CONFIG_WIRING)
    ]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_runs_back_up_the_tree(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in modules(package)
    }
    wrong = {path: names for path, names in wrong.items() if names}
    assert not wrong, f"{package} must not import {sorted(FORBIDDEN[package])}: {wrong}"


def test_the_rule_engines_import_no_django() -> None:
    for path in (ROOT / "games" / "rules").rglob("*.py"):
        assert "django" not in imported_packages(path), path
