"""Bots playing over the Bot API, for `python -m devtools botapibench`: each bot follows its
event stream, opens the game stream of the game it is told of, and its moves are POSTed; every
line each stream hears is timed and its version checked.

Like loadtest's games over sockets, a game moves at `rate` moves a second, the mover's next
move sent once the last one's answer came (the answer carries the next legal moves, as the
socket's acknowledgement does), a random legal move each time. A move is timed from its POST
to its arrival on the opponent's game stream. A finished game is followed by a new one between
the same two bots, which their event streams announce.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from games.engine import pick_client_move

STREAM_OPEN_SECONDS = 60.0
GRACE_SECONDS = 3.0  # after the period: the last moves' lines still arrive


@dataclass
class Bot:
    username: str
    token: str
    url: str  # the server process its streams and requests go to


@dataclass
class Table:
    """Two bots and the game they play now."""

    game_id: int
    bots: dict[int, Bot]  # seat -> bot


@dataclass
class Tally:
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (game, v) -> POST at
    answered: dict[tuple[int, int], float] = field(default_factory=dict)  # -> its answer at
    mover: dict[tuple[int, int], int] = field(default_factory=dict)  # (game, v) -> seat
    # (game, v) -> seat -> when the seat's game stream had it
    arrivals: dict[tuple[int, int], dict[int, float]] = field(default_factory=dict)
    out_of_order: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    games_finished: int = 0
    announced: int = 0  # game_start lines on the event streams for the games played
    connects: list[float] = field(default_factory=list)  # ms from the event stream's open to
    # the game stream's state


class Clock:
    """Play starts once every game's two streams are open; the measured period `settle`
    seconds later, for `seconds`."""

    def __init__(self, expected: int, seconds: float, settle: float) -> None:
        self.expected = expected
        self.seconds = seconds
        self.settle = settle
        self.arrived = 0
        self.started = asyncio.Event()
        self.measure_from = self.stop_at = float("inf")

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.expected and not self.started.is_set():
            self.measure_from = time.perf_counter() + self.settle
            self.stop_at = self.measure_from + self.seconds
            self.started.set()

    def give_up(self) -> None:
        self.expected -= 1
        self.arrive()
        self.arrived -= 1


class GameView:
    """What one seat's game stream said last, and the versions it saw in order."""

    def __init__(self) -> None:
        self.state: dict[str, Any] | None = None
        self.v = -1
        self.ended = asyncio.Event()
        self.ready = asyncio.Event()


async def lines(response: aiohttp.ClientResponse) -> Any:
    """The stream's JSON lines (keep-alives skipped)."""
    while True:
        raw = await response.content.readline()
        if not raw:
            return
        if raw.strip():
            yield json.loads(raw)


def turn(view: dict[str, Any]) -> tuple[Any, int, int, str]:
    """What the next move needs from a game's state or a move's event: the legal moves, who
    moves, the ply, the status."""
    return view["legal_moves"], view["to_move"], view["ply"], view["status"]


def headers(bot: Bot) -> dict[str, str]:
    return {"Authorization": f"Bearer {bot.token}"}


