"""Live play through a rolling restart: the deploy figure of `loadtest --rolling-restart`.

Every socket behaves as the site's pages do (static/js/socket.js): after a close with 1012 it
comes back within a random second, to another process if its own is gone, resuming from the
last version it saw; a move that got no answer is sent again once the socket is back (the
server answers a resend of a played move with the stored event, `duplicate`). A page's new
socket goes to the ready process with the fewest sockets, as the proxy's `least_conn` sends
it. Meanwhile each server process in turn is replaced as an upgrade does (docs/DEPLOY.md):
its replacement is started on a spare port, and once it is ready the old one is sent SIGTERM
and waited for; or, with `surge` off, the old one is stopped first and started again on its
port.

What is counted, as a player would see it:
- moves lost: acknowledged moves the database does not hold, and moves never acknowledged;
- error frames, of any code;
- banners: what makes a page show "reconnecting…" or "left the game": a close other than
  1012, a reconnect after 1012 that took longer than the pages' quiet 3 s, an `away` frame;
- the move round trip (the mover's send to every other socket of the game), for the moves
  sent during the restarts and for the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DatabaseError, close_old_connections
from django.db import connection as database

from accounts.models import User
from devtools.chaos.client import session_cookie
from devtools.chaos.tables import lost_moves
from devtools.servers import BenchServer, percentile, replace_server, restart_server
from games import services
from games.engine import pick_client_move
from lobby.protocol_doc import UndocumentedFrame, check_text

# The pages' own figures (static/js/socket.js).
RESTART_SPREAD_SECONDS = 0.5
QUIET_SECONDS = 3.0
RETRY_SECONDS = 0.5
LAST_EVENTS_SECONDS = 20.0  # the most a game's last move event is waited for, at its end
ANSWER_MOST = 16.0  # the longest a page waits for its ping's answer (static/js/socket.js)

_ids = itertools.count(1)


@dataclass
class Tally:
    errors: Counter[str] = field(default_factory=Counter)  # error frames, by code
    # The players' own process failing to make a game while the database is away: no frame a
    # server sent, so counted apart from the error frames.
    harness_errors: Counter[str] = field(default_factory=Counter)
    closes: Counter[int] = field(default_factory=Counter)
    away: int = 0
    slow_reconnects: list[float] = field(default_factory=list)  # seconds, over QUIET_SECONDS
    reconnects: list[float] = field(default_factory=list)  # seconds from close to open
    moves: list[float] = field(default_factory=list)  # seconds to open the new socket
    acked: list[tuple[int, int, str]] = field(default_factory=list)  # (game, ply, move)
    unacked: int = 0  # moves sent that got no answer
    undelivered: int = 0  # move events a socket of the game never got
    undelivered_at: list[float] = field(default_factory=list)  # when those moves were sent
    trips: list[tuple[float, float]] = field(default_factory=list)  # (sent at, ms)
    restarts: list[tuple[float, float]] = field(default_factory=list)  # (stopped, ready) s
    connect_failures: int = 0
    marks: list[tuple[float, str]] = field(default_factory=list)  # (when, what) for --timeline
    # When each of `acked` was answered (time.monotonic, the same clock in every process of
    # the machine), and by which table.
    acked_at: list[tuple[float, int]] = field(default_factory=list)
    # Check every frame against docs/PROTOCOL.md (the cluster drill); what did not match.
    check_frames: bool = False
    undocumented: list[str] = field(default_factory=list)
    # As the pages do (static/js/socket.js): after `silence` seconds without a frame, a ping;
    # no frame `answer` seconds after it, the socket is given up as dead and replaced (each
    # socket given up in a row waits twice as long, up to ANSWER_MOST, until a frame comes).
    heartbeat: tuple[float, float] | None = None
    dead: int = 0  # sockets given up so
    dead_at: list[float] = field(default_factory=list)  # when (time.monotonic)
    playing: set[int] = field(default_factory=set)  # tables whose sockets are all open
    phases: dict[int, str] = field(default_factory=dict)  # table -> what it waits for now
    # With `trace`, every change of phase and what happened in it: (time.monotonic, table,
    # what), to tell where a game stalled (the cluster drill prints the longest stalls).
    trace: bool = False
    traced: list[tuple[float, int, str]] = field(default_factory=list)
    unfinished: dict[str, int] = field(default_factory=dict)  # at the stop: phase -> tables
    all_playing: asyncio.Event = field(default_factory=asyncio.Event)
    tables: int = 0
    window: tuple[float, float] = (0.0, 0.0)
    on: Counter[int] = field(default_factory=Counter)  # server -> sockets open on it
    surge: bool = False  # each replacement started before its process was stopped

    def enter(self, table: int, phase: str) -> None:
        self.phases[table] = phase
        self.note(table, phase)

    def note(self, table: int, what: str) -> None:
        if self.trace:
            self.traced.append((time.monotonic(), table, what))


class Seat:
    """One page's socket to a game: reconnects like the site's pages."""

    def __init__(
        self,
        role: str,
        game_id: int,
        cookie: str | None,
        servers: list[BenchServer],
        home: int,
        tally: Tally,
        rng: random.Random,
        table: int = 0,
    ) -> None:
        self.role = role
        self.table = table
        self.game_id = game_id
        self.cookie = cookie
        self.servers = servers
        self.home = home
        self.tally = tally
        self.rng = rng
        self.v = 0
        self.view: dict[str, Any] = {}
        self.connection: Any = None
        self.open = asyncio.Event()
        self.viewed = asyncio.Event()  # a snapshot arrived
        self.heard: dict[int, float] = {}  # ply after the move -> when its event arrived
        self.news = asyncio.Event()  # set at each frame taken, for whoever waits for one
        self.acks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.stopping = False
        self.moving: set[asyncio.Task[None]] = set()
        # Each socket is read by its own task: after a move the new one is read at once, while
        # the old one's close is still under way (as a page's two sockets each have theirs).
        self.readers: dict[Any, asyncio.Task[int]] = {}
        self.where: dict[Any, int] = {}  # socket -> the server it is on
        self.last_frame = time.monotonic()
        self.patience = 0.0  # seconds the next ping waits for its answer (0: the heartbeat's)
        self.watchers: set[asyncio.Task[None]] = set()
        self.stated = -1  # the highest ply a snapshot brought

    async def _dial(self, order: list[int], query: str) -> Any:
        """A new socket on the first of these servers that takes it (None if none did)."""
        import websockets

        for index in order:
            server = self.servers[index]
            if server.retired:
                continue  # stopping: the proxy sends nothing there any more
            try:
                connection = await websockets.connect(
                    f"ws://{server.address}:{server.port}/ws/games/{self.game_id}/{query}",
                    origin=websockets.Origin(f"http://{server.address}:{server.port}"),
                    additional_headers={"Cookie": self.cookie} if self.cookie else {},
                    open_timeout=30,
                    # A page that leaves does not wait for the server's half of the close.
                    close_timeout=2,
                )
            except Exception as error:  # refused (the process is stopping or gone): the next one
                self.tally.connect_failures += 1
                self.tally.note(self.table, f"{self.role}: dial failed ({type(error).__name__})")
                continue
            self.at = index
            self.where[connection] = index
            self.tally.on[index] += 1
            return connection
        return None

    def _others_first(self) -> list[int]:
        """The servers, the one with the fewest sockets first as the proxy's `least_conn`
        does, and the one this socket is on (the one going away) last."""
        at = getattr(self, "at", self.home)
        others = sorted(
            (i for i in range(len(self.servers)) if i != at), key=lambda i: self.tally.on[i]
        )
        return [*others, at]

    async def run(self) -> None:
        first = True
        closed_at = 0.0
        restarted = False
        while not self.stopping:
            if self.connection is None:
                order = (
                    self._others_first()
                    if restarted
                    else [self.home, *[i for i in range(len(self.servers)) if i != self.home]]
                )
                # As the pages: resume from a version only once a snapshot gave one (a socket
                # closed before its first frame asks for the snapshot again).
                resume = "" if first or not self.viewed.is_set() else f"?v={self.v}"
                connection = await self._dial(order, resume)
                if connection is None:
                    await asyncio.sleep(RETRY_SECONDS * (0.75 + self.rng.random() / 2))
                    continue
                if not first:
                    took = time.perf_counter() - closed_at
                    self.tally.reconnects.append(took)
                    if restarted and took > QUIET_SECONDS:
                        self.tally.slow_reconnects.append(took)
                first = False
                self.tally.note(self.table, f"{self.role}: socket open ({resume or 'snapshot'})")
                self.connection = connection
                self.readers[connection] = asyncio.ensure_future(self._read(connection))
                self._watch_later(connection)
                self.open.set()
            connection = self.connection
            code = await self.readers[connection]
            self.readers.pop(connection, None)
            if self.stopping:
                return
            if self.connection is not connection:
                continue  # moved to another process: read the new socket
            self.open.clear()
            self.connection = None
            closed_at = time.perf_counter()
            self.tally.closes[code] += 1
            self.tally.note(self.table, f"{self.role}: socket closed {code}")
            restarted = code == 1012
            wait = (
                self.rng.random() * RESTART_SPREAD_SECONDS
                if restarted
                else RETRY_SECONDS * (0.75 + self.rng.random() / 2)
            )
            await asyncio.sleep(wait)

    async def _move(self, within_ms: int) -> None:
        """As the pages do after `restarting`: at a random moment of the window, open a new
        socket elsewhere, make it this seat's socket, then close the old one."""
        await asyncio.sleep(self.rng.random() * within_ms / 1000 * 0.8)
        old = self.connection
        if old is None or self.stopping:
            return
        started = time.perf_counter()
        # Behind one proxy (the cluster drill) the proxy is the way elsewhere.
        order = self._others_first()[:-1] if len(self.servers) > 1 else [0]
        new = await self._dial(order, f"?v={self.v}")
        if new is None or self.connection is not old or self.stopping:
            if new is not None:
                await new.close()
            return
        self.tally.moves.append(time.perf_counter() - started)
        self.tally.note(self.table, f"{self.role}: moved to a new socket after `restarting`")
        self.readers[new] = asyncio.ensure_future(self._read(new))
        self._watch_later(new)
        self.connection = new
        await old.close()

    def _watch_later(self, connection: Any) -> None:
        if self.tally.heartbeat is not None:
            watcher = asyncio.ensure_future(self._watch(connection))
            self.watchers.add(watcher)
            watcher.add_done_callback(self.watchers.discard)

    async def _watch(self, connection: Any) -> None:
        """The pages' heartbeat on this socket, until it closes."""
        assert self.tally.heartbeat is not None
        silence, answer = self.tally.heartbeat
        self.last_frame = time.monotonic()
        pinged = False
        while connection in self.readers and not self.stopping:
            await asyncio.sleep(0.25)
            quiet = time.monotonic() - self.last_frame
            if quiet < silence:
                pinged = False
            elif not pinged:
                pinged = True
                with contextlib.suppress(Exception):
                    await connection.send(json.dumps({"type": "ping", "id": "heartbeat"}))
            elif quiet > silence + (self.patience or answer):
                self.patience = min((self.patience or answer) * 2, ANSWER_MOST)
                self.tally.dead += 1
                self.tally.note(self.table, f"{self.role}: socket given up as silent")
                self.tally.dead_at.append(time.monotonic())
                connection.transport.abort()  # no closing handshake on a dead path
                return

    async def _read(self, connection: Any) -> int:
        import websockets

        try:
            async for raw in connection:
                self.last_frame = time.monotonic()
                self.patience = 0.0
                if self.tally.check_frames:
                    try:
                        check_text(f"/ws/games/{self.game_id}/", raw)
                    except UndocumentedFrame as error:
                        self.tally.undocumented.append(str(error)[:300])
                        continue
                self._take(json.loads(raw))
        except websockets.ConnectionClosed:
            pass
        self.tally.on[self.where.pop(connection, -1)] -= 1
        received = connection.protocol.close_rcvd
        return received.code if received is not None else 1006

    def _take(self, message: dict[str, Any]) -> None:
        now = time.perf_counter()
        self.news.set()
        for event in message["events"] if message["type"] == "batch" else [message]:
            kind = event["type"]
            if isinstance(event.get("v"), int):
                self.v = max(self.v, event["v"])
            if kind == "state":
                self.view = dict(event["game"])
                self.viewed.set()
                # A snapshot holds every move up to its ply: a socket that opened just as a
                # move was made has it from the snapshot, not as an event.
                self.stated = max(self.stated, int(self.view.get("ply", -1)))
            elif kind == "move":
                self.heard.setdefault(event["ply"], now)
                if event["ply"] >= self.view.get("ply", -1):
                    self.view.update(
                        ply=event["ply"],
                        to_move=event["to_move"],
                        legal_moves=event["legal_moves"],
                        status=event["status"],
                    )
                if "id" in event:
                    self.acks.put_nowait(event)
            elif kind == "error":
                self.tally.errors[event.get("code", "?")] += 1
                if "id" in event:
                    self.acks.put_nowait(event)
            elif kind == "away":
                self.tally.away += 1
            elif kind == "restarting":
                task = asyncio.ensure_future(self._move(event["within_ms"]))
                self.moving.add(task)
                task.add_done_callback(self.moving.discard)

    async def send(self, message: dict[str, Any]) -> Any:
        """Send on the open socket, and return it; one closing under the send is waited out,
        as the pages hold what they send while they reconnect."""
        import websockets

        while True:
            await self.open.wait()
            connection = self.connection
            if connection is None:
                await asyncio.sleep(0.01)
                continue
            try:
                await connection.send(json.dumps(message))
                return connection
            except websockets.ConnectionClosed:
                # The reader notices the close and clears `open`; wait for the next socket.
                while self.connection is connection:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)

    async def close(self) -> None:
        self.stopping = True
        if self.connection is not None:
            await self.connection.close()
        for reader in self.readers.values():
            reader.cancel()
        for watcher in self.watchers:
            watcher.cancel()


