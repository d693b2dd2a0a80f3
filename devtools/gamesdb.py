"""A database of generated finished games for the game database's benchmark (dev only).

Players are many, and a few play far more than the rest (a Zipf-like draw, as on any game
site: the heaviest player has tens of thousands of games); games spread over two years, over
the four games and their option sets, rated or casual, real-time, correspondence or untimed,
ending every way a game can end. Rows go in with PostgreSQL's COPY, the games and their
database rows (games.models.PlayedGame) together, a batch at a time, so that a million games
take minutes and bounded memory. Generated games carry no move events (the search reads
none); with a pool of lines (`line_pool`) each game gets one of them as its PlayedMoves row,
for the opening explorer's benchmark.

The lines are played by the rules from the start: in the first OPENING moves each position
has its own few popular moves (drawn with falling odds, the same ones wherever the position
is reached), then moves are drawn at random, so that openings gather most games and the
lines part ways after them, as on a game site. A game draws its line from its variant's
pool at random: the openings repeat (the pool's lines share them), the lines after them
mostly not.
"""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Max
from django.db.models.functions import Coalesce

from accounts.models import User
from games.engine import rules_for
from games.models import Game, PlayedGame, PlayedMoves
from games.services.records import option_key, rows_of
from ratings.models import Rating

PREFIX = "gen"
GAMES = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("diffusion-chess", {}),
    ("zigzag", {"pits": 6, "seeds": 5}),
    ("zigzag", {"pits": 4, "seeds": 3}),
    ("zigzag", {"pits": 8, "seeds": 7}),
]
CONTROLS = ["5+3", "3+2", "10+0", "1+0", "3d", "1d", ""]
TERMINATIONS = ["rules"] * 6 + ["resignation"] * 3 + ["time", "agreement", "abandon", "forfeit"]
START = datetime(2024, 12, 1, tzinfo=UTC)
SPAN = timedelta(days=730)


# The moves of the first OPENING plies follow each position's popular moves; a line is at
# most LINE_PLIES long (the explorer counts 50).
OPENING = 16
LINE_PLIES = 60


