"""python -m devtools tvbench: a crowd watching TV (/tv/) on real server processes.

    python -m devtools tvbench --watchers 1000 --procs 2 --moves 30 --arrive-seconds 10

Starts PROCS Daphne processes (PostgreSQL and REDIS_URL for more than one) and makes two live
real-time games: the one TV shows (its players rated highest) and the next. Each of WATCHERS
watchers does what a browser on /tv/ does (static/js/tv.js), spread over the processes as a
proxy would spread them and arriving over ARRIVE_SECONDS: it loads the page `GET /tv/`, opens
the TV socket `/ws/tv/` and waits for the snapshot of the game shown. Once every watcher has
it, the players play MOVES moves at RATE a second through their own sockets, and the bench
takes each move's time from the mover's send to each watcher's receipt. Then the player to
move resigns: the server pushes the switch on the same sockets (a `tv` frame naming the next
game, then its snapshot), and the switch is timed from the resignation's send to the next
game's snapshot.

Static files are not fetched (a browser has them cached after its first page). The issue's
figures: each move p99 <= 100 ms; the switch reaching every watcher within 2 s.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from devtools.chaos.client import session_cookie
from devtools.servers import (
    BenchServer,
    check_shared_services,
    no_collector_pauses,
    percentile,
    start_servers,
    stop_servers,
    usage,
)
from games import services
from games.engine import pick_client_move
from ratings.glicko import INITIAL_DEVIATION, INITIAL_VOLATILITY
from ratings.models import Rating
from ratings.services import speed_of

MOVE_GOAL_MS = 100.0
SWITCH_GOAL_S = 2.0
SLUG = "four-rank-diffusion"  # long games: the moves never end the game first
TIME_CONTROL = "10+5"


@dataclass
class Figures:
    connects: list[float] = field(default_factory=list)  # ms, dial to snapshot
    sent: dict[int, float] = field(default_factory=dict)  # version -> mover's send
    arrivals: dict[int, list[float]] = field(default_factory=dict)  # version -> receipts
    resigned_at: float = 0.0
    switches: list[float] = field(default_factory=list)  # s, resignation to next snapshot
    errors: list[str] = field(default_factory=list)


def address_of(index: int) -> str:
    """Watcher `index`'s own address, as the proxy in front passes it on (X-Forwarded-For):
    the site's limits count each watcher apart, as they would count a thousand browsers."""
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256 + 1}"