@dataclass
class Table:
    users: tuple[Any, Any]  # the two players (accounts.User)
    cookies: dict[int, str]  # seat -> Cookie header
    slug: str


def signed_in_tables(count: int, slug: str, prefix: str) -> list[Table]:
    """`count` tables of `slug`, each with two new accounts signed in (named `prefix`, the run
    and the seat and table: unique across runs on one database)."""
    run = f"{int(time.time()) % 100000}"
    tables = []
    for index in range(count):
        users = (
            User.objects.create_user(username=f"{prefix}{run}a{index}", password=None),
            User.objects.create_user(username=f"{prefix}{run}b{index}", password=None),
        )
        cookies = {1: session_cookie(users[0]), 2: session_cookie(users[1])}
        tables.append(Table(users=users, cookies=cookies, slug=slug))
    return tables


async def _any_news(seats: list[Any]) -> None:
    """Until one of `seats` takes a frame."""
    for seat in seats:
        seat.news.clear()
    waits = [asyncio.ensure_future(seat.news.wait()) for seat in seats]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _undelivered(sent: dict[int, tuple[float, str]], seats: dict[str, Any]) -> list[float]:
    """When each move event a socket of the game has not had yet was sent (once a socket)."""
    return [
        at
        for ply, (at, mover_role) in sent.items()
        for seat in seats.values()
        if seat.role != mover_role and ply + 1 not in seat.heard and seat.stated < ply + 1
    ]


