"""The bare stack, served only by the floors of `python -m devtools stackfloor` (under a move)
and `lobbybench --floor` (under a pairing).

The same server (Daphne started through config.serve), the same Pub/Sub channel layer on
Redis and the same kind of PostgreSQL transaction per move as the product (lock the game
row, insert the event, update the game), with nothing of ours on top: no sessions, no ORM,
no rules, no clocks, no presence. A move is a frame carrying the ply; the server runs the
transaction through raw psycopg in a thread pool and publishes the new ply to the game's
group, whose sockets forward it. What this costs per move is what the product's move path
cannot go below on the same machine.

A pairing (BareLobby, /ws/bare/lobby/<user>/) is a frame from a seeker: Redis pairs it with
the seeker waiting, in one atomic script, or keeps it waiting; a pair is one INSERT of its
game through raw psycopg (none with ?store=0), then `game_started` goes to both seekers'
groups. No sessions, no batching, no validation, no rules, no feed: what the product's seek
path cannot go below.

HTTP (the health check) is Django's, as in config.asgi, with /bench/stats (devtools/stats.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "devtools.settings")
django_asgi_app = get_asgi_application()

import psycopg  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import path  # noqa: E402

from devtools import stats  # noqa: E402

GAMES_TABLE = "bench_bare_game"
EVENTS_TABLE = "bench_bare_event"
PAIRINGS_TABLE = "bench_bare_pairing"
# Redis: the waiting seeker (a user id) under this key; the script takes it or takes its place.
WAITING_KEY = "bench:bare:waiting"
PAIR_SCRIPT = """
local waiting = redis.call('GET', KEYS[1])
if waiting and waiting ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return waiting
end
redis.call('SET', KEYS[1], ARGV[1])
return false
"""

_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bare-db")
_local = threading.local()


def _connection() -> psycopg.Connection[Any]:
    conn = getattr(_local, "conn", None)
    if conn is None:
        database = settings.DATABASES["default"]
        conn = psycopg.connect(
            host=database["HOST"] or "127.0.0.1",
            port=database["PORT"] or 5432,
            user=database["USER"],
            dbname=database["NAME"],
        )
        _local.conn = conn
    return conn


def play(game_id: int, ply: int, text: str) -> bool:
    """The move's transaction: lock, insert the event, update the game. False if stale."""
    conn = _connection()
    with conn.transaction(), conn.cursor() as cursor:
        cursor.execute(f"SELECT ply, state FROM {GAMES_TABLE} WHERE id = %s FOR UPDATE", [game_id])
        row = cursor.fetchone()
        if row is None or row[0] != ply:
            return False
        cursor.execute(
            f"INSERT INTO {EVENTS_TABLE} (game_id, ply, payload) "
            "VALUES (%s, %s, CAST(%s AS jsonb))",
            [game_id, ply + 1, text],
        )
        cursor.execute(
            f"UPDATE {GAMES_TABLE} SET ply = %s, state = %s, updated_at = now() WHERE id = %s",
            [ply + 1, text, game_id],
        )
    return True


def store_pairing(first: int, second: int) -> int:
    """The game of a pair: one INSERT, its id."""
    conn = _connection()
    with conn.transaction(), conn.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {PAIRINGS_TABLE} (player1, player2) VALUES (%s, %s) RETURNING id",
            [first, second],
        )
        row = cursor.fetchone()
    assert row is not None
    return int(row[0])


_redis: dict[int, Any] = {}


def _pairing_script() -> Any:
    """The pairing script on this process's Redis client (one event loop: one client)."""
    import redis.asyncio

    key = id(asyncio.get_running_loop())
    if key not in _redis:
        # A burst waits for one of a few connections rather than opening one per seek.
        pool = redis.asyncio.BlockingConnectionPool.from_url(settings.REDIS_URL, max_connections=8)
        client = redis.asyncio.Redis(connection_pool=pool)
        _redis[key] = client.register_script(PAIR_SCRIPT)
    return _redis[key]


class BareLobby(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.user_id = int(self.scope["url_route"]["kwargs"]["user_id"])
        # ?store=0: no database at all, only what Daphne, Channels and Redis cost.
        self.store = b"store=0" not in self.scope["query_string"]
        await self.accept()
        await self.channel_layer.group_add(f"bare.user.{self.user_id}", self.channel_name)
        await self.send(text_data='{"type":"ready"}')

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(f"bare.user.{self.user_id}", self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        json.loads(text_data or "{}")  # decoded, as any server must; a seek says nothing more
        waiting = await _pairing_script()(keys=[WAITING_KEY], args=[self.user_id])
        await self.send(text_data='{"type":"ok"}')
        if waiting is None:
            return
        other = int(waiting)
        loop = asyncio.get_running_loop()
        game_id = (
            await loop.run_in_executor(_pool, store_pairing, other, self.user_id)
            if self.store
            else self.user_id
        )
        await asyncio.gather(
            *(
                self.channel_layer.group_send(
                    f"bare.user.{user_id}",
                    {
                        "type": "game.event",
                        "text": json.dumps(
                            {"type": "game_started", "game_id": game_id, "you": you}
                        ),
                    },
                )
                for you, user_id in ((1, other), (2, self.user_id))
            )
        )

    async def game_event(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])


class BareGame(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        self.group = f"bare.{self.game_id}"
        await self.accept()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send(text_data='{"type":"ready"}')

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        ply = int(json.loads(text_data or "{}")["ply"])
        text = json.dumps({"type": "move", "ply": ply + 1})
        loop = asyncio.get_running_loop()
        if await loop.run_in_executor(_pool, play, self.game_id, ply, text):
            await self.channel_layer.group_send(self.group, {"type": "game.event", "text": text})
        else:
            await self.send(text_data='{"type":"error"}')

    async def game_event(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])


application = ProtocolTypeRouter(
    {
        "http": stats.serving(django_asgi_app),
        "websocket": URLRouter(
            [
                path("ws/bare/lobby/<int:user_id>/", BareLobby.as_asgi()),
                path("ws/bare/<int:game_id>/", BareGame.as_asgi()),
            ]
        ),
    }
)
stats.enable()
