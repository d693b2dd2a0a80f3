"""Whole tournaments played through the sockets on the production shape: two server processes
and a sweeper on PostgreSQL and Redis. Each player's client keeps its notification socket
open, opens a game's socket when `game_started` (with `you`) comes, plays random legal moves
at once until the game's `end`; pages watch the tournament socket. The sweeper starts the
tournaments and pairs the arena's waves; a Swiss round is paired by whichever process counted
its last result. Afterwards: every game counted once, nobody in two games at once, the pages'
standings are the database's, and the Swiss has no rematch.

An arena lasts ten minutes at least: the test moves this one's end (`ends_at`, which the
sweeper obeys) to a few seconds after its start.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import msgspec
import pytest
import websockets
from django.db import connections
from django.utils import timezone

from accounts.models import User
from games.engine import pick_client_move
from games.models import GameEvent
from tests.games_helpers import make_user, session_for
from tests.servers import Server, background, daphnes, shared_test_env
from tournaments import selectors
from tournaments.models import Entry, Pairing, Tournament
from tournaments.services import creation

pytestmark = [
    pytest.mark.postgres(
        reason="two server processes and a sweeper share one database: PostgreSQL, with "
        "Redis between them"
    ),
    pytest.mark.django_db(transaction=True),
]

ARENA_SECONDS = 8  # from the arena's start to its end, as the test sets it
WITHIN = 60.0  # the longest the test waits for anything

T = TypeVar("T")


@pytest.fixture(scope="module")
def stack(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Server]]:
    """Two servers and a sweeper on the test database, for the whole file."""
    logs = tmp_path_factory.mktemp("tournament-servers")
    env = shared_test_env(f"tourney{time.time_ns() % 10**9}")
    with ExitStack() as started:
        servers = started.enter_context(daphnes(2, env, logs))
        started.enter_context(
            background([sys.executable, "manage.py", "sweeper"], env, logs / "sweeper.log")
        )
        yield servers


async def in_thread(call: Callable[[], T]) -> T:
    """A database call from the test's event loop (the ORM refuses to run on it)."""

    def run() -> T:
        try:
            return call()
        finally:
            connections.close_all()

    return await asyncio.to_thread(run)


@dataclass
class Page:
    """What a tournament page shows: its last version and standings."""

    v: int = 0
    status: str = ""
    standings: list[dict[str, Any]] = field(default_factory=list)
    gaps: int = 0