async def play_table(
    table: Table,
    servers: list[BenchServer],
    spectators: int,
    rate: float,
    stop: asyncio.Event,
    tally: Tally,
    rng: random.Random,
    player: Callable[[int, Table], Awaitable[None]] | None = None,
) -> None:
    """Games between the table's two players, one after another, until `stop`. Each game's
    successor is made while it is played: the time between two games is the harness's, not
    the site's (the site's lobby is not in this loop). `player` plays a game instead of this
    process's own sockets (the cluster drill's Node.js players)."""
    upcoming = asyncio.ensure_future(_next_game(table, tally))
    try:
        while not stop.is_set():
            tally.enter(id(table), "waiting for the next game to be made")
            game = await upcoming
            upcoming = asyncio.ensure_future(_next_game(table, tally))
            if player is not None:
                await player(game.pk, table)
                continue
            await play_game(
                game.pk, table.cookies, servers, spectators, rate, stop, tally, rng, id(table)
            )
    finally:
        upcoming.cancel()  # one made meanwhile is left unplayed
        tally.phases.pop(id(table), None)


async def _next_game(table: Table, tally: Tally) -> Any:
    # On threads of their own (made one after another, 250 games took the cluster drill 80 s
    # to start); SQLite writes from one thread.
    sqlite = database.vendor == "sqlite"
    while True:
        try:
            return await sync_to_async(_new_game, thread_sensitive=sqlite)(table, tally)
        except DatabaseError as error:  # the database away a moment (the cluster drill)
            tally.harness_errors[f"new game: {type(error).__name__}"] += 1
            tally.note(id(table), f"new game: {type(error).__name__}")
            await asyncio.sleep(RETRY_SECONDS)


