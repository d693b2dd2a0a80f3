"""The Bot API's streams: long-lived HTTP answers of newline-delimited JSON (docs/API.md).

A stream is a socket that only listens: it subscribes a channel of its own to the channel
layer's groups, as the sockets do, and writes what it hears as lines, one JSON frame a line,
with an empty line every KEEP_ALIVE_SECONDS. Django consumes it as an async iterator on the
server's event loop (StreamingHttpResponse), so an idle stream holds no thread.

- The event stream (`EventStream`) hears the lobby's personal messages to the account (the
  group `lobby.services.feed.user_group`, as the notification socket does) and the account's
  games starting and ending (`games_group`, told by the receivers below).
- The game stream (`GameStream`) hears the game's group, as the game socket does, and sends
  the versioned events through the socket's own `VersionedStream` (games/delivery.py): in
  order, no gap, none twice, caught up from the database when a broadcast is lost
  (games/catchup.py).

Every stream also hears the account's group (`realtime.ws.account_group`): a revoked token
(`accounts.tokens.TOKEN_REVOKED`) or an ended session ends its streams at once. A server that
drains for a restart (realtime/drain.py) tells each stream `restarting` and then ends it, as it
closes its sockets with 1012: the client opens the stream again (the proxy sends it to another
process), and a game stream starts again from its `state`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts import tokens
from botapi import payloads, protocol
from games import catchup, presence, reasons, selectors
from games.delivery import Versioned, VersionedStream, state_frame
from games.engine import rules_for
from games.models import ChatLine
from games.rules.notation import position_text
from lobby.models import Challenge
from lobby.payloads import challenge_payload
from lobby.services import feed
from realtime import drain
from realtime.api_errors import error
from realtime.channel_layers import LAYER_DOWN, LAYER_RETRY_SECONDS, group_send_many
from realtime.db import db_call, run_soon
from realtime.errors import http_status
from realtime.limits import CACHE_DOWN
from realtime.protocol import Restarting, encode
from realtime.ws import account_group

logger = logging.getLogger(__name__)

# A game stream ends this long after its game's `end`: what follows at once (a rematch offer)
# still reaches it.
END_LINGER_SECONDS = 1.0
# The claim of "one stream per game per token" lives this long unless its stream refreshes it
# (at each keep-alive): a process that dies frees its streams' claims within it.
CLAIM_SECONDS = 15.0


def games_group(user_id: int) -> str:
    """The group of a user's event streams: their games starting and ending."""
    return f"botapi.{user_id}"


# --- the account's games starting and ending (games/lifecycle.py's signals) ----------------
# The lobby tells a player of a game from a seek (`game_started` with `you`) but not of one
# from a challenge, a rematch or a tournament, and nobody tells them of its end but the public
# feed, which every lobby socket hears. The lifecycle signals cover every source: their
# receivers tell each player's event streams by the game's id alone, so a game costs a
# message per player and no read; only a stream that hears it reads the game.


def _tell(messages: list[tuple[str, dict[str, Any]]]) -> None:
    layer = get_channel_layer()
    if layer is None or not messages:
        return

    async def send() -> None:
        try:
            await group_send_many(layer, messages)
        except Exception:  # the game is committed; a stream that reopens reads it
            logger.exception("telling event streams of %d game(s) failed", len(messages))

    run_soon(send)


def games_started(games: list[Any], **_: Any) -> None:
    _tell(
        [
            (games_group(user_id), {"type": "botapi.game", "event": "start", "game_id": game.pk})
            for game in games
            for user_id in (game.player1_id, game.player2_id)
        ]
    )


def game_ended(game: Any, **_: Any) -> None:
    _tell(
        [
            (games_group(user_id), {"type": "botapi.game", "event": "finish", "game_id": game.pk})
            for user_id in (game.player1_id, game.player2_id)
        ]
    )


def connect() -> None:
    """Listen to the games' lifecycle (botapi/apps.py, once)."""
    from games import lifecycle

    lifecycle.games_started.connect(games_started, dispatch_uid="botapi.games_started")
    lifecycle.game_ended.connect(game_ended, dispatch_uid="botapi.game_ended")


# --- one stream per game per token -----------------------------------------------------------


def claim_key(token_id: int, game_id: int) -> str:
    return f"botapi:stream:{token_id}:{game_id}"


def claim(token_id: int, game_id: int) -> str | None:
    """Claim the game's stream for the token, in the cache that every process shares (Redis);
    the claim's value, or None when another stream holds it. While the cache is unreachable
    every stream is let through: the limit protects the site, its outage must not stop play."""
    value = uuid.uuid4().hex
    try:
        added = cache.add(claim_key(token_id, game_id), value, timeout=CLAIM_SECONDS)
    except CACHE_DOWN as error:
        logger.warning("stream claims unreachable (%s): stream let through", error)
        return value
    return value if added else None