@dataclass
class Play:
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    games: list[asyncio.Task[None]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    ended: set[int] = field(default_factory=set)


async def connect(server: Server, path: str, cookie: str | None = None) -> Any:
    return await websockets.connect(
        server.ws + path,
        origin=websockets.Origin(server.http),
        additional_headers={"Cookie": cookie} if cookie else {},
        open_timeout=30,
    )


# The least time between two moves of one socket: a socket may send 20 messages a second, and
# the messages over the rate are dropped (docs/PROTOCOL.md, `rate_limited`).
MOVE_INTERVAL = 0.06


async def play_game(server: Server, cookie: str, game_id: int, play: Play, rng: Any) -> None:
    """Random legal moves, each as soon as the turn comes (within the socket's rate), until
    the game's end."""
    socket = await connect(server, f"/ws/games/{game_id}/", cookie)
    sent = 0.0
    try:
        you, view = None, {}
        while True:
            message = json.loads(await asyncio.wait_for(socket.recv(), WITHIN))
            if message["type"] == "state":
                you, view = message["you"], message["game"]
            elif message["type"] == "move":
                view = message
            elif message["type"] == "end":
                play.ended.add(game_id)
                return
            else:
                if message["type"] == "error":
                    play.errors.append(message)
                continue
            if view["status"] == "active" and view["to_move"] == you:
                await asyncio.sleep(max(0.0, sent + MOVE_INTERVAL - time.monotonic()))
                sent = time.monotonic()
                move = pick_client_move(view["legal_moves"], rng)
                await socket.send(
                    json.dumps({"type": "move", "move": move, "ply": view["ply"], "id": 0})
                )
    finally:
        await socket.close()


async def player(server: Server, cookie: str, play: Play, ready: asyncio.Queue[None]) -> None:
    """A player's client: the notification socket, and a game socket per new game."""
    rng = random.Random(cookie)
    notify = await connect(server, "/ws/notify/", cookie)
    await ready.put(None)
    try:
        while not play.finished.is_set():
            try:
                message = json.loads(await asyncio.wait_for(notify.recv(), 0.25))
            except TimeoutError:
                continue
            if message["type"] == "game_started" and "you" in message:
                game = play_game(server, cookie, message["game_id"], play, rng)
                play.games.append(asyncio.ensure_future(game))
    finally:
        await notify.close()


async def watch(server: Server, tournament_id: int, page: Page, play: Play) -> None:
    """A tournament page: its snapshot, then each update in order."""
    socket = await connect(server, f"/ws/tournaments/{tournament_id}/")
    try:
        while True:
            message = json.loads(await socket.recv())
            if message["type"] == "tournament":
                page.v, page.status = message["v"], message["tournament"]["status"]
                page.standings = message["standings"]
            elif message["type"] == "tournament_update":
                page.gaps += message["v"] != page.v + 1
                page.v, page.status = message["v"], message["status"]
                page.standings = message["standings"]
            if page.status == "finished":
                play.finished.set()
    finally:
        await socket.close()


async def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WITHIN
    while not await in_thread(check):
        assert time.monotonic() < deadline, f"not within {WITHIN} s: {what}"
        await asyncio.sleep(0.2)


def play_through(
    servers: list[Server],
    tournament: Tournament,
    users: list[User],
    after_start: Callable[[], None] = lambda: None,
) -> tuple[Play, list[Page]]:
    """Connect every player (alternating servers) and a page on each server, start the
    tournament, and play until it is finished and every game has ended."""
    cookies = [f"sessionid={session_for(user)}" for user in users]

    async def main() -> tuple[Play, list[Page]]:
        play, ready = Play(), asyncio.Queue[None]()
        pages = [Page() for _ in servers]
        watchers = [
            asyncio.ensure_future(watch(server, tournament.pk, page, play))
            for server, page in zip(servers, pages, strict=True)
        ]
        clients = [
            asyncio.ensure_future(player(servers[n % len(servers)], cookie, play, ready))
            for n, cookie in enumerate(cookies)
        ]
        for _ in clients:
            await asyncio.wait_for(ready.get(), WITHIN)
        # Everyone is listening: its start time comes, and the sweeper starts it.
        query = Tournament.objects.filter(pk=tournament.pk)
        await in_thread(lambda: query.update(starts_at=timezone.now()))
        await until(lambda: query.get().status != Tournament.Status.UPCOMING, "the start")
        await in_thread(after_start)
        try:
            await asyncio.wait_for(play.finished.wait(), WITHIN)
        except TimeoutError:
            raise AssertionError(
                f"not finished: {await in_thread(describe)}; errors {play.errors}"
            ) from None
        await asyncio.wait_for(asyncio.gather(*clients), WITHIN)
        await asyncio.wait_for(asyncio.gather(*play.games), WITHIN)
        # The pages have every change (the last games' results are counted after their end).
        pending = Pairing.objects.filter(tournament=tournament, result="")
        await until(lambda: not pending.exists(), "every game counted")
        version = await in_thread(lambda: query.get().version)
        await until(lambda: all(page.v == version for page in pages), "the pages up to date")
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        return play, pages

    def describe() -> str:
        row = Tournament.objects.get(pk=tournament.pk)
        pairings = Pairing.objects.filter(tournament=tournament).values_list(
            "round", "first_id", "second_id", "result", "game__status", "game__ply"
        )
        return f"{row.status} round {row.round} v{row.version}: {list(pairings)}"

    return asyncio.run(main())


def check_counted_once_and_never_two_games_at_once(tournament: Tournament) -> list[Pairing]:
    """Every game of the tournament ended and was counted once into its players' totals, and
    no player was in two of its games at once. Its played pairings."""
    pairings = list(Pairing.objects.filter(tournament=tournament, game__isnull=False))
    assert pairings
    ended = dict(
        GameEvent.objects.filter(
            game_id__in=[p.game_id for p in pairings], payload__type="end"
        ).values_list("game_id", "created_at")
    )
    assert set(ended) == {p.game_id for p in pairings}, "a game did not end"
    totals: Counter[tuple[int, str]] = Counter()
    spans: dict[int, list[tuple[Any, Any]]] = {}
    for pairing in pairings:
        assert pairing.game is not None
        span = (pairing.game.created_at, ended[pairing.game_id])
        for user, points in (
            (pairing.first_id, pairing.first_points),
            (pairing.second_id, pairing.second_points),
        ):
            assert user is not None
            spans.setdefault(user, []).append(span)
            if pairing.result != Pairing.Result.VOID:
                totals[(user, "games")] += 1
                totals[(user, "points")] += points
    for entry in Entry.objects.filter(tournament=tournament):
        byes = Pairing.objects.filter(tournament=tournament, first=entry.user, result="bye")
        points = totals[(entry.user_id, "points")] + sum(p.first_points for p in byes)
        assert (entry.games, entry.points) == (totals[(entry.user_id, "games")], points)
        assert not entry.playing
    for user, played in spans.items():
        played.sort()
        for before, after in itertools.pairwise(played):
            assert after[0] >= before[1], f"player {user} was in two games at once"
    return pairings


def check_pages_show_the_database(tournament: Tournament, pages: list[Page]) -> None:
    tournament.refresh_from_db()
    top, _, _ = selectors.standings(tournament)
    expected = msgspec.to_builtins(top)
    for page in pages:
        assert page.gaps == 0
        assert page.status == "finished"
        assert page.standings == expected


def test_an_arena_is_played_whole_through_the_sockets_on_two_processes(
    stack: list[Server],
) -> None:
    creator, *users = [make_user(f"arena{n}") for n in range(7)]
    tournament = creation.create_tournament(
        creator=creator, kind="arena", slug="diffusion", time_control="1+0", minutes=10
    )
    Entry.objects.bulk_create(Entry(tournament=tournament, user=user) for user in users)

    def shorten() -> None:
        # The test's own length: the sweeper ends the arena at its `ends_at`.
        Tournament.objects.filter(pk=tournament.pk).update(
            ends_at=timezone.now() + timedelta(seconds=ARENA_SECONDS)
        )

    play, pages = play_through(stack, tournament, users, after_start=shorten)
    assert not play.errors
    pairings = check_counted_once_and_never_two_games_at_once(tournament)
    assert len(play.ended) == len(pairings)
    # Several waves: the players were paired again as their games ended.
    assert len({p.round for p in pairings}) >= 2
    assert any(p.result in ("1", "2", "draw") for p in pairings)
    check_pages_show_the_database(tournament, pages)


def test_a_swiss_is_played_whole_through_the_sockets_on_two_processes(
    stack: list[Server],
) -> None:
    creator, *users = [make_user(f"swiss{n}") for n in range(6)]
    tournament = creation.create_tournament(
        creator=creator, kind="swiss", slug="diffusion", time_control="1+0", rounds=3
    )
    Entry.objects.bulk_create(Entry(tournament=tournament, user=user) for user in users)
    play, pages = play_through(stack, tournament, users)
    assert not play.errors
    pairings = check_counted_once_and_never_two_games_at_once(tournament)
    assert len(play.ended) == len(pairings) == 3 * 2  # five players: two games and a bye
    assert sorted(p.round for p in pairings) == [1, 1, 2, 2, 3, 3]
    met = Counter(frozenset((p.first_id, p.second_id)) for p in pairings)
    assert max(met.values()) == 1, "a rematch"
    byes = Pairing.objects.filter(tournament=tournament, result="bye")
    assert sorted(Counter(p.first_id for p in byes).values()) == [1, 1, 1]
    check_pages_show_the_database(tournament, pages)