def _new_game(table: Table, tally: Tally) -> Any:
    close_old_connections()  # one the database dropped is replaced
    return services.create_game(
        slug=table.slug, options={}, player1=table.users[0], player2=table.users[1]
    )


async def play_game(
    game_id: int,
    cookies: dict[int, str],
    servers: list[BenchServer],
    spectators: int,
    rate: float,
    stop: asyncio.Event,
    tally: Tally,
    rng: random.Random,
    table_id: int,
) -> None:
    # Every socket of a game on one process, as a proxy hashing the game would.
    live = [index for index, server in enumerate(servers) if not server.retired]
    home = live[game_id % len(live)]
    seats = {
        "p1": Seat("p1", game_id, cookies[1], servers, home, tally, rng, table_id),
        "p2": Seat("p2", game_id, cookies[2], servers, home, tally, rng, table_id),
        **{
            f"s{n}": Seat(f"s{n}", game_id, None, servers, home, tally, rng, table_id)
            for n in range(spectators)
        },
    }
    runners = [asyncio.ensure_future(seat.run()) for seat in seats.values()]
    sent: dict[int, tuple[float, str]] = {}  # ply moved from -> (sent at, mover)
    try:
        tally.enter(table_id, "opening its sockets")
        await asyncio.gather(*(seat.open.wait() for seat in seats.values()))
        tally.enter(table_id, "waiting for the game's snapshot")
        await seats["p1"].viewed.wait()
        tally.playing.add(table_id)
        if len(tally.playing) >= tally.tables:
            tally.all_playing.set()
        await asyncio.sleep(rng.random() / rate)
        interval = 1 / rate
        next_at = time.perf_counter()
        view = dict(seats["p1"].view)
        while view.get("status") == "active" and not stop.is_set():
            next_at += interval
            mover = seats[f"p{view['to_move']}"]
            ply = view["ply"]
            move = pick_client_move(view["legal_moves"], rng)
            request = {"type": "move", "move": move, "ply": ply, "id": next(_ids)}
            sent[ply] = (time.perf_counter(), mover.role)
            tally.enter(table_id, f"waiting for the answer to a move of game {game_id}")
            answer = await _answered(mover, request)
            retries = 0
            while answer is not None and answer.get("code") == "unavailable" and retries < 60:
                # The database away a moment (the cluster drill's failover): as a player
                # would, the same move again shortly; if it was stored after all, the answer
                # is the stored event (`duplicate`).
                retries += 1
                tally.note(table_id, "the move answered `unavailable`: sent again")
                await asyncio.sleep(RETRY_SECONDS * (0.75 + rng.random() / 2))
                answer = await _answered(mover, {**request, "id": next(_ids)})
            if answer is None:
                tally.unacked += 1
                break
            if answer["type"] == "error":
                break
            tally.acked.append((game_id, answer["ply"], answer["move"]))
            tally.acked_at.append((time.monotonic(), table_id))
            view = dict(mover.view)
            tally.enter(table_id, "between moves")
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        tally.enter(table_id, "letting the last events arrive")
        # A socket given up in a fault's window has the last move from its next socket's
        # catch-up: that takes the heartbeat's wait and a reconnect, so it is given
        # LAST_EVENTS_SECONDS (more than the drill's goals) before it counts as never got.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LAST_EVENTS_SECONDS):
                while _undelivered(sent, seats):
                    await _any_news(list(seats.values()))
    finally:
        for ply, (at, mover_role) in sent.items():
            for seat in seats.values():
                heard = seat.heard.get(ply + 1)
                if seat.role != mover_role and heard is not None:
                    tally.trips.append((at, (heard - at) * 1000))
        for at in _undelivered(sent, seats):
            tally.undelivered += 1
            tally.undelivered_at.append(at)
        tally.enter(table_id, "closing its sockets")
        await asyncio.gather(*(seat.close() for seat in seats.values()))
        tally.phases.pop(table_id, None)
        for runner in runners:
            runner.cancel()


