"""Fuzzed frames: mutations of every message the sockets take, sent by visitors and by
signed-in users who play none of the watched games. Nothing they send may change a game,
crash a consumer, leave a presence row behind or draw an answer the document does not list."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async

from accounts.models import User
from devtools.chaos.client import Socket, Tally, session_cookie
from devtools.chaos.cluster import Cluster
from games import services
from games.engine import pick_client_move
from games.models import Game

GAME_TYPES = [
    "move",
    "resign",
    "abort",
    "rematch",
    "claim",
    "lag_reply",
    "ping",
    "sync",
    "chat",
    "chat_mute",
    "queue",
    "takeback",
    "takeback_answer",
    "draw",
    "draw_answer",
]
LOBBY_TYPES = [
    "seek",
    "cancel_seek",
    "challenge",
    "accept",
    "decline",
    "cancel_challenge",
    "command",
    "ping",
    "sync",
]
SLUGS = ["diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess", "chess", ""]
STRINGS = [
    "",
    "A",
    "a1-a2",
    "echo",
    "ÿ",
    "\u202eevil",
    "🙂" * 3,
    "e\u0301",
    "<script>alert(1)</script>",
    "'; DROP TABLE games_game; --",
    "%s%n%x",
    "../../etc/passwd",
    "\t\n\r",
    "x" * 300,
    "-x=²",
    "zigzag challenge -pits=8 -seeds=7 alice bob",
    "diffusion challenge alice",
    "5+3",
    "1d",
    "999+999",
]


def weird(rng: random.Random, depth: int = 0) -> Any:
    """A value of any JSON type, often one nobody expects."""
    pick = rng.randrange(12 if depth < 3 else 8)
    if pick == 0:
        return rng.choice([0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64 + 5, 10**30, -(10**20)])
    if pick == 1:
        return rng.choice([0.5, -0.0, 1e308, -1e-308, 3.14159])
    if pick in (2, 3, 4):
        return rng.choice(STRINGS)
    if pick == 5:
        return rng.choice([None, True, False])
    if pick == 6:
        return "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(1, 40)))
    if pick == 7:
        return rng.randrange(-5, 200)
    if pick in (8, 9):
        return [weird(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["slug", "options", "id", "v", "x", ""]): weird(rng, depth + 1)}


def plausible(rng: random.Random, socket: str) -> dict[str, Any]:
    """A message of a type the socket takes, with values that may or may not make sense."""
    kind = rng.choice(GAME_TYPES if socket == "game" else LOBBY_TYPES)
    if kind == "sync" and rng.random() < 0.8:  # a sync costs ten messages
        kind = "ping"
    message: dict[str, Any] = {"type": kind, "id": rng.choice([rng.randrange(10**6), "c1"])}
    options = rng.choice([{}, {"pits": rng.randrange(-2, 30), "seeds": rng.randrange(-2, 30)}])
    every: dict[str, dict[str, Any]] = {
        "move": {
            "move": rng.choice(["A", "B", "F", "L", "j3-j4", "echo", "zz"]),
            "ply": rng.randrange(-1, 40),
        },
        "lag_reply": {"t": rng.randrange(10**13)},
        "chat": {
            "room": rng.choice(["players", "spectators", "lounge"]),
            "text": rng.choice([*STRINGS, "x" * 141]),
        },
        "chat_mute": {"mute": rng.choice([True, False])},
        "queue": {"moves": rng.choice([[], ["A", "B"], ["A"], ["zz", "j3-j4"]])},
        "takeback_answer": {"accept": rng.choice([True, False])},
        "draw_answer": {"accept": rng.choice([True, False])},
        "sync": {"v": rng.randrange(-1, 50)},
        "seek": {
            "games": [{"slug": rng.choice(SLUGS), "options": options}],
            "time_control": rng.choice(["", "5+3", "1d", "0+0", "abc"]),
        },
        "cancel_seek": {"seek_id": rng.randrange(-1, 100)},
        "challenge": {
            "user": rng.choice(["chaos-w1", "nobody-here", "", "chaos-f1"]),
            "slug": rng.choice(SLUGS),
            "options": options,
            "side": rng.choice(["first", "second", "random", "middle"]),
            "time_control": rng.choice(["", "5+3", "2d"]),
        },
        "accept": rng.choice([{"challenge_id": rng.randrange(100)}, {"token": "abc"}]),
        "decline": {"challenge_id": rng.randrange(100), "reason": rng.choice(STRINGS)},
        "cancel_challenge": {"challenge_id": rng.randrange(100)},
        "command": {"text": rng.choice(STRINGS)},
    }
    message.update(every.get(kind, {}))
    return message


def frame(rng: random.Random, socket: str) -> str | bytes:
    """One fuzzed frame for a socket ("game" or "lobby")."""
    base = plausible(rng, socket)
    roll = rng.random()
    if roll < 0.25:  # one field replaced
        key = rng.choice(list(base))
        base[key] = weird(rng)
        return json.dumps(base)
    if roll < 0.33:  # extra fields
        for _ in range(rng.randrange(1, 4)):
            base[rng.choice(["x", "type2", "__proto__", "constructor", "user_id"])] = weird(rng)
        return json.dumps(base)
    if roll < 0.48:  # the text damaged
        text = list(json.dumps(base))
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(text))
            action = rng.randrange(3)
            if action == 0:
                del text[at]
            elif action == 1:
                text.insert(at, rng.choice('{}[]",:\\ 0a\x00'))
            else:
                text[at] = chr(rng.randrange(1, 0x7F))
        if rng.random() < 0.2:
            text = text[: rng.randrange(len(text))]
        return "".join(text)
    if roll < 0.55:  # not an object
        return json.dumps(weird(rng)) if rng.random() < 0.8 else rng.choice(["", " ", "null"])
    if roll < 0.61:  # the type itself wrong
        base["type"] = rng.choice([weird(rng), "MOVE", "move ", "", "__init__", "websocket.close"])
        if rng.random() < 0.3:
            del base["type"]
        return json.dumps(base)
    if roll < 0.65:  # nested deep
        depth = rng.choice([50, 500, 1000, 1500, 3000])
        return (
            "[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth
        )
    if roll < 0.69:  # big
        return json.dumps({**base, "pad": "x" * rng.choice([3000, 5000, 17000, 30000])})
    if roll < 0.72:  # binary
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if roll < 0.76:  # JSON that Python writes but browsers do not read
        return rng.choice(
            [
                '{"type":"ping","id":NaN}',
                '{"type":"ping","id":Infinity}',
                '{"type":"sync","v":-Infinity}',
                '{"type":"ping","id":1e999}',
            ]
        )
    if roll < 0.81:  # escapes: NUL, lone surrogates
        escape = rng.choice(["\\u0000", "\\ud800", "\\udfff", "\\ud83d", "a\\u0000b"])
        field = rng.choice(["text", "move", "id", "reason", "type", "token"])
        return f'{{"type":"{base["type"]}","{field}":"{escape}"}}'
    if roll < 0.85:  # a key twice
        return f'{{"type":"ping","type":"{rng.choice(GAME_TYPES + LOBBY_TYPES)}","id":1}}'
    return json.dumps(base)


@dataclass
class Watched:
    """Games nobody among the fuzzers plays, and their rows before the fuzzing."""

    ids: list[int]
    before: dict[int, tuple[Any, ...]]


def _row(game: Game) -> tuple[Any, ...]:
    return (
        game.version,
        game.ply,
        game.status,
        json.dumps(game.state, sort_keys=True),
        game.rematch_offers,
    )


def watched_games(players: list[User], count: int, rng: random.Random) -> Watched:
    ids = []
    for index in range(count):
        first, second = players[(2 * index) % len(players)], players[(2 * index + 1) % len(players)]
        game = services.create_game(slug="diffusion", options={}, player1=first, player2=second)
        for _ in range(rng.randrange(0, 6)):
            if game.status != "active":
                break
            user = first if _to_move(game) == 1 else second
            game = services.play_move(
                game_id=game.pk, user=user, move=pick_client_move(_legal(game), rng), ply=game.ply
            ).game
        ids.append(game.pk)
    return Watched(ids=ids, before=rows(ids))


def _legal(game: Game) -> Any:
    from games.engine import client_moves, rules_for

    rules = rules_for(game.slug, game.options)
    return client_moves(rules, rules.from_json(game.state))


def _to_move(game: Game) -> int:
    from games.engine import rules_for

    rules = rules_for(game.slug, game.options)
    return int(rules.to_move(rules.from_json(game.state)))


def rows(ids: list[int]) -> dict[int, tuple[Any, ...]]:
    return {game.pk: _row(game) for game in Game.objects.filter(pk__in=ids)}


async def run(
    cluster: Cluster,
    tally: Tally,
    *,
    target: int,
    sockets: int,
    rate: float,
    fuzzers: list[User],
    watched: Watched,
    rng: random.Random,
) -> int:
    """Send `target` fuzzed frames over `sockets` sockets at `rate` a second each; how many
    were sent."""
    cookies = [await sync_to_async(session_cookie)(user) for user in fuzzers]
    sent = 0
    done = asyncio.Event()

    async def one(index: int) -> None:
        nonlocal sent
        own = random.Random(rng.random())
        kind = "game" if index % 2 == 0 else "lobby"
        cookie = None if index % 3 == 0 else cookies[index % len(cookies)]
        while not done.is_set():
            servers = cluster.live_servers()
            server = servers[index % len(servers)]
            path = f"/ws/games/{own.choice(watched.ids)}/" if kind == "game" else "/ws/lobby/"
            query = own.choice(["", "", "", "?v=0", "?v=999999999", "?v=-5", "?v=x", "?v=%00"])
            socket = Socket(server.ws, path, cookie, tally)
            try:
                await socket.open(query, wait_first=False)
            except Exception as error:
                tally.errors[f"fuzz connect: {type(error).__name__}"] += 1
                await asyncio.sleep(0.5)
                continue
            while socket.is_open and not done.is_set():
                try:
                    await socket.send(frame(own, kind))
                except Exception:
                    break
                sent += 1
                if sent >= target:
                    done.set()
                await asyncio.sleep(own.expovariate(rate))
            await socket.close()

    await asyncio.gather(*(one(index) for index in range(sockets)))
    return sent
