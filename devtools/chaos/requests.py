"""Random protocol requests: well-formed messages with values chosen at random (legal moves
and illegal ones, real challenges and made-up ids), over both sockets and the HTTP API, by
players of live games. Every one must be answered, with a frame or a status and an error
code docs/PROTOCOL.md lists."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async

from accounts.models import User
from devtools.chaos.client import Browser, Socket, Tally, session_cookie
from devtools.chaos.cluster import Cluster
from devtools.chaos.fuzz import STRINGS, frame
from games import services
from games.engine import pick_client_move
from lobby.protocol_doc import documented

_ids = itertools.count(1)
HTTP_STATUSES = frozenset({200, 201, 400, 403, 404, 405, 409, 422, 429, 503})
GAME_SLUGS = ["diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess"]


@dataclass
class Answers:
    asked: int = 0
    answered: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    unanswered: list[str] = field(default_factory=list)
    undocumented: list[str] = field(default_factory=list)
    http: int = 0

    def take(self, request: dict[str, Any], answer: dict[str, Any]) -> None:
        self.answered += 1
        kind = answer["type"] if answer["type"] != "error" else f"error {answer['code']}"
        self.kinds[kind] += 1


@dataclass
class Pair:
    """Two users, their current game and their sockets."""

    users: tuple[User, User]
    cookies: tuple[str, str]
    game_id: int = 0
    lobby: list[Socket] = field(default_factory=list)
    game: list[Socket] = field(default_factory=list)
    challenges: list[int] = field(default_factory=list)
    seeks: list[int] = field(default_factory=list)
    # The two players' game requests go one at a time, so a new game never closes a socket
    # under the other player's request.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)


def lobby_request(rng: random.Random, pair: Pair, names: list[str]) -> dict[str, Any]:
    kind = rng.choice(
        [
            *("seek", "seek", "cancel_seek", "challenge", "challenge", "accept", "decline"),
            *("cancel_challenge", "command", "command", "ping"),
        ]
    )
    slug = rng.choice([*GAME_SLUGS, "nogame"])
    options = rng.choice([{}, {}, {"pits": rng.randrange(2, 14), "seeds": rng.randrange(1, 9)}])
    challenge = (
        rng.choice(pair.challenges)
        if pair.challenges and rng.random() < 0.7
        else rng.randrange(1, 500)
    )
    message: dict[str, Any] = {"type": kind, "id": next(_ids)}
    if kind == "seek":
        message["games"] = [{"slug": slug, "options": options}]
        message["time_control"] = rng.choice(["", "5+3", "3d", "7+0", "1000+0"])
    elif kind == "cancel_seek":
        message["seek_id"] = rng.choice(pair.seeks) if pair.seeks else rng.randrange(1, 500)
    elif kind == "challenge":
        if rng.random() < 0.8:
            message["user"] = rng.choice([*names, "nobody-at-all"])
        message.update(
            slug=slug,
            options=options,
            side=rng.choice(["first", "second", "random"]),
            time_control=rng.choice(["", "10+5", "1d"]),
        )
    elif kind in ("accept", "cancel_challenge"):
        message["challenge_id"] = challenge
    elif kind == "decline":
        message.update(challenge_id=challenge, reason=rng.choice(STRINGS[:12]))
    elif kind == "command":
        a, b = rng.choice(names), rng.choice(names)
        message["text"] = rng.choice(
            [
                f"{slug} challenge {a} {b}",
                f"zigzag challenge -pits={rng.randrange(30)} -seeds={rng.randrange(30)} {a} {b}",
                f"{slug} challenge -x=² {a} {b}",
                rng.choice(STRINGS),
            ]
        )
    return message


def game_request(rng: random.Random, socket: Socket) -> dict[str, Any]:
    view = socket.view
    kind = rng.choices(
        ["move", "resign", "abort", "rematch", "claim", "ping"], [70, 2, 3, 5, 5, 15]
    )[0]
    message: dict[str, Any] = {"type": kind, "id": next(_ids)}
    if kind == "move":
        legal = view.get("legal_moves") or []
        try:
            move = pick_client_move(legal, rng) if rng.random() < 0.8 else rng.choice(STRINGS[:8])
        except ValueError:
            move = "A"
        ply = view.get("ply", 0) if rng.random() < 0.9 else rng.randrange(0, 50)
        message.update(move=move, ply=ply)
    return message


async def _ask(socket: Socket, message: dict[str, Any], answers: Answers) -> None:
    answers.asked += 1
    try:
        answer = await socket.request(message, within=20)
    except Exception as error:
        answers.unanswered.append(f"{message['type']} on {socket.path}: {type(error).__name__}")
        return
    answers.take(message, answer)


async def _new_game(pair: Pair, cluster: Cluster, tally: Tally, index: int) -> None:
    game = await sync_to_async(services.create_game)(
        slug="diffusion", options={}, player1=pair.users[0], player2=pair.users[1]
    )
    pair.game_id = game.pk
    for socket in pair.game:
        await socket.close()
    pair.game = []
    for seat in range(2):
        server = cluster.live_servers()[(index + seat) % len(cluster.live_servers())]
        socket = Socket(server.ws, f"/ws/games/{game.pk}/", pair.cookies[seat], tally)
        await socket.open()
        pair.game.append(socket)


def check_http(status: int, body: bytes, codes: frozenset[str]) -> str | None:
    """What is wrong with an HTTP answer, if anything."""
    if status not in HTTP_STATUSES:
        return f"status {status}: {body[:200]!r}"
    try:
        decoded = json.loads(body)
    except ValueError:
        return f"status {status} with a body that is not JSON: {body[:200]!r}"
    if status >= 400:
        code = decoded.get("error", {}).get("code") if isinstance(decoded, dict) else None
        if code not in codes:
            return f"status {status} with undocumented code {code!r}"
    return None


def http_request(rng: random.Random, pair: Pair) -> tuple[str, str, bytes | None]:
    game = pair.game_id
    challenge = rng.choice(pair.challenges) if pair.challenges else rng.randrange(1, 500)
    choices: list[tuple[str, str, Any]] = [
        ("GET", f"/api/games/{game}", None),
        ("GET", f"/api/games/{rng.randrange(10**9)}", None),
        ("GET", f"/api/games?status={rng.choice(['active', 'finished', 'aborted', 'x'])}", None),
        (
            "POST",
            f"/api/games/{game}/move",
            {"move": rng.choice(["A", "B", "K", "zz"]), "ply": rng.randrange(0, 30)},
        ),
        ("POST", f"/api/games/{game}/move", {"move": 5}),
        ("GET", "/api/lobby", None),
        (
            "POST",
            "/api/seeks",
            {
                "games": [{"slug": rng.choice(GAME_SLUGS), "options": {}}],
                "time_control": rng.choice(["", "9+9", "bad"]),
            },
        ),
        ("POST", f"/api/seeks/{rng.randrange(1, 500)}/cancel", {}),
        (
            "POST",
            "/api/challenges",
            {
                "user": rng.choice(["nobody", pair.users[1].username]),
                "slug": rng.choice(GAME_SLUGS),
                "options": {},
                "side": "random",
                "time_control": "",
            },
        ),
        (
            "POST",
            f"/api/challenges/{challenge}/{rng.choice(['accept', 'decline', 'cancel'])}",
            {"reason": "busy"},
        ),
        ("POST", "/api/command", {"text": rng.choice(STRINGS)}),
        ("GET", f"/api/{rng.choice(['nothing', 'games/x', 'lobby/1', ''])}", None),
        ("DELETE", "/api/lobby", None),
        ("PUT", f"/api/games/{game}/move", {}),
        ("POST", rng.choice(["/api/seeks", "/api/command", f"/api/games/{game}/move"]), "FUZZ"),
    ]
    method, path, body = rng.choice(choices)
    if body == "FUZZ":
        text = frame(rng, "lobby")
        return (
            method,
            path,
            text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"),
        )
    return method, path, None if body is None else json.dumps(body).encode()


async def run(
    cluster: Cluster,
    tally: Tally,
    *,
    target: int,
    http_share: float,
    players: list[User],
    rng: random.Random,
) -> Answers:
    """Ask `target` random requests (a share of them over HTTP); what came back."""
    answers = Answers()
    codes = documented().codes
    names = [user.username for user in players]
    pairs = []
    for index in range(0, len(players) - 1, 2):
        first, second = players[index], players[index + 1]
        cookies = (
            await sync_to_async(session_cookie)(first),
            await sync_to_async(session_cookie)(second),
        )
        pair = Pair(users=(first, second), cookies=cookies)
        await _new_game(pair, cluster, tally, index)
        for seat in range(2):
            server = cluster.live_servers()[(index + seat + 1) % len(cluster.live_servers())]
            socket = Socket(server.ws, "/ws/lobby/", cookies[seat], tally)
            await socket.open()
            socket.on_frame = _remember(pair)
            pair.lobby.append(socket)
        pairs.append(pair)
    done = asyncio.Event()

    def count() -> None:
        if answers.asked >= target:
            done.set()

    async def lobby_loop(pair: Pair, seat: int) -> None:
        own = random.Random(rng.random())
        while not done.is_set():
            socket = pair.lobby[seat]
            message = lobby_request(own, pair, names)
            await _ask(socket, message, answers)
            count()
            await asyncio.sleep(own.uniform(0.08, 0.15))

    async def game_loop(pair: Pair, seat: int, index: int) -> None:
        own = random.Random(rng.random())
        while not done.is_set():
            async with pair.turn:
                socket = pair.game[seat]
                if socket.view.get("status", "active") != "active" or not socket.is_open:
                    await _new_game(pair, cluster, tally, index)
                    continue
                await _ask(socket, game_request(own, socket), answers)
            count()
            await asyncio.sleep(own.uniform(0.08, 0.15))

    async def http_loop(pair: Pair, seat: int) -> None:
        own = random.Random(rng.random())
        server = cluster.live_servers()[seat % len(cluster.live_servers())]
        browser = Browser(server.http, pair.cookies[seat])
        await asyncio.to_thread(browser.fetch, "GET", "/")
        while not done.is_set():
            method, path, body = http_request(own, pair)
            answers.asked += 1
            answers.http += 1
            try:
                status, data, _ = await asyncio.to_thread(browser.fetch, method, path, body)
            except Exception as error:
                answers.unanswered.append(f"HTTP {method} {path}: {type(error).__name__}")
                continue
            problem = check_http(status, data, codes)
            if problem:
                answers.undocumented.append(f"{method} {path}: {problem}")
            else:
                answers.answered += 1
                answers.kinds[f"HTTP {status}"] += 1
            count()
            # 120 a minute per user is the API's limit: keep under it mostly.
            await asyncio.sleep(own.uniform(0.2, 0.6) / max(http_share * 4, 0.01))

    tasks = []
    for index, pair in enumerate(pairs):
        for seat in range(2):
            tasks.append(lobby_loop(pair, seat))
            tasks.append(game_loop(pair, seat, index))
            if http_share > 0:
                tasks.append(http_loop(pair, seat))
    await asyncio.gather(*tasks)
    for pair in pairs:
        for socket in [*pair.lobby, *pair.game]:
            await socket.close()
    return answers


def _remember(pair: Pair) -> Any:
    """Keep the ids of challenges and seeks the pair hears of, to answer them later."""

    def heard(frame: dict[str, Any]) -> None:
        challenge = frame.get("challenge")
        if isinstance(challenge, dict) and challenge.get("id"):
            pair.challenges = [*pair.challenges[-20:], challenge["id"]]
        if frame.get("type") == "ok":
            if frame.get("challenge_id"):
                pair.challenges = [*pair.challenges[-20:], frame["challenge_id"]]
            if frame.get("seek_id"):
                pair.seeks = [*pair.seeks[-5:], frame["seek_id"]]

    return heard
