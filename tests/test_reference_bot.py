"""The reference bot (examples/bot/) and the engines of docs/BOTS.md's text protocol: the
site's computer (`python -m devtools engine`) and the random engine."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

from games.engine import client_moves, rules_for
from games.rules.notation import position_text

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# A short game of each kind (ZigZag's smallest board plays out in a few moves).
GAMES = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("diffusion-chess", {}),
    ("zigzag", {"pits": 4, "seeds": 1}),
]


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every module a file imports (relative imports as '.')."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


def test_the_examples_import_nothing_but_the_standard_library() -> None:
    files = sorted(EXAMPLES.rglob("*.py"))
    assert {path.name for path in files} >= {"diffusion_bot.py", "random_engine.py"}
    outside = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in imported_modules(path)
        if name != "__future__" and name not in sys.stdlib_module_names
    }
    assert not outside, f"examples/ must run on the standard library alone: {sorted(outside)}"


def test_the_import_check_sees_a_third_party_import(tmp_path: Path) -> None:
    sample = tmp_path / "bot.py"
    sample.write_text("import json\nfrom requests import get\nfrom . import engine\n")
    names = imported_modules(sample)
    assert names == {"json", "requests", "."}
    assert "requests" not in sys.stdlib_module_names


def load_bot() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "diffusion_bot", EXAMPLES / "bot/diffusion_bot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session(command: list[str], lines: list[str]) -> list[str]:
    """The engine's output lines for these input lines (it must exit at `quit`)."""
    done = subprocess.run(
        command,
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "devtools", "engine", "--level", "1"],
        [sys.executable, "examples/bot/random_engine.py"],
    ],
    ids=["site-level-1", "random"],
)
def test_an_engine_answers_a_legal_move_in_each_game(command: list[str]) -> None:
    bot = load_bot()
    lines: list[str] = []
    expected = []
    # Each game's start and a position a few moves in, in one process (an engine that is
    # given a new `game` line starts over).
    for slug, options in GAMES:
        rules = rules_for(slug, options)
        state = rules.initial_state()
        for ply in range(3):
            moves = bot.listed_moves(client_moves(rules, state))
            if ply == 0:
                lines.append(f"game {slug} {json.dumps(options, separators=(',', ':'))}")
            lines += [
                f"position {position_text(rules, state)}",
                "moves " + " ".join(moves),
                "go 60000 60000" if ply else "go - -",
            ]
            expected.append((slug, rules, state))
            state = rules.play(state, moves[0])
    answers = [line for line in session(command, [*lines, "quit"]) if line.startswith("move ")]
    assert len(answers) == len(expected)
    for answer, (slug, rules, state) in zip(answers, expected, strict=True):
        move = answer.removeprefix("move ")
        rules.play(state, move)  # IllegalMove fails the test
        assert slug


def test_the_site_engine_says_what_it_cannot_do() -> None:
    output = session(
        [sys.executable, "-m", "devtools", "engine", "--level", "2"],
        ["go 1000 1000", "game chess {}", 'game zigzag {"pits":3}', "hello", "quit"],
    )
    assert output[0].startswith("info error: `game` and `position` come before `go`")
    assert output[1].startswith("info error: no game 'chess'")
    assert output[2].startswith("info error: no game 'zigzag'")
    assert output[3] == "info error: unknown command 'hello'"


def test_the_bot_lists_diffusion_chess_paths_and_the_echo() -> None:
    bot = load_bot()
    legal = {
        "destinations": {"j3": {"j4": "j3-j4", "k5": "j3-j4-k5"}, "a1": {"a2": "a1-a2"}},
        "echo": True,
        "groups": None,
    }
    assert bot.listed_moves(legal) == ["j3-j4", "j3-j4-k5", "a1-a2", "echo"]
    assert bot.listed_moves({"destinations": {}, "echo": False, "groups": None}) == []
    assert bot.listed_moves(["A", "B"]) == ["A", "B"]


# --- two reference bots play each other through two server processes -------------------------