async def _answered(mover: Seat, request: dict[str, Any]) -> dict[str, Any] | None:
    """Send the move and wait for its answer; after a reconnect, send it again (a played
    move is answered `duplicate`). None if no answer came within a minute."""
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline:
        # The socket the move went out on (the seat's may be replaced while it is sent).
        connection = await mover.send(request)
        while time.perf_counter() < deadline:
            try:
                answer = await asyncio.wait_for(mover.acks.get(), 0.2)
            except TimeoutError:
                if mover.connection is not connection:
                    # The socket it went on was replaced: the move may not have arrived.
                    mover.tally.note(mover.table, f"{mover.role}: move sent again")
                    break
                continue
            if answer.get("id") == request["id"]:
                return answer
    return None


async def run(
    tables: list[Table],
    servers: list[BenchServer],
    *,
    spectators: int,
    rate: float,
    before: float,
    after: float,
    seed: int,
    surge: bool = False,
) -> Tally:
    """Play every table; `before` seconds into play, restart each server in turn; play on
    `after` seconds after the last is back. With `surge`, each server's replacement is
    started (on a new port) and ready before the server is stopped."""
    tally = Tally(tables=len(tables), surge=surge)
    rng = random.Random(seed)
    stop = asyncio.Event()
    players = [
        asyncio.ensure_future(play_table(table, servers, spectators, rate, stop, tally, rng))
        for table in tables
    ]
    await tally.all_playing.wait()  # every game's sockets are open: the steady state
    await asyncio.sleep(before)
    began = time.perf_counter()
    for index, server in enumerate(list(servers)):
        signalled = time.perf_counter()
        number = index + 1
        if surge:
            ready, stopped = await asyncio.to_thread(replace_server, servers, index)
            tally.marks += [
                (signalled, f"replacement of process {number} started"),
                (signalled + ready, f"it is ready; SIGTERM to process {number}"),
                (signalled + stopped, f"process {number} exited"),
            ]
        else:
            stopped, ready = await asyncio.to_thread(restart_server, server)
            tally.marks += [
                (signalled, f"SIGTERM to process {number}"),
                (signalled + stopped, f"process {number} exited"),
                (signalled + ready, f"process {number} ready again"),
            ]
        tally.restarts.append((stopped, ready))
        await asyncio.sleep(2.0)  # pages settle before the next process goes
    tally.window = (began, time.perf_counter())
    await asyncio.sleep(after)
    stop.set()  # every game finishes the move in hand
    await asyncio.gather(*players)
    return tally