async def http_get(port: int, path: str, client: str) -> tuple[int, bytes]:
    """One GET over its own connection, as a browser's first request to a process is."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Forwarded-For: {client}"
                "\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await (reader.readexactly(length) if length is not None else reader.read())
        return status, body
    finally:
        writer.close()


class Command(BaseCommand):
    help = "TV's watchers: each move's delivery and the switch to the next game, timed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--watchers", type=int, default=1000)
        parser.add_argument("--procs", type=int, default=2)
        parser.add_argument("--moves", type=int, default=30)
        parser.add_argument("--rate", type=float, default=2.0, help="moves per second")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--arrive-seconds",
            type=float,
            default=10.0,
            help="the watchers arrive spread over this long (a page each, then its socket)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import websockets  # noqa: F401
        except ImportError as error:
            raise CommandError("tvbench needs the dev extra: pip install -e '.[dev]'") from error
        check_shared_services(options["procs"])
        self.rng = random.Random(options["seed"])
        shown, following, cookies = self._prepare()
        # The pages name their static files as production does (hashed, from the manifest).
        call_command("collectstatic", interactive=False, verbosity=0)
        # Behind a proxy, as the image runs (docker/Dockerfile): the client's address is the
        # one the proxy passes on.
        servers = start_servers(options["procs"], "--proxy-headers")
        self.stdout.write(
            f"{options['procs']} Daphne process(es) on ports {[s.port for s in servers]}; "
            f"TV shows game {shown}, the next is {following}; {options['watchers']} watchers"
        )
        try:
            with no_collector_pauses():
                figures, cpu = asyncio.run(self._run(servers, options, shown, following, cookies))
            memory = [server.peak_memory_mb() for server in servers]
        finally:
            stop_servers(servers)
        self._report(figures, options, cpu, memory, following)

    # --- the two games --------------------------------------------------------------------

    def _prepare(self) -> tuple[int, int, dict[int, str]]:
        run = f"{int(time.time()) % 100000}"
        games = []
        # Rated above anything else in the database, the first pair above the second.
        top = max([row.rating for row in Rating.objects.order_by("-rating")[:1]] or [1500.0])
        for index, rating in enumerate((top + 200, top + 100)):
            first = User.objects.create_user(username=f"tvb{run}a{index}", password=None)
            second = User.objects.create_user(username=f"tvb{run}b{index}", password=None)
            game = services.create_game(
                slug=SLUG, options={}, player1=first, player2=second, time_control=TIME_CONTROL
            )
            for player in (first, second):
                Rating.objects.create(
                    user=player,
                    slug=SLUG,
                    speed=speed_of(game),
                    rating=rating,
                    deviation=INITIAL_DEVIATION,
                    volatility=INITIAL_VOLATILITY,
                )
            games.append(game)
        shown, following = games
        cookies = {1: session_cookie(shown.player1), 2: session_cookie(shown.player2)}
        return shown.pk, following.pk, cookies

    # --- watching -------------------------------------------------------------------------

    async def _run(
        self,
        servers: list[BenchServer],
        options: dict[str, Any],
        shown: int,
        following: int,
        cookies: dict[int, str],
    ) -> tuple[Figures, dict[str, float]]:
        figures = Figures()
        count = options["watchers"]
        ready = asyncio.Semaphore(0)
        switched = asyncio.Event()
        done = [0]

        async def watcher(index: int) -> None:
            port = servers[index % len(servers)].port
            await asyncio.sleep(options["arrive_seconds"] * index / count)
            try:
                socket = await self._tune_in(port, address_of(index), figures)
                ready.release()
                shown_now = shown
                async for raw in socket:
                    now = time.perf_counter()
                    message = json.loads(raw)
                    kind = message["type"]
                    if kind == "move" and shown_now == shown:
                        figures.arrivals.setdefault(message["v"], []).append(now)
                    elif kind == "tv":
                        shown_now = message["game"]["id"] if message["game"] else 0
                        if shown_now != following:
                            figures.errors.append(f"watcher {index} went on to {shown_now}")
                    elif kind == "state" and shown_now == following:
                        figures.switches.append(now - figures.resigned_at)
                        break
                    elif kind == "error":
                        figures.errors.append(f"{message['code']}: {message['message']}")
                await socket.close()
            except Exception as error:
                figures.errors.append(f"watcher {index}: {type(error).__name__}: {error}")
                ready.release()
            finally:
                done[0] += 1
                if done[0] == count:
                    switched.set()

        watchers = [asyncio.ensure_future(watcher(index)) for index in range(count)]
        for _ in range(count):
            await asyncio.wait_for(ready.acquire(), 120)
        self.stdout.write(
            f"every watcher has the game (arriving over {options['arrive_seconds']:.0f} s): page "
            f"and socket to snapshot p50 {percentile(figures.connects, 0.5):.0f} ms, p99 "
            f"{percentile(figures.connects, 0.99):.0f} ms"
        )
        await asyncio.sleep(1.0)  # the crowd's count settles
        before = await asyncio.to_thread(usage, servers)
        await self._play(servers[0].port, shown, cookies, options, figures)
        await asyncio.wait_for(switched.wait(), 60)
        after = await asyncio.to_thread(usage, servers)
        await asyncio.gather(*watchers)
        cpu = {key: after[key] - before.get(key, 0) for key in after}
        return figures, cpu

    async def _tune_in(self, port: int, client: str, figures: Figures) -> Any:
        """As a browser opening /tv/: the page, then the TV socket until the game's snapshot."""
        import websockets

        dialled = time.perf_counter()
        status, _ = await http_get(port, "/tv/", client)
        if status != 200:
            raise RuntimeError(f"/tv/ answered {status}")
        socket = await websockets.connect(
            f"ws://127.0.0.1:{port}/ws/tv/",
            origin=websockets.Origin(f"http://127.0.0.1:{port}"),
            additional_headers={"X-Forwarded-For": client},
            open_timeout=60,
            max_queue=None,
        )
        async for raw in socket:
            message = json.loads(raw)
            if message["type"] == "state":
                break
            if message["type"] == "error":
                raise RuntimeError(f"{message['code']}: {message['message']}")
        figures.connects.append((time.perf_counter() - dialled) * 1000)
        return socket

    # --- playing --------------------------------------------------------------------------

    async def _play(
        self,
        port: int,
        game_id: int,
        cookies: dict[int, str],
        options: dict[str, Any],
        figures: Figures,
    ) -> None:
        import websockets

        url = f"ws://127.0.0.1:{port}/ws/games/{game_id}/"
        origin = websockets.Origin(f"http://127.0.0.1:{port}")
        players = {
            seat: await websockets.connect(
                url, origin=origin, additional_headers={"Cookie": cookies[seat]}
            )
            for seat in (1, 2)
        }
        answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        view: dict[str, Any] = {}

        async def read(seat: int) -> None:
            async for raw in players[seat]:
                message = json.loads(raw)
                if message["type"] == "state" and seat == 1:
                    view.update(message["game"])
                    await answers.put(message)
                elif "id" in message:
                    await answers.put(message)

        readers = [asyncio.ensure_future(read(seat)) for seat in players]
        try:
            await asyncio.wait_for(answers.get(), 30)
            legal, to_move, ply = view["legal_moves"], view["to_move"], view["ply"]
            interval = 1 / options["rate"]
            next_at = time.perf_counter()
            for _ in range(options["moves"]):
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                sent = time.perf_counter()
                move = pick_client_move(legal, self.rng)
                await players[to_move].send(
                    json.dumps({"type": "move", "move": move, "ply": ply, "id": ply})
                )
                answer = await asyncio.wait_for(answers.get(), 30)
                if answer["type"] != "move":
                    raise CommandError(f"the move was refused: {answer}")
                figures.sent[answer["v"]] = sent
                legal, to_move, ply = answer["legal_moves"], answer["to_move"], answer["ply"]
                if answer["status"] != "active":
                    raise CommandError("the game ended before the resignation: use fewer moves")
            await asyncio.sleep(1.0)  # the last move's broadcast reaches everybody first
            figures.resigned_at = time.perf_counter()
            await players[to_move].send(json.dumps({"type": "resign", "id": "resign"}))
        finally:
            await asyncio.sleep(0.5)
            for reader in readers:
                reader.cancel()
            for socket in players.values():
                await socket.close()

    # --- reporting ------------------------------------------------------------------------

    def _report(
        self,
        figures: Figures,
        options: dict[str, Any],
        cpu: dict[str, float],
        memory: list[float],
        following: int,
    ) -> None:
        watchers = options["watchers"]
        delays = [
            (arrival - sent) * 1000
            for version, sent in figures.sent.items()
            for arrival in figures.arrivals.get(version, [])
        ]
        lost = len(figures.sent) * watchers - len(delays)
        p99 = percentile(delays, 0.99)
        self.stdout.write(
            f"moves: {len(figures.sent)} moves x {watchers} watchers: p50 "
            f"{percentile(delays, 0.5):.1f} ms, p99 {p99:.1f} ms, max "
            f"{max(delays or [float('nan')]):.1f} ms; lost {lost}"
        )
        switched = len(figures.switches)
        slowest = max(figures.switches or [float("inf")])
        self.stdout.write(
            f"switch to game {following}: {switched}/{watchers} watchers, p50 "
            f"{percentile(figures.switches, 0.5):.2f} s, p99 "
            f"{percentile(figures.switches, 0.99):.2f} s, all within {slowest:.2f} s"
        )
        self.stdout.write(
            f"servers: CPU {cpu.get('cpu_seconds', float('nan')):.1f} s while playing and "
            f"switching; peak memory {', '.join(f'{mb:.0f}' for mb in memory)} MB"
        )
        for error in figures.errors[:10]:
            self.stdout.write(f"error: {error}")
        met_moves = p99 <= MOVE_GOAL_MS and lost == 0
        met_switch = switched == watchers and slowest <= SWITCH_GOAL_S
        self.stdout.write(
            f"goals: each move p99 <= {MOVE_GOAL_MS:.0f} ms: {'met' if met_moves else 'missed'};"
            f" the switch reaching all within {SWITCH_GOAL_S:.0f} s: "
            f"{'met' if met_switch else 'missed'}; errors {len(figures.errors)}"
        )
