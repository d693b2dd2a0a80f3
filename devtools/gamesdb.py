"""A database of generated finished games for the game database's benchmark (dev only).

Players are many, and a few play far more than the rest (a Zipf-like draw, as on any game
site: the heaviest player has tens of thousands of games); games spread over two years, over
the four games and their option sets, rated or casual, real-time, correspondence or untimed,
ending every way a game can end. Rows go in with PostgreSQL's COPY, the games and their
database rows (games.models.PlayedGame) together, a batch at a time, so that a million games
take minutes and bounded memory. Generated games carry no moves (their ply is a length only):
the search reads none.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Max
from django.db.models.functions import Coalesce

from accounts.models import User
from games.engine import rules_for
from games.models import Game, PlayedGame
from games.services.records import option_key, rows_of

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


def generate(total: int, players: list[int], seed: int, batch: int = 20_000) -> Iterator[int]:
    """Insert `total` finished games (and their rows) a batch at a time; yields the count
    done after each batch."""
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
            games.append((slug, options, first, second, winner, termination, ended, control, rng))
        _copy(games, states)
        done += size
        yield done


def _copy(games: list[Any], states: dict[str, str]) -> None:
    game_rows = io.StringIO()
    now = datetime.now(UTC).isoformat()
    for slug, options, first, second, winner, termination, ended, control, rng in games:
        plies = rng.randint(6, 160)
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


def _escape(value: str) -> str:
    if value == "\\N":
        return value
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