def report(tally: Tally, write: Any, timeline: bool = False) -> bool:
    """Print the figures; whether the restart went unnoticed (0 lost, 0 errors, 0 banners,
    p99 under 1 s during the restarts)."""
    start, end = tally.window
    during = [ms for sent, ms in tally.trips if start <= sent <= end]
    outside = [ms for sent, ms in tally.trips if not start <= sent <= end]
    lost = lost_moves(tally.acked)
    bad_closes = {code: n for code, n in tally.closes.items() if code != 1012}
    banners = sum(bad_closes.values()) + len(tally.slow_reconnects) + tally.away
    errors = sum(tally.errors.values())
    for index, (stopped, ready) in enumerate(tally.restarts):
        write(
            f"process {index + 1}: replacement ready in {ready:.2f} s, then drained, the old "
            f"one exited {stopped - ready:.2f} s after its signal"
            if tally.surge
            else f"process {index + 1}: drained and stopped in {stopped:.2f} s, "
            f"serving again {ready:.2f} s after the signal"
        )
    reconnects = tally.reconnects
    if reconnects:
        write(
            f"reconnects after a close: {len(reconnects)}, close to open p50 "
            f"{statistics.median(reconnects) * 1000:.0f} ms, p99 "
            f"{percentile(reconnects, 0.99) * 1000:.0f} ms, max {max(reconnects) * 1000:.0f} ms "
            f"(the page waits a random 0-{RESTART_SPREAD_SECONDS * 1000:.0f} ms first)"
        )
    if tally.moves:
        write(
            f"sockets moved to another process after `restarting`: {len(tally.moves)}, the new "
            f"socket open in p50 {statistics.median(tally.moves) * 1000:.0f} ms, p99 "
            f"{percentile(tally.moves, 0.99) * 1000:.0f} ms"
        )
    write(f"closes seen by the clients: {dict(sorted(tally.closes.items()))}")
    write(
        f"moves acknowledged {len(tally.acked)}, lost {len(lost)}, never answered "
        f"{tally.unacked}, move events a socket never got {tally.undelivered}; error frames "
        f"{errors} {dict(tally.errors)}; the players' own failures to make a game "
        f"{dict(tally.harness_errors)}; banners a player would "
        f"see {banners} (closes other than 1012: {sum(bad_closes.values())}, reconnects over "
        f"{QUIET_SECONDS:g} s: {len(tally.slow_reconnects)}, `away` frames: {tally.away})"
    )
    p99 = percentile(during, 0.99) if during else float("nan")
    if during:
        write(
            f"round trip during the restarts ({end - start:.1f} s, {len(during)} deliveries): "
            f"p50 {statistics.median(during):.1f}  p99 {p99:.1f}  max {max(during):.1f} ms"
        )
    before = [ms for sent, ms in tally.trips if sent < start]
    if before:
        write(
            f"round trip before them ({len(before)} deliveries): p50 "
            f"{statistics.median(before):.1f}  p99 {percentile(before, 0.99):.1f} ms"
        )
    if outside:
        write(
            f"round trip outside them ({len(outside)} deliveries): p50 "
            f"{statistics.median(outside):.1f}  p99 {percentile(outside, 0.99):.1f} ms"
        )
    if timeline and tally.trips:
        first = min(sent for sent, _ in tally.trips)
        buckets: dict[int, list[float]] = {}
        for sent, ms in tally.trips:
            buckets.setdefault(int((sent - first) // 2), []).append(ms)
        for index in sorted(buckets):
            values = buckets[index]
            mark = "*" if start - first <= index * 2 <= end - first else " "
            events = [what for when, what in tally.marks if int((when - first) // 2) == index]
            write(
                f"  {mark} t={index * 2:3d}s  n={len(values):4d}  p50 "
                f"{statistics.median(values):7.1f}  p99 {percentile(values, 0.99):8.1f} ms"
                + (f"  <- {'; '.join(events)}" if events else "")
            )
    ok = (
        not lost
        and not tally.unacked
        and not tally.undelivered
        and errors == 0
        and banners == 0
        and p99 < 1000
    )
    write(f"rolling restart unnoticed: {'yes' if ok else 'NO'}")
    return ok