def _refresh(key: str) -> None:
    with contextlib.suppress(*CACHE_DOWN):
        cache.touch(key, CLAIM_SECONDS)


def _release(key: str, value: str) -> None:
    with contextlib.suppress(*CACHE_DOWN):
        if cache.get(key) == value:
            cache.delete(key)


# --- positions ---------------------------------------------------------------------------------


class _Peek(msgspec.Struct):
    """What a stream reads of an event's text: its type, version and position."""

    type: str
    v: int = 0
    state: dict[str, Any] | None = None
    status: str | None = None


_peek = msgspec.json.Decoder(_Peek)
# (game id, version) -> the position after that event: both players' streams on a process,
# and its spectators', compute each position once.
_positions: OrderedDict[tuple[int, int], str] = OrderedDict()
POSITIONS_KEPT = 2048


def position_of(rules: Any, game_id: int, version: int, state: dict[str, Any]) -> str:
    key = (game_id, version)
    found = _positions.get(key)
    if found is None:
        found = position_text(rules, rules.from_json(state))
        _positions[key] = found
        if len(_positions) > POSITIONS_KEPT:
            _positions.popitem(last=False)
    return found


def with_position(text: str, position: str) -> str:
    """The frame's JSON text with `position` added (spliced: the stored text, not encoded
    again)."""
    return f'{text[:-1]},"position":{encode(position)}}}'


# --- the streams -------------------------------------------------------------------------------


class LineStream:
    """One streamed answer: the channel, its groups, the lines to send, the keep-alives, and
    its ends (the client leaving, a revoked token, the game over, the server restarting)."""

    def __init__(self, *, user: Any, token_id: int | None, session_key: str | None) -> None:
        self.user = user
        # None for a visitor watching a game (signed in by no session and no token).
        self.user_id: int | None = user.pk if user.is_authenticated else None
        self.token_id = token_id
        self.session_key = session_key
        self.language = translation.get_language()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._finished = False
        self._layer: Any = None
        self._channel = ""
        self._groups: list[str] = []
        self._pump: asyncio.Task[None] | None = None

    # --- what the subclasses do ---

    async def open(self) -> None:
        """Join the stream's groups and queue its first lines."""

    async def on_message(self, message: dict[str, Any]) -> None:
        """A message of one of the stream's groups."""

    async def keep_alive(self) -> None:
        """Called at each keep-alive line."""

    async def clean_up(self) -> None:
        """The stream ended, however it did."""

    # --- lines ---

    def put(self, text: str) -> None:
        if not self._finished:
            self._lines.put_nowait(text)

    def finish(self) -> None:
        """End the stream once the lines queued before are sent."""
        if not self._finished:
            self._finished = True
            self._lines.put_nowait(None)

    async def join(self, group: str) -> None:
        self._groups.append(group)
        await self._layer.group_add(group, self._channel)

    # --- the server restarting (realtime/drain.py treats a stream as one of its sockets) ---

    async def announce_restart(self, within_ms: int) -> None:
        self.put(encode(Restarting(within_ms=within_ms)))

    async def close_for_restart(self) -> None:
        self.finish()

    # --- the account ---

    def _account_message(self, message: dict[str, Any]) -> bool:
        """Whether this message of the account's group ends the stream."""
        kind = message["type"]
        if kind == tokens.TOKEN_REVOKED:
            return self.token_id is not None and self.token_id in message.get("tokens", ())
        if kind == "account.ended":
            # As a socket's (realtime/ws.py): one session's log-out ends that session's
            # streams; a new password or a closed account, every one but the kept session's.
            # A token's stream has no session: only those end it (and they revoke it too).
            keep = message.get("keep")
            return message.get("session") in (None, self.session_key) and (
                keep is None or keep != self.session_key
            )
        return False

    async def lines(self) -> AsyncIterator[bytes]:
        """The answer's body: the stream's lines, until it ends or its client leaves."""
        if self.language:
            translation.activate(self.language)
        if drain.is_draining():
            # Reached a process that is stopping: the client opens the stream again elsewhere.
            await self.clean_up()
            yield encode(Restarting(within_ms=0)).encode() + b"\n"
            return
        self._layer = get_channel_layer()
        drain.track(self)
        try:
            if self._layer is not None:
                self._channel = await self._layer.new_channel()
                self._pump = asyncio.create_task(self._receive())
                if self.user_id is not None:
                    await self.join(account_group(self.user_id))
            if self.token_id is not None and not await db_call(tokens.is_live)(self.token_id):
                return  # revoked while the stream opened
            await self.open()
            while True:
                try:
                    line = await asyncio.wait_for(self._lines.get(), protocol.KEEP_ALIVE_SECONDS)
                except TimeoutError:
                    await self.keep_alive()
                    yield b"\n"
                    continue
                if line is None:
                    return
                yield line.encode() + b"\n"
        finally:
            self._finished = True
            await asyncio.shield(self._close())

    async def _receive(self) -> None:
        """The channel's messages, one at a time, in order (the layer's receive waits out an
        outage of Redis, as a socket's does)."""
        delay = 0.2
        while True:
            try:
                message = await self._layer.receive(self._channel)
            except LAYER_DOWN as error:
                logger.warning("a stream's channel layer is unreachable (%s); waiting", error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, LAYER_RETRY_SECONDS)
                continue
            delay = 0.2
            try:
                if message["type"] in (tokens.TOKEN_REVOKED, "account.ended", "account.notice"):
                    if self._account_message(message):
                        self.finish()
                else:
                    await self.on_message(message)
            except Exception:
                logger.exception("a stream failed on %s", message.get("type"))

    async def _close(self) -> None:
        drain.untrack(self)
        try:
            await self.clean_up()
        except Exception:
            logger.exception("a stream could not clean up")
        if self._pump is not None:
            # Cancelling the receive is what unsubscribes the channel (realtime/ws.py).
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        for group in self._groups:
            try:
                await self._layer.group_discard(group, self._channel)
            except Exception:
                logger.warning("a stream could not leave %s", group)