def _popular(key: bytes, rank: int) -> random.Random:
    """The random source of a position's `rank`-th popular move: the same wherever the
    position is reached."""
    digest = hashlib.blake2b(key + bytes([rank]), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def play_line(slug: str, options: dict[str, Any], seed: int) -> tuple[str, int | None, bool]:
    """One line: its moves (separated by spaces), and the winner when the rules ended it."""
    rules = rules_for(slug, options)
    rng = random.Random(seed)
    state = rules.initial_state()
    moves: list[str] = []
    pick = getattr(rules, "random_move", None)
    while len(moves) < LINE_PLIES and rules.outcome(state) is None:
        if len(moves) < OPENING:
            source = _popular(rules.position_key(state), min(int(rng.paretovariate(1.6)) - 1, 7))
        else:
            source = rng
        move = pick(state, source) if pick else source.choice(list(rules.legal_moves(state)))
        moves.append(move)
        state = rules.play(state, move)
    outcome = rules.outcome(state)
    return " ".join(moves), None if outcome is None else outcome.winner, outcome is not None


def _lines_of(job: tuple[str, dict[str, Any], int, int]) -> list[tuple[str, int | None, bool]]:
    slug, options, first, count = job
    return [play_line(slug, options, seed) for seed in range(first, first + count)]


def line_pool(size: int, seed: int, processes: int = 2) -> dict[str, list[Any]]:
    """`size` lines for each variant of GAMES (option key + slug -> lines), played on
    `processes` processes."""
    jobs = []
    for index, (slug, options) in enumerate(GAMES):
        for start in range(0, size, 2000):
            first = seed * 10_000_000 + index * 1_000_000 + start
            jobs.append((slug, options, first, min(2000, size - start)))
    pool: dict[str, list[Any]] = {option_key(o) + s: [] for s, o in GAMES}
    if processes == 1:
        for slug, options, first, count in jobs:
            pool[option_key(options) + slug] += _lines_of((slug, options, first, count))
        return pool
    with multiprocessing.get_context("fork").Pool(processes) as workers:
        for (slug, options, _first, _count), lines in zip(
            jobs, workers.imap(_lines_of, jobs), strict=True
        ):
            pool[option_key(options) + slug] += lines
    return pool


def make_ratings(players: list[int], seed: int) -> None:
    """A rating for every player in every game and speed (normal around 1500, sd 250), so
    that games spread over the explorer's rating bands; players that have one keep it."""
    rng = random.Random(seed)
    have = set(Rating.objects.filter(user_id__in=players).values_list("user_id", flat=True))
    rows = []
    for user in players:
        if user in have:
            continue
        level = min(2700.0, max(600.0, rng.gauss(1500, 250)))
        for slug in {slug for slug, _options in GAMES}:
            for speed in ("realtime", "correspondence", "untimed"):
                rows.append(
                    Rating(
                        user_id=user,
                        slug=slug,
                        speed=speed,
                        rating=level + rng.gauss(0, 60),
                        deviation=80,
                        volatility=0.06,
                    )
                )
    for start in range(0, len(rows), 10_000):
        Rating.objects.bulk_create(rows[start : start + 10_000])


def make_players(count: int) -> list[int]:
    """`count` accounts named gen0, gen1...: their ids (those already there are kept)."""
    existing = dict(User.objects.filter(username__startswith=PREFIX).values_list("username", "pk"))
    wanted = [f"{PREFIX}{n}" for n in range(count)]
    missing = [User(username=name, password="!") for name in wanted if name not in existing]
    for start in range(0, len(missing), 5000):
        User.objects.bulk_create(missing[start : start + 5000])
    existing = dict(User.objects.filter(username__startswith=PREFIX).values_list("username", "pk"))
    return [existing[name] for name in wanted]


def zipf_picker(players: list[int], rng: random.Random) -> Any:
    """Draws players, the first ones far more often (weight 1/rank)."""
    weights = [1.0 / (rank + 1) for rank in range(len(players))]
    cumulative, total = [], 0.0
    for weight in weights:
        total += weight
        cumulative.append(total)

    def pick() -> int:
        return players[_bisect(cumulative, rng.random() * total)]

    return pick


def _bisect(values: list[float], x: float) -> int:
    low, high = 0, len(values) - 1
    while low < high:
        middle = (low + high) // 2
        if values[middle] < x:
            low = middle + 1
        else:
            high = middle
    return low


GAME_COLUMNS = [
    *("slug", "options", "status", "winner", "termination", "reason", "state", "ply"),
    *("version", "rematch_offers", "time_control", "away", "created_at", "updated_at"),
    *("player1_id", "player2_id", "both_moved", "chat_muted", "moved_at", "offers", "rated"),
    *("queues", "annulled", "against_computer", "ended_at"),
]
# What records.rows_of reads of a game.
RECORDED = (
    *("pk", "slug", "options", "player1_id", "player2_id", "status", "winner"),
    *("termination", "rated", "time_control", "ended_at", "ply"),
)
ROW_COLUMNS = [
    *("game_id", "seat", "user_id", "opponent_id", "slug", "options", "rated", "speed"),
    *("result", "termination", "ended_at", "plies"),
]


def generate(
    total: int,
    players: list[int],
    seed: int,
    batch: int = 20_000,
    pool: dict[str, list[Any]] | None = None,
) -> Iterator[int]:
    """Insert `total` finished games (and their rows) a batch at a time; yields the count
    done after each batch. With a `pool`, each game plays one of its variant's lines."""
    rng = random.Random(seed)
    pick = zipf_picker(players, rng)
    states = {
        option_key(options) + slug: json.dumps(
            rules_for(slug, options).to_json(rules_for(slug, options).initial_state())
        )
        for slug, options in GAMES
    }
    done = 0
    while done < total:
        size = min(batch, total - done)
        games = []
        for _ in range(size):
            first = pick()
            second = pick()
            while second == first:
                second = rng.choice(players)
            slug, options = rng.choice(GAMES)
            ended = START + SPAN * rng.random()
            termination = rng.choice(TERMINATIONS)
            winner = (
                None if termination == "agreement" or rng.random() < 0.04 else rng.choice([1, 2])
            )
            control = rng.choice(CONTROLS)
            line = None
            if pool is not None:
                variant = option_key(options) + slug
                line = rng.choice(pool[variant])
                if line[2]:  # the rules ended it: that is the result
                    termination, winner = "rules", line[1]
                elif termination == "rules":
                    termination = "resignation"
            games.append(
                (slug, options, first, second, winner, termination, ended, control, rng, line)
            )
        _copy(games, states)
        done += size
        yield done


def _copy(games: list[Any], states: dict[str, str]) -> None:
    game_rows = io.StringIO()
    now = datetime.now(UTC).isoformat()
    lines = io.StringIO()
    for slug, options, first, second, winner, termination, ended, control, rng, line in games:
        plies = rng.randint(6, 160) if line is None else len(line[0].split())
        if line is not None:
            lines.write(_escape(line[0]) + "\n")
        fields = [
            slug,
            json.dumps(options),
            Game.Status.FINISHED,
            "\\N" if winner is None else str(winner),
            termination,
            f"generated: {termination}",
            states[option_key(options) + slug],
            str(plies),
            str(plies + 1),
            "[]",
            control,
            "{}",
            (ended - timedelta(minutes=plies)).isoformat(),
            now,
            str(first),
            str(second),
            "t",
            "[]",
            ended.isoformat(),
            "{}",
            "t" if rng.random() < 0.6 else "f",
            "{}",
            "f",
            "f",
            ended.isoformat(),
        ]
        game_rows.write("\t".join(_escape(value) for value in fields) + "\n")
    with connection.cursor() as cursor:
        raw = cursor.cursor
        game_table = Game._meta.db_table
        with raw.copy(f"COPY {game_table} ({', '.join(GAME_COLUMNS)}) FROM STDIN") as copy:
            copy.write(game_rows.getvalue())
        # The rows of the games just copied, made as the end of a game makes them.
        made = (
            Game.objects.filter(
                pk__gt=PlayedGame.objects.aggregate(last=Coalesce(Max("game_id"), 0))["last"],
                status=Game.Status.FINISHED,
                ended_at__isnull=False,
            )
            .order_by("pk")
            .only(*RECORDED)
        )
        rows = io.StringIO()
        for game in made:
            for row in rows_of(game):
                values = [getattr(row, column) for column in ROW_COLUMNS]
                values[ROW_COLUMNS.index("rated")] = "t" if row.rated else "f"
                values[ROW_COLUMNS.index("ended_at")] = row.ended_at.isoformat()
                rows.write("\t".join(_escape(str(value)) for value in values) + "\n")
        table = PlayedGame._meta.db_table
        with raw.copy(f"COPY {table} ({', '.join(ROW_COLUMNS)}) FROM STDIN") as copy:
            copy.write(rows.getvalue())
        if lines.tell():  # each game's line, in the order the games were copied (their ids)
            ids = [game.pk for game in made]
            moves = lines.getvalue().splitlines()
            assert len(ids) == len(moves), (len(ids), len(moves))
            table = PlayedMoves._meta.db_table
            with raw.copy(f"COPY {table} (game_id, moves, explored) FROM STDIN") as copy:
                copy.write(
                    "".join(f"{game}\t{line}\tf\n" for game, line in zip(ids, moves, strict=True))
                )


def _escape(value: str) -> str:
    if value == "\\N":
        return value
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
