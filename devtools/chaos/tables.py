"""Live games kept going through the faults: two players on different server processes and
spectators, each socket reconnecting as a browser would, every acknowledged move recorded."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async

from accounts.models import User
from devtools.chaos.client import Socket, Tally, now, session_cookie
from devtools.chaos.cluster import Cluster
from games import services
from games.engine import pick_client_move
from games.models import Game, GameEvent

_ids = itertools.count(1)
SLUG = "diffusion"


@dataclass
class Table:
    """One game at a time between two users; a finished game is followed by a new one."""

    cluster: Cluster
    players: tuple[User, User]
    tally: Tally
    rng: random.Random
    spectators: int = 2
    game_id: int = 0
    cookies: dict[str, str | None] = field(default_factory=dict)
    sockets: dict[str, Socket] = field(default_factory=dict)
    acked: list[tuple[int, int, str]] = field(default_factory=list)  # (game, ply, move)
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (game, ply) -> sent at
    round_trips: list[tuple[float, float]] = field(default_factory=list)  # (at, ms)
    answers: dict[str, int] = field(default_factory=dict)
    busy: bool = False

    @property
    def roles(self) -> list[str]:
        return ["p1", "p2", *(f"s{n}" for n in range(1, self.spectators + 1))]

    def _home(self, role: str) -> int:
        """Players of a game on different processes; spectators spread over both."""
        index = self.roles.index(role)
        return index % len(self.cluster.servers)

    async def start(self) -> None:
        for seat, user in zip(("p1", "p2"), self.players, strict=True):
            self.cookies[seat] = await sync_to_async(session_cookie)(user)
        await self._new_game()

    async def _new_game(self) -> None:
        game = await sync_to_async(services.create_game)(
            slug=SLUG, options={}, player1=self.players[0], player2=self.players[1]
        )
        self.game_id = game.pk
        for socket in self.sockets.values():
            await socket.close()
        self.sockets = {}
        for role in self.roles:
            await self._connect(role, fresh=True)

    async def _connect(self, role: str, *, fresh: bool = False) -> bool:
        """(Re)open the role's socket on its own process, or on any live one; False if none
        answered this time."""
        old = self.sockets.get(role)
        servers = self.cluster.servers
        home = servers[self._home(role)]
        candidates = [home, *[s for s in servers if s is not home]]
        for server in candidates:
            if not server.alive:
                continue
            socket = Socket(
                server.ws, f"/ws/games/{self.game_id}/", self.cookies.get(role), self.tally
            )
            socket.on_frame = self._heard(role)
            try:
                if fresh or old is None:
                    await socket.open()
                else:
                    # As a browser reconnects: from the last version seen, without waiting
                    # for a snapshot (none comes when nothing was missed).
                    socket.v, socket.view = old.v, dict(old.view)
                    await socket.open(f"?v={old.v}", wait_first=False)
            except (OSError, TimeoutError, ConnectionError) as error:
                self.tally.errors[f"connect: {type(error).__name__}"] += 1
                await socket.close()
                continue
            except Exception as error:  # a refused handshake (the server dying)
                self.tally.errors[f"connect: {type(error).__name__}"] += 1
                await socket.close()
                continue
            self.sockets[role] = socket
            return True
        return False

    def _heard(self, role: str) -> Any:
        def heard(frame: dict[str, Any]) -> None:
            if frame.get("type") != "move" or role == f"p{frame.get('player')}":
                return
            sent_at = self.sent.pop((frame.get("game_id", 0), frame["ply"]), None)
            if sent_at is not None:
                at = now()
                self.round_trips.append((at, (at - sent_at) * 1000))

        return heard

    async def keep_connected(self, stop: asyncio.Event) -> None:
        """Reopen any socket that closed (its server was killed), as a page would."""
        while not stop.is_set():
            for role in self.roles:
                socket = self.sockets.get(role)
                if socket is None or not socket.is_open:
                    await self._connect(role, fresh=socket is None)
            await asyncio.sleep(0.2)

    def view(self) -> dict[str, Any]:
        """The newest view of the game among the players' sockets."""
        views = [self.sockets[seat].view for seat in ("p1", "p2") if seat in self.sockets]
        views = [v for v in views if v.get("id") == self.game_id]
        return max(views, key=lambda v: v.get("ply", -1)) if views else {}

    async def play(self, interval: float, go: asyncio.Event, stop: asyncio.Event) -> None:
        """Play random legal moves, about one every `interval` seconds, while `go` is set."""
        await asyncio.sleep(self.rng.random() * interval)
        while not stop.is_set():
            await go.wait()
            if stop.is_set():
                return
            self.busy = True
            try:
                await self._one_move()
            finally:
                self.busy = False
            await asyncio.sleep(interval * (0.5 + self.rng.random()))

    async def _one_move(self) -> None:
        view = self.view()
        if not view:
            return
        if view["status"] != "active":
            try:
                await self._new_game()
            except Exception as error:  # the database may be down this moment
                self.answers[f"new game: {type(error).__name__}"] = (
                    self.answers.get(f"new game: {type(error).__name__}", 0) + 1
                )
            return
        seat = f"p{view['to_move']}"
        socket = self.sockets.get(seat)
        if socket is None or not socket.is_open:
            return
        move = pick_client_move(view["legal_moves"], self.rng)
        request = {"type": "move", "move": move, "ply": view["ply"], "id": next(_ids)}
        self.sent[(self.game_id, view["ply"] + 1)] = now()
        try:
            answer = await socket.request(request, within=15)
        except (TimeoutError, ConnectionError, OSError) as error:
            self._count(f"no answer: {type(error).__name__}")
            return
        except Exception as error:  # the socket closed under the send
            self._count(f"no answer: {type(error).__name__}")
            return
        if answer["type"] == "move":
            self.acked.append((answer["game_id"], answer["ply"], answer["move"]))
            self._count("move (duplicate)" if answer.get("duplicate") else "move")
            return
        self._count(answer.get("code", answer["type"]))
        if answer.get("code") in ("unavailable", "not_your_turn"):
            # The move may have been applied before the cut: look, then go on.
            await asyncio.sleep(0.3)
            with contextlib.suppress(Exception):
                await socket.send({"type": "sync", "v": socket.v})

    def _count(self, what: str) -> None:
        self.answers[what] = self.answers.get(what, 0) + 1

    async def close(self) -> None:
        for socket in self.sockets.values():
            await socket.close()


def lost_moves(acked: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The acknowledged moves the database does not hold (game, ply, move)."""
    stored: dict[tuple[int, int], str] = {}
    games = {game for game, _, _ in acked}
    for game_id, ply, payload in GameEvent.objects.filter(
        game_id__in=games, ply__isnull=False
    ).values_list("game_id", "ply", "payload"):
        stored[(game_id, ply + 1)] = payload.get("move")
    return [(g, p, m) for g, p, m in acked if stored.get((g, p)) != m]


def versions(game_ids: list[int]) -> dict[int, int]:
    return dict(Game.objects.filter(pk__in=game_ids).values_list("pk", "version"))