class EventStream(LineStream):
    """GET /api/stream/event: the account's games and challenges."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Games announced: one opened or ended while the stream read its first lines is told
        # once, not twice.
        self._started: set[int] = set()
        self._finished_games: set[int] = set()

    async def open(self) -> None:
        assert self.user_id is not None, "the view lets only accounts in"
        if self._layer is not None:
            # Joined before reading: what happens meanwhile is heard, and told once.
            await self.join(feed.user_group(self.user_id))
            await self.join(games_group(self.user_id))
        games, challenges = await db_call(_opening)(self.user_id)
        for game in games:
            if game.id not in self._started:  # unless heard live meanwhile
                self._started.add(game.id)
                self.put(encode(protocol.GameStart(game=game)))
        for challenge in challenges:
            self.put(encode(protocol.ChallengeNews(challenge=challenge)))

    async def on_message(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "lobby.personal":
            self._personal(message["text"])
        elif kind == "botapi.game":
            await self._game(message["event"], message["game_id"])

    def _personal(self, text: str) -> None:
        frame = msgspec.json.decode(text)
        kind = frame.get("type")
        if kind == "challenge":
            self.put(text)  # the lobby's own frame, as it is
        elif kind == "challenge_updated":
            status = frame["challenge"]["status"]
            if status == Challenge.Status.DECLINED:
                self.put(encode({"type": "challenge_declined", "challenge": frame["challenge"]}))
            elif status in (Challenge.Status.CANCELLED, Challenge.Status.EXPIRED):
                self.put(encode({"type": "challenge_cancelled", "challenge": frame["challenge"]}))
            # accepted: its game_start follows

    async def _game(self, event: str, game_id: int) -> None:
        seen = self._started if event == "start" else self._finished_games
        if game_id in seen:
            return
        seen.add(game_id)
        game = await db_call(payloads.game_for)(game_id, self.user_id)
        if game is None:
            return
        if event == "start":
            self.put(encode(protocol.GameStart(game=game)))
        else:
            self.put(encode(protocol.GameFinish(game=game)))


def _opening(user_id: int) -> tuple[list[protocol.ApiGame], list[Any]]:
    from django.db.models import Q
    from django.utils import timezone

    pending = (
        Challenge.objects.filter(status=Challenge.Status.PENDING, expires_at__gt=timezone.now())
        .filter(Q(challenged_id=user_id) | Q(challenger_id=user_id))
        .select_related("challenger", "challenged")
        .order_by("created_at")
    )
    return payloads.active_games(user_id), [challenge_payload(c) for c in pending]


class GameStream(LineStream):
    """GET /api/games/<id>/stream: the game's `state`, then every versioned event."""

    def __init__(
        self,
        *,
        game_id: int,
        player: int | None,
        slug: str,
        options: dict[str, Any],
        claimed: tuple[str, str] | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.game_id = game_id
        self.player = player
        self.rules = rules_for(slug, options)
        self.claimed = claimed  # (key, value) of its claim, for a token's stream
        self.stream = VersionedStream(game_id, self._send_text, self._send_state, _no_timer)
        self._ending: asyncio.TimerHandle | None = None

    async def open(self) -> None:
        if self._layer is not None:
            # Joined before the state is read: an event racing it is heard and skipped by
            # version rather than lost (as the game socket does).
            await self.join(presence.game_group(self.game_id))
        await self.stream.resume(None)
        catchup.watch(self.stream)

    async def _send_state(self) -> int | None:
        frame = await db_call(state_frame)(self.game_id, self.user, self.player)
        if frame is None:
            self.finish()  # the game is gone (a moderator's removal): nothing more to say
            return None
        game = frame["game"]
        frame["position"] = position_of(self.rules, self.game_id, frame["v"], game["state"])
        self.put(encode(frame))
        if game["status"] != "active":
            self._end_soon()
        return int(frame["v"])

    async def _send_text(self, text: str) -> None:
        peek = _peek.decode(text)
        if peek.type in protocol.WITH_POSITION and peek.state is not None:
            text = with_position(text, position_of(self.rules, self.game_id, peek.v, peek.state))
        self.put(reasons.localize_frame(text))
        if peek.type == "end":
            self._end_soon()

    def _end_soon(self) -> None:
        if self._ending is None:
            self._ending = asyncio.get_running_loop().call_later(END_LINGER_SECONDS, self.finish)

    async def on_message(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "game.event":
            await self.stream.broadcast(Versioned.of(message, message["text"]))
        elif kind == "game.chat":
            # The players' room, to the players (as their sockets hear it).
            if (
                self.player is not None
                and message["room"] == ChatLine.Room.PLAYERS
                and self.user_id not in message["hidden_from"]
            ):
                self.put(message["text"])
        elif (
            kind == "game.chat_removed"
            and self.player is not None
            and message["room"] == ChatLine.Room.PLAYERS
        ):
            self.put(message["text"])

    async def keep_alive(self) -> None:
        if self.claimed is not None:
            await asyncio.to_thread(_refresh, self.claimed[0])

    async def clean_up(self) -> None:
        if self._ending is not None:
            self._ending.cancel()
        catchup.forget(self.stream)
        if self.claimed is not None:
            await asyncio.to_thread(_release, *self.claimed)


def _no_timer(clock: dict[str, Any] | None) -> None:
    """A stream arms no deadline of its own: the sweeper ends a game on time within a second
    of its deadline (games/management/commands/sweeper.py), and its `end` comes through the
    group like any event."""


# --- the doors ---------------------------------------------------------------------------------


def _answer(stream: LineStream) -> StreamingHttpResponse:
    # The view's database connection goes back to the pool now, not when the stream ends
    # (Django lets go of a request's connections once its answer is closed): otherwise every
    # open stream would hold one, and past DATABASE_POOL_MAX streams a process's requests
    # would wait for a connection and fail. The stream reads through db_call's own threads.
    connections.close_all()
    response = StreamingHttpResponse(stream.lines(), content_type="application/x-ndjson")
    response["Cache-Control"] = "no-store"
    # A proxy that buffers answers (nginx) would hold the lines back.
    response["X-Accel-Buffering"] = "no"
    return response


def _session_key(request: HttpRequest) -> str | None:
    if tokens.request_token(request) is not None:
        return None
    return getattr(getattr(request, "session", None), "session_key", None)


@require_GET
@tokens.accepts_tokens("read", "play", "challenge")
def event_stream(request: HttpRequest) -> HttpResponse:
    """GET /api/stream/event: the account's games starting and ending, and its challenges."""
    if not request.user.is_authenticated:
        return error(403, "not_logged_in", _("Log in (or send a token) to follow your events."))
    token = tokens.request_token(request)
    return _answer(
        EventStream(
            user=request.user,
            token_id=None if token is None else token.pk,
            session_key=_session_key(request),
        )
    )


@require_GET
@tokens.accepts_tokens("read", "play")
def game_stream(request: HttpRequest, game_id: int) -> HttpResponse:
    """GET /api/games/<id>/stream: the game's `state`, then every versioned event."""
    game = selectors.load_game(game_id)
    if game is None:
        return error(404, "no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    token = tokens.request_token(request)
    claimed = None
    if token is not None:
        value = claim(token.pk, game_id)
        if value is None:
            return error(
                http_status("too_many_streams"),
                "too_many_streams",
                _(
                    "This token already streams game %(game)s: one stream per game and token. "
                    "Close the other one first (a dropped one is let go within %(seconds)s s)."
                )
                % {"game": game_id, "seconds": int(CLAIM_SECONDS)},
            )
        claimed = (claim_key(token.pk, game_id), value)
    return _answer(
        GameStream(
            game_id=game_id,
            player=game.player_number(request.user),
            slug=game.slug,
            options=game.options,
            claimed=claimed,
            user=request.user,
            token_id=None if token is None else token.pk,
            session_key=_session_key(request),
        )
    )