class Driver:
    def __init__(
        self,
        tables: list[Table],
        *,
        rate: float,
        seconds: float,
        settle: float,
        seed: int,
        new_game: Callable[[Table], int],
        streams: bool = True,
    ) -> None:
        self.tables = tables
        self.rate = rate
        self.tally = Tally()
        self.clock = Clock(len(tables), seconds, settle)
        self.rng = random.Random(seed)
        self.new_game = new_game  # called in a thread: the next game of the table's two bots
        # False: no stream at all, the moves' POSTs alone (what the door for a move costs).
        self.streams = streams

    async def run(self, sample: Callable[[str], Any]) -> Tally:
        """Play every table; `sample("start")` and `sample("end")` are awaited at the measured
        period's ends (in a thread: they read the servers' CPU)."""
        connector = aiohttp.TCPConnector(limit=0, force_close=False)
        timeout = aiohttp.ClientTimeout(total=None, sock_read=30)
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, read_bufsize=2**20
        ) as session:
            self.session = session
            sampler = asyncio.ensure_future(self._sample(sample))
            await asyncio.gather(*(self._table(table) for table in self.tables))
            await sampler
        return self.tally

    async def _sample(self, sample: Callable[[str], Any]) -> None:
        await self.clock.started.wait()
        await asyncio.sleep(max(0.0, self.clock.measure_from - time.perf_counter()))
        await asyncio.to_thread(sample, "start")
        await asyncio.sleep(max(0.0, self.clock.stop_at - time.perf_counter()))
        await asyncio.to_thread(sample, "end")

    # --- one table: its two bots' streams and the moves -------------------------------------

    async def _table(self, table: Table) -> None:
        views = {1: GameView(), 2: GameView()}
        games: dict[int, asyncio.Queue[int]] = {1: asyncio.Queue(), 2: asyncio.Queue()}
        events = [
            asyncio.ensure_future(self._events(table.bots[seat], games[seat]))
            for seat in (1, 2)
            if self.streams
        ]
        joined = False
        try:
            while True:
                game_id = table.game_id
                views = {1: GameView(), 2: GameView()}
                opened = time.perf_counter()
                readers = []
                if not self.streams:
                    await self._snapshot(table.bots[1], game_id, views)
                for seat in (1, 2) if self.streams else ():
                    # Each bot's event stream names the game before its stream is opened.
                    announced = await asyncio.wait_for(
                        self._announced(games[seat], game_id), STREAM_OPEN_SECONDS
                    )
                    if announced:
                        self.tally.announced += 1
                    readers.append(
                        asyncio.ensure_future(
                            self._game_stream(table.bots[seat], game_id, seat, views[seat])
                        )
                    )
                await asyncio.wait_for(
                    asyncio.gather(views[1].ready.wait(), views[2].ready.wait()),
                    STREAM_OPEN_SECONDS,
                )
                self.tally.connects.append((time.perf_counter() - opened) * 1000)
                if not joined:
                    joined = True
                    self.clock.arrive()
                    await self.clock.started.wait()
                    await asyncio.sleep(self.rng.random() / self.rate)
                finished = await self._play(table, game_id, views)
                if not finished:
                    await asyncio.sleep(GRACE_SECONDS)
                for reader in readers:
                    reader.cancel()
                if not finished or time.perf_counter() >= self.clock.stop_at:
                    return
                self.tally.games_finished += 1
                table.game_id = await asyncio.to_thread(self.new_game, table)
        except Exception as error:
            self.tally.errors.append(f"table {table.game_id}: {type(error).__name__}: {error}")
            if not joined:
                self.clock.give_up()
        finally:
            for task in events:
                task.cancel()

    async def _snapshot(self, bot: Bot, game_id: int, views: dict[int, GameView]) -> None:
        """Without streams: the game as GET /api/games/<id> has it, for both seats."""
        url = f"{bot.url}/api/games/{game_id}"
        async with self.session.get(url, headers=headers(bot)) as response:
            game = (await response.json())["game"]
        for view in views.values():
            view.state = game
            view.ready.set()
            view.ended.set()  # nobody waits for an `end` that no stream brings

    async def _announced(self, queue: asyncio.Queue[int], game_id: int) -> bool:
        while True:
            if await queue.get() == game_id:
                return True

    async def _events(self, bot: Bot, games: asyncio.Queue[int]) -> None:
        """The bot's event stream: the ids of the games it starts, into `games`."""
        url = f"{bot.url}/api/stream/event"
        async with self.session.get(url, headers=headers(bot)) as response:
            if response.status != 200:
                self.tally.errors.append(f"event stream: {response.status} {await response.text()}")
                return
            async for line in lines(response):
                if line.get("type") == "game_start":
                    await games.put(int(line["game"]["id"]))

    async def _game_stream(self, bot: Bot, game_id: int, seat: int, view: GameView) -> None:
        url = f"{bot.url}/api/games/{game_id}/stream"
        async with self.session.get(url, headers=headers(bot)) as response:
            if response.status != 200:
                self.tally.errors.append(f"game stream: {response.status} {await response.text()}")
                return
            async for line in lines(response):
                now = time.perf_counter()
                kind = line.get("type")
                if kind == "state":
                    view.state = line["game"]
                    view.v = line["v"]
                    view.ready.set()
                    continue
                if "v" not in line:
                    continue
                if line["v"] != view.v + 1:
                    self.tally.out_of_order.append(
                        f"game {game_id} seat {seat}: v {line['v']} after {view.v}"
                    )
                view.v = max(view.v, line["v"])
                if kind == "move":
                    self.tally.arrivals.setdefault((game_id, line["v"]), {})[seat] = now
                elif kind == "end":
                    view.ended.set()

    async def _play(self, table: Table, game_id: int, views: dict[int, GameView]) -> bool:
        """Moves at the rate until the period ends (False) or the game does (True)."""
        start = views[1].state
        assert start is not None
        legal, to_move, ply, status = turn(start)
        interval = 1 / self.rate
        next_at = time.perf_counter()
        while status == "active" and time.perf_counter() < self.clock.stop_at:
            next_at += interval
            bot = table.bots[to_move]
            move = pick_client_move(legal, self.rng)
            sent = time.perf_counter()
            async with self.session.post(
                f"{bot.url}/api/games/{game_id}/move",
                json={"move": move, "ply": ply},
                headers=headers(bot),
            ) as response:
                answer = await response.json()
            answered = time.perf_counter()
            if "error" in answer:
                self.tally.errors.append(f"move: {answer['error']['code']}")
                return False
            event = answer["event"]
            key = (game_id, event["v"])
            self.tally.sent[key] = sent
            self.tally.answered[key] = answered
            self.tally.mover[key] = to_move
            legal, to_move, ply, status = turn(event)
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        if status == "active":
            return False
        await asyncio.wait_for(
            asyncio.gather(views[1].ended.wait(), views[2].ended.wait()), STREAM_OPEN_SECONDS
        )
        return True
