"""The house, read from the source so a new import that runs back up fails here.

From the ground up: realtime (errors, the protocol edge, sockets, database threads, presence,
channel layers, limits) knows no app; accounts, then games, then ratings and bots (the
computer opponents), the lobby and beside it tournaments and
analysis (the analysis board), and on top follows, pbm (pbmserv's
commands by mail), privacy (closing an account, downloading one's data) and push (notices
to a closed tab, the installable site), and above them
moderation (reports and moderators' actions, which may close an account through privacy);
config (settings, URLs, socket routing, ASGI, the server's launcher) is the roof and may
import any of them. The tooling (devtools:
benchmarks, load generators, fault injection) stands beside the house: it may import the
product, and nothing of the product imports it."""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = [
    "accounts",
    "games",
    "ratings",
    "bots",
    "lobby",
    "follows",
    "pbm",
    "privacy",
    "moderation",
    "tournaments",
    "analysis",
    "puzzles",
    "push",
    "botapi",
]
PRODUCT = ["realtime", *APPS, "config"]
FORBIDDEN = {
    "realtime": {*APPS, "config", "devtools"},
    "accounts": {
        "games",
        "ratings",
        "bots",
        "lobby",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "tournaments",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    "games": {
        "ratings",
        "bots",
        "lobby",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "tournaments",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    "ratings": {
        "bots",
        "lobby",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "tournaments",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    "bots": {
        "lobby",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "tournaments",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    "lobby": {
        "tournaments",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    # Beside the lobby: the analysis board (a tree of moves on the rule engines, and the
    # computer's view of a position from the bots' search).
    "analysis": {
        "lobby",
        "tournaments",
        "puzzles",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    # Beside the lobby: puzzles (positions cut from finished games, solved and rated).
    "puzzles": {
        "lobby",
        "tournaments",
        "analysis",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    # Beside the lobby: tournaments (events that pair players and make games through games'
    # services, rated by ratings).
    "tournaments": {
        "bots",
        "lobby",
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "analysis",
        "puzzles",
        "push",
        "botapi",
        "config",
        "devtools",
    },
    # The doors on top: follows (news of games and players), pbm (pbmserv by mail) and
    # privacy (a player's own data: closing the account, downloading it).
    "follows": {"pbm", "privacy", "moderation", "push", "botapi", "config", "devtools"},
    # pbm closes accounts by mail as the site does, through privacy.
    "pbm": {"follows", "moderation", "push", "botapi", "config", "devtools"},
    "privacy": {"follows", "pbm", "moderation", "push", "botapi", "config", "devtools"},
    # Beside them, push (notices to a closed tab: it hears the games', lobby's and
    # tournaments' news and the sweeper's pass, and sends from there).
    "push": {"follows", "pbm", "privacy", "moderation", "botapi", "config", "devtools"},
    # Beside them, botapi (the Bot API: a program's streams and actions over HTTP with a
    # token, through the same services as the sockets; bot accounts).
    "botapi": {
        "follows",
        "pbm",
        "privacy",
        "moderation",
        "push",
        "analysis",
        "puzzles",
        "config",
        "devtools",
    },
    # Above them, moderation (reports and moderators' actions, which reach into the apps
    # below and close accounts through privacy).
    "moderation": {"follows", "pbm", "push", "botapi", "config", "devtools"},
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


def test_the_pairing_library_imports_nothing_but_the_standard_library_and_itself() -> None:
    """Pure: no Django, no app, nothing installed; so it is tested, and reasoned about, alone."""
    allowed = {"__future__", "tournaments", *sys.stdlib_module_names}
    for path in (ROOT / "tournaments" / "pairing").rglob("*.py"):
        assert imported_packages(path) <= allowed, path


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module `path` names in an import, including `from package import module` and
    imports made only for type checking (a loop of those is a loop all the same)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def imported_for_loops(path: Path, names: set[str]) -> set[str]:
    """The modules `path` imports: `from package import module` names the module only, as a
    sibling in a package imports its neighbour without going through the package's face."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = {f"{node.module}.{alias.name}" for alias in node.names} & names
            found |= modules if len(modules) == len(node.names) else {node.module, *modules}
    return found & names


def test_no_module_imports_itself_round_a_loop() -> None:
    # games/catchup.py and games/consumers.py imported each other (one of them only for type
    # checking): two modules that can neither be read nor changed apart.
    paths = [path for package in PRODUCT for path in modules(package)]
    names = {module_name(path) for path in paths}
    graph = {
        module_name(path): imported_for_loops(path, names) - {module_name(path)} for path in paths
    }
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"an import loop: {' -> '.join(error.args[1])}")


def test_the_lobbys_reads_import_no_service() -> None:
    """Services read through the selectors and draw rows with the payloads; the reverse arrow
    made a circle (services -> selectors -> services)."""
    for reader in ("selectors", "payloads", "protocol"):
        imported = imported_modules(ROOT / "lobby" / f"{reader}.py")
        writes = sorted(m for m in imported if m.startswith("lobby.services"))
        assert not writes, f"lobby.{reader} imports {writes}"