@pytest.mark.postgres(
    reason="two server processes share one database: PostgreSQL, with Redis between them"
)
@pytest.mark.django_db(transaction=True)
def test_two_reference_bots_play_a_whole_game_of_each_kind_through_two_processes(
    tmp_path: Path,
) -> None:
    """One of the two processes is restarted (SIGTERM: it drains) while the games go on: the
    bot whose streams it served opens them again and the games are played out all the same."""
    import signal
    import time
    from contextlib import ExitStack

    from accounts import tokens
    from accounts.models import User
    from config import serve
    from games.models import Game
    from tests.games_helpers import make_user
    from tests.servers import daphnes, on_postgresql, running, shared_test_env

    # Fail at once, not after the servers' start-up wait on a database they cannot open.
    assert on_postgresql(), "run it with DATABASE_URL pointing at PostgreSQL"
    bots = {
        name: tokens.create_token(user=make_user(name), name="reference bot", scopes=["bot"])[1]
        for name in ("refbot_a", "refbot_b")
    }
    engine = f"{sys.executable} -m devtools engine --level 1"
    games = [f"{slug}:{json.dumps(options)}" if options else slug for slug, options in GAMES]
    env = shared_test_env(f"refbot-{tmp_path.name}")
    with ExitStack() as stack:
        servers = stack.enter_context(daphnes(2, env, tmp_path))
        for secret in bots.values():
            # As docs/BOTS.md's third step does it.
            upgrade = urllib.request.Request(
                f"{servers[0].http}/api/bot/account/upgrade",
                method="POST",
                headers={"Authorization": f"Bearer {secret}"},
            )
            with urllib.request.urlopen(upgrade, timeout=30) as answer:
                assert json.loads(answer.read())["is_bot_account"] is True
        assert User.objects.filter(bot_since__isnull=False).count() == 2

        def bot(name: str, server: int, *more: str) -> subprocess.Popen[bytes]:
            command = [sys.executable, "examples/bot/diffusion_bot.py", "--engine", engine]
            command += ["--url", servers[server].http, "--games-to-play", "4", "-v", *more]
            with (tmp_path / f"{name}.log").open("wb") as log:
                return subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env={**os.environ, "DIFFUSION_TOKEN": bots[name]},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )

        def logs() -> str:
            return "\n".join(
                (tmp_path / name).read_text(errors="replace")[-3000:]
                for name in ("refbot_a.log", "refbot_b.log")
            )

        accepting = bot("refbot_b", 0)
        challenging = bot("refbot_a", 1, "--challenge", "refbot_b", *(f"--game={g}" for g in games))
        try:
            # Diffusion Chess, the longest of the four, some moves in: restart the process
            # that serves refbot_b.
            deadline = time.monotonic() + 120
            while not Game.objects.filter(
                slug="diffusion-chess", status="active", ply__gte=8
            ).exists():
                assert time.monotonic() < deadline, logs()
                time.sleep(0.2)
            first = servers[0]
            os.killpg(first.process.pid, signal.SIGTERM)
            first.process.wait(timeout=60)
            command = serve.command("127.0.0.1", first.port)
            stack.enter_context(running(command, env, tmp_path / "daphne-0-again.log", first.port))
            for process in (challenging, accepting):
                process.wait(timeout=300)
        finally:
            for process in (challenging, accepting):
                if process.poll() is None:
                    process.kill()
                    process.wait()
        assert challenging.returncode == 0 and accepting.returncode == 0, logs()
    reopened = (tmp_path / "refbot_b.log").read_text()
    assert "opening it again" in reopened or "stream lost" in reopened, reopened[-3000:]
    played = list(Game.objects.order_by("slug"))
    assert [game.slug for game in played] == sorted(slug for slug, _ in GAMES), logs()
    for game in played:
        assert {game.player1.username, game.player2.username} == {"refbot_a", "refbot_b"}
        # Played out to the rules' end: nobody's clock ran out, nobody resigned or left.
        assert (game.status, game.termination) == ("finished", "rules"), (game.pk, logs())


def test_the_bot_declines_what_it_was_not_told_to_accept_and_says_why() -> None:
    bot = load_bot()
    args = bot.arguments(["--engine", "x", "--accept", "zigzag,diffusion", "--casual-only"])
    player = bot.Bot(bot.Site("http://127.0.0.1:9", "dif_x"), args)
    timed = {"slug": "zigzag", "rated": False, "time_control": "5+3"}
    assert player.refusal(timed) is None
    assert player.refusal({**timed, "slug": "diffusion-chess"}) == (
        "This bot plays diffusion, zigzag only."
    )
    assert player.refusal({**timed, "rated": True}) == "This bot plays casual games only."
    assert player.refusal({**timed, "time_control": ""}) == "This bot plays timed games only."
    player.playing = dict.fromkeys(range(4))
    assert player.refusal(timed) == (
        "This bot is playing as many games as it can; try again later."
    )
    rated_only = bot.Bot(player.site, bot.arguments(["--engine", "x", "--rated-only", "--untimed"]))
    assert rated_only.refusal({**timed, "time_control": ""}) == "This bot plays rated games only."
    assert rated_only.refusal({**timed, "rated": True, "time_control": ""}) is None
