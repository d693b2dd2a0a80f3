"""python -m devtools puzzlegen: verified puzzles, found in finished games, in batches
(docs/PUZZLES-FINDING.md).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/puzzlegen \\
        python -m devtools puzzlegen --game zigzag --options pits=6,seeds=5 --count 200

Candidates are positions near the end of finished games (the last --last positions of each,
where the game is decided) and --earlier positions drawn from before them. With --from-db
the games are the database's finished games with their moves (games.models.PlayedMoves);
otherwise the command plays them itself: popular openings (devtools/gamesdb.py), then random
moves (--level 0) or the computer at that level (--level 1-5, so that the positions are
ones people could reach). Each candidate goes through devtools.puzzles.finder.examine, its
time bounded (--seconds, the prover's budget, and the fallback search's fixed budgets when
--search is given); accepted ones are stored through puzzles.services.add_verified, with
the game and the ply when they come from the database. Every batch of games prints a line;
the end prints candidates tried, accepted, stored, rejected by reason and seconds.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devtools.gamesdb import OPENING, _popular
from devtools.puzzles.finder import ACCEPTED, endgame_oracle, examine, limits_for
from games.engine import rules_for
from games.models import PlayedGame, PlayedMoves
from games.rules import InvalidOptions, game_info
from games.rules.notation import position_text
from games.services.records import option_key
from puzzles.services import add_verified

# The longest game the command plays itself (Four-rank Diffusion's random games end within
# about 500 moves; a game still going at this length gives no candidates).
LONGEST_GAME = 3000
# The computer level each game plays its own games at, unless --level says otherwise:
# random Diffusion Chess games end within a few turns, before any endgame (the race).
LEVELS = {"diffusion-chess": 1}


class Command(BaseCommand):
    help = "Find verified puzzles in finished games and store them (dev only)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--game", required=True, help="the game's slug")
        parser.add_argument("--options", default="", help='e.g. "pits=4,seeds=3"')
        parser.add_argument("--count", type=int, default=200, help="puzzles to store")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--from-db", action="store_true", help="the database's games")
        parser.add_argument("--level", type=int, default=None, help="0: random moves")
        parser.add_argument("--last", type=int, default=None, help="last positions a game")
        parser.add_argument("--earlier", type=int, default=2, help="earlier positions a game")
        parser.add_argument("--batch", type=int, default=50, help="games per progress line")
        parser.add_argument("--seconds", type=float, default=20.0, help="per candidate, most")
        parser.add_argument("--minutes", type=float, default=25.0, help="the whole run, most")
        parser.add_argument("--games", type=int, default=100_000, help="games to read, most")
        parser.add_argument("--search", action="store_true", help="the search's fallback")

    def line(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["game"]
        try:
            info = game_info(slug)
            given = _parse_options(options["options"])
            rules = rules_for(slug, given)
        except (InvalidOptions, ValueError) as error:
            raise CommandError(str(error)) from None
        # The option set in full (defaults filled in): as games and puzzles record it.
        settings = {spec.name: int(given.get(spec.name, spec.default)) for spec in info.options}
        limits = replace(limits_for(slug, options["search"]), seconds=options["seconds"])
        # Earlier positions are seldom decided within the prover's reach: a tenth of its
        # budget each, so that they cost little more than the late ones.
        early_limits = replace(
            limits, nodes=limits.nodes // 10, seconds=min(options["seconds"], 2.0)
        )
        # Diffusion's endgame database, when this checkout has one: exact where it covers.
        oracle = endgame_oracle(slug) if not given else None
        default_last = 15 if slug == "diffusion-chess" else 10
        last = options["last"] if options["last"] is not None else default_last
        level = options["level"] if options["level"] is not None else LEVELS.get(slug, 0)
        if options["from_db"]:
            games = _database_games(slug, settings)
            source = "the database's finished games"
        else:
            games = _played_games(slug, settings, options["seed"], level)
            source = f"games played here ({'random moves' if not level else f'level {level}'})"
        self.line(f"{info.name} {option_key(settings) or '(no options)'}: {source}")
        rng = random.Random(options["seed"])
        began = time.monotonic()
        stop = began + options["minutes"] * 60
        reasons: Counter[str] = Counter()
        themes: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        seen: set[str] = set()
        stored = tried = read = 0
        for game_id, moves in games:
            if stored >= options["count"] or time.monotonic() > stop or read >= options["games"]:
                break
            read += 1
            for ply, state, late in _candidates(rules, moves, last, options["earlier"], rng):
                if stored >= options["count"] or time.monotonic() > stop:
                    break
                text = position_text(rules, state)
                if text in seen:
                    continue
                seen.add(text)
                tried += 1
                verdict = examine(
                    rules,
                    state,
                    limits if late else early_limits,
                    seed=options["seed"] + tried,
                    exact=oracle,
                )
                reasons[verdict.reason] += 1
                if verdict.found is None:
                    continue
                found = verdict.found
                puzzle = add_verified(
                    slug=slug,
                    options=settings,
                    position=text,
                    solution=found.solution,
                    goal=found.goal,
                    line=list(found.line),
                    verified=found.verified,
                    themes=list(found.themes),
                    game_id=game_id,
                    ply=ply,
                )
                if puzzle is None:
                    reasons["already-a-puzzle"] += 1
                    continue
                stored += 1
                kinds[f"{found.goal} in {found.moves}" if found.moves else found.goal] += 1
                themes.update(found.themes)
            if read % options["batch"] == 0:
                self.line(
                    f"  {read} games, {tried} candidates, {stored} stored, "
                    f"{time.monotonic() - began:.0f} s"
                )
        seconds = time.monotonic() - began
        rejected = {reason: n for reason, n in reasons.most_common() if reason != ACCEPTED}
        self.line(
            f"{slug}: {read} games, {tried} candidates tried, {reasons[ACCEPTED]} accepted, "
            f"{stored} stored, {seconds:.0f} s"
        )
        self.line(f"  rejected: {_counts(rejected)}")
        self.line(f"  stored: {_counts(dict(kinds.most_common()))}")
        self.line(f"  themes: {_counts(dict(themes.most_common()))}")
        if stored < options["count"]:
            self.line(f"  short of {options['count']}: {stored} stored")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _parse_options(text: str) -> dict[str, int]:
    options: dict[str, int] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, equals, value = part.partition("=")
        if not equals or not value.strip().isdigit():
            raise ValueError(f"options are name=number pairs: {part!r}")
        options[name.strip()] = int(value)
    return options


def _candidates(
    rules: Any, moves: list[str], last: int, earlier: int, rng: random.Random
) -> Iterator[tuple[int, Any, bool]]:
    """(ply, state, late) of the game's last `last` positions before its end, latest first
    (late), then `earlier` positions drawn from before them. A line that breaks the rules
    stops there."""
    states = [rules.initial_state()]
    for move in moves:
        if rules.outcome(states[-1]) is not None:
            break
        try:
            states.append(rules.play(states[-1], move))
        except Exception:  # a line the rules refuse (an old game, a changed rule): its prefix
            break
    playable = [ply for ply, state in enumerate(states) if rules.outcome(state) is None]
    late = playable[-last:] if last else []
    before = playable[: len(playable) - len(late)]
    for ply in late[::-1]:
        yield ply, states[ply], True
    for ply in rng.sample(before, min(earlier, len(before))):
        yield ply, states[ply], False


def _database_games(slug: str, settings: dict[str, int]) -> Iterator[tuple[int | None, list[str]]]:
    """The database's finished games of this game and option set, with their moves, newest
    first."""
    ids = (
        PlayedGame.objects.filter(seat=1, slug=slug, options=option_key(settings))
        .order_by("-game_id")
        .values_list("game_id", flat=True)
    )
    for start in range(0, 10**9, 500):
        chunk = list(ids[start : start + 500])
        if not chunk:
            return
        lines = dict(PlayedMoves.objects.filter(game_id__in=chunk).values_list("game_id", "moves"))
        for game_id in chunk:
            if game_id in lines:
                yield game_id, lines[game_id].split()


def _played_games(
    slug: str, settings: dict[str, int], seed: int, level: int
) -> Iterator[tuple[int | None, list[str]]]:
    """Games played here, to their end: each position's popular moves in the opening (as
    devtools/gamesdb.py draws them), then random moves or the computer at `level`."""
    from bots.search import think

    rules = rules_for(slug, settings)
    pick = getattr(rules, "random_move", None)
    number = 0
    while True:
        number += 1
        rng = random.Random(seed * 1_000_003 + number)
        state = rules.initial_state()
        moves: list[str] = []
        while rules.outcome(state) is None and len(moves) < LONGEST_GAME:
            if len(moves) < OPENING:
                source = _popular(
                    rules.position_key(state), min(int(rng.paretovariate(1.6)) - 1, 7)
                )
                move = (
                    pick(state, source) if pick else source.choice(list(rules.legal_moves(state)))
                )
            elif level:
                move = think(rules, state, level=level, seed=rng.randrange(2**31)).move
            else:
                move = pick(state, rng) if pick else rng.choice(list(rules.legal_moves(state)))
            moves.append(move)
            state = rules.play(state, move)
        if rules.outcome(state) is not None:
            yield None, moves
