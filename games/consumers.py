"""The game socket /ws/games/<id>/: snapshot on connect, moves in, versioned events out.

Thin: each handler decodes a message and calls one service. Every versioned event goes out
through the socket's stream (games/delivery.py), which sends the versions in order, fills
gaps from the database and sends none twice. See docs/PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from contextlib import suppress
from typing import Any, ClassVar
from urllib.parse import parse_qs

import msgspec
from django.conf import settings
from django.utils.translation import gettext as _

from games import catchup, presence, protocol, reasons, selectors, services
from games.delivery import Versioned, VersionedStream, state_frame
from games.models import Game, GameConnection
from realtime import presence as process_presence
from realtime.db import db_call
from realtime.errors import ServiceError
from realtime.protocol import Message, encode
from realtime.ws import JsonConsumer

logger = logging.getLogger(__name__)

CLOSE_NO_SUCH_GAME = 4404
# After a deadline, spectators look a moment later than players: a player's socket usually
# ends the game and its broadcast reaches them first.
SPECTATOR_DEADLINE_DELAY = 0.25


# Unanswered lag probes a socket remembers (a reply to an older one no longer counts).
MAX_PROBES_OUTSTANDING = 3


class GameConsumer(JsonConsumer):
    messages = protocol.CLIENT_MESSAGES
    handlers: ClassVar[dict[str, str]] = {
        "move": "handle_move",
        "resign": "handle_resign",
        "abort": "handle_abort",
        "rematch": "handle_rematch",
        "sync": "handle_sync",
        "ping": "handle_ping",
        "claim": "handle_claim",
        "lag_reply": "handle_lag_reply",
        "chat": "handle_chat",
        "chat_mute": "handle_chat_mute",
        "queue": "handle_queue",
        "takeback": "handle_takeback",
        "takeback_answer": "handle_takeback_answer",
        "draw": "handle_draw",
        "draw_answer": "handle_draw_answer",
    }
    # How often a player's socket measures the round trip (lag compensation).
    lag_probe_seconds: ClassVar[float] = float(getattr(settings, "LAG_PROBE_SECONDS", 10.0))
    max_message_bytes: ClassVar[int | None] = 4096

    game_id: int
    player: int | None
    stream: VersionedStream

    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        self.user = self.scope.get("user")
        self.player = None
        self.joined = False
        self.lag_ms = 0  # half the measured round trip, smoothed
        self._probes: list[int] = []  # the `t` of the probes sent and not yet answered
        # Chat lines this socket's user sent from it: sent back at once, so their broadcast
        # is skipped here.
        self._own_lines: deque[int] = deque(maxlen=20)
        self._timer: asyncio.TimerHandle | None = None
        self._prober: asyncio.Task[None] | None = None
        self.stream = VersionedStream(self.game_id, self._send_text, self._send_state, self._arm)
        process_presence.ensure_heartbeat()
        # Accept at once: in a reconnection storm the handshake must not wait for the
        # database or the channel layer (the client waits for its snapshot instead).
        await self.accept()
        game = await db_call(selectors.load_game)(self.game_id)
        if game is None:
            await self.send_error(
                "no_such_game", _("There is no game %(game)s.") % {"game": self.game_id}
            )
            await self.close(code=CLOSE_NO_SUCH_GAME)
            return
        self.player = game.player_number(self.user)
        # Admitted under the socket caps and recorded as present in one step. `joined` first:
        # a socket dropped while it is admitted still leaves its row.
        self.joined = True
        if await self.refused_as_one_too_many(
            GameConnection, game_id=self.game_id, player=self.player
        ):
            self.joined, self.player = False, None
            return
        # Join before reading the snapshot: an event racing the snapshot is then received
        # and skipped by version rather than lost.
        await self.join(presence.game_group(self.game_id))
        if self.player is not None:
            await db_call(services.player_returned)(game_id=self.game_id, player=self.player)
        if await self.stream.resume(self._query_int("v")):
            await self._arm_from_game()
            chat = self._query_int("chat")
            if chat is not None:
                await self._send_chat_since(chat)
        if self.player is not None:
            # After the state (or the events since the client's version): a probe is never
            # the first frame a socket gets.
            self._prober = asyncio.create_task(self._probe_lag())
        catchup.watch(self.stream)
        presence.crowd_changed(self.game_id)

    async def disconnect(self, code: int) -> None:
        if not getattr(self, "joined", False):
            return
        if self._timer is not None:
            self._timer.cancel()
        if self._prober is not None:
            self._prober.cancel()
        catchup.forget(self.stream)
        if self.handed_over:
            # Closed for a restart: the player is back in a moment on another process; the
            # row is handed over (realtime/drain.py), so nobody is told they left.
            await self.channel_layer.group_discard(
                presence.game_group(self.game_id), self.channel_name
            )
            return
        try:
            await db_call(presence.leave)(channel_name=self.channel_name)
            if self.player is not None:
                await db_call(services.player_left)(game_id=self.game_id, player=self.player)
        finally:
            await self.channel_layer.group_discard(
                presence.game_group(self.game_id), self.channel_name
            )
            presence.crowd_changed(self.game_id)

    def _query_int(self, name: str) -> int | None:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        values = query.get(name)
        if not values:
            return None
        try:
            return max(0, int(values[0]))
        except ValueError:
            return None

    # --- sending ----------------------------------------------------------------------------

    async def _send_text(self, text: str) -> None:
        # Events are encoded once for everybody, in English: a result's reason is said in
        # this socket's language here (games/reasons.py), the rest goes out as it is.
        await self.send(text_data=reasons.localize_frame(text))

    async def _send_state(self) -> int | None:
        """Send the snapshot (the stream asks for it); the version it shows."""
        frame = await db_call(state_frame)(self.game_id, self.user, self.player)
        if frame is None:
            await self.send_error(
                "no_such_game", _("There is no game %(game)s.") % {"game": self.game_id}
            )
            return None
        await self.send_json(frame)
        self._arm(frame["game"].get("clock"))
        return int(frame["v"])

    async def game_event(self, message: dict[str, Any]) -> None:
        # The event arrives encoded once for every socket (services.broadcast).
        await self.stream.broadcast(Versioned.of(message, message["text"]))

    async def game_crowd(self, message: dict[str, Any]) -> None:
        await self._send_text(message["text"])

    async def game_chat(self, message: dict[str, Any]) -> None:
        # One broadcast reaches the whole game: each socket keeps its own room's lines.
        if message["room"] != selectors.chat_room(self.player):
            return
        if message["line_id"] in self._own_lines:
            return
        user_id = getattr(self.user, "pk", None)
        if user_id is not None and user_id in message["hidden_from"]:
            return
        await self.send(text_data=message["text"])

    async def game_chat_removed(self, message: dict[str, Any]) -> None:
        # A moderator removed a line: every socket of its room is told, whoever sees it.
        if message["room"] == selectors.chat_room(self.player):
            await self.send(text_data=message["text"])

    async def _send_chat_since(self, after: int) -> None:
        game = await db_call(selectors.load_game)(self.game_id)
        if game is None:
            return
        lines = await db_call(selectors.chat_lines)(game, self.user, self.player, after)
        if lines:
            room = selectors.chat_room(self.player)
            await self.send_json({"type": "chat_lines", "room": room, "lines": lines})

    # --- handlers ---------------------------------------------------------------------------

    async def _call(self, service: Any, message: Message, **kwargs: Any) -> None:
        """Run a service for the client and answer it: the one place that reads `Applied`."""
        echo = {} if message.id is None else {"id": message.id}
        # The stream is held from before the service runs until its answer is out: no other
        # path can send the request's event first (without its id), and its broadcast, which
        # comes round after, is skipped.
        async with self.stream.request() as reply:
            try:
                applied = await db_call(service)(game_id=self.game_id, user=self.user, **kwargs)
            except ServiceError as error:
                await self.send_error(error.code, error.message, **echo)
                if error.code == "stale_ply":
                    await reply.snapshot()
                return
            if applied.text is None:
                await self.send_json({"type": "ack", **echo, "duplicate": applied.duplicate})
            elif applied.duplicate:
                # A resend: the move's stored event (decoded only for its version).
                stored = applied.event or {}
                text = applied.reply(message.id, duplicate=True)
                await reply.duplicate(Versioned(v=stored["v"], text=text))
            else:
                # The mover hears back at once, with its id: the stored text with the
                # request's id spliced in, not encoded again.
                timing = applied.timing or {}
                await reply.event(
                    Versioned(
                        v=applied.version,
                        text=applied.reply(message.id),
                        timed="clock" in timing,
                        clock=timing.get("clock"),
                    )
                )

    async def handle_move(self, message: protocol.Move) -> None:
        await self._call(
            services.play_move, message, move=message.move, ply=message.ply, lag=self.lag_ms
        )

    async def handle_resign(self, message: protocol.Resign) -> None:
        await self._call(services.resign, message)

    async def handle_abort(self, message: protocol.Abort) -> None:
        await self._call(services.abort, message)

    async def handle_rematch(self, message: protocol.Rematch) -> None:
        await self._call(services.offer_rematch, message)

    async def handle_sync(self, message: protocol.Sync) -> None:
        self.charge(self.sync_cost)
        if await self.stream.resume(message.v) and message.chat is not None:
            await self._send_chat_since(message.chat)

    async def handle_chat(self, message: protocol.Chat) -> None:
        echo = {} if message.id is None else {"id": message.id}
        try:
            frame = await db_call(services.post_chat)(
                game_id=self.game_id, user=self.user, room=message.room, text=message.text
            )
        except ServiceError as error:
            await self.send_error(error.code, error.message, **echo)
            return
        self._own_lines.append(frame.line.id)
        await self._send_text(encode(msgspec.structs.replace(frame, id=message.id)))

    async def handle_queue(self, message: protocol.Queue) -> None:
        echo = {} if message.id is None else {"id": message.id}
        try:
            queue = await db_call(services.set_queue)(
                game_id=self.game_id, user=self.user, moves=list(message.moves)
            )
        except ServiceError as error:
            await self.send_error(error.code, error.message, **echo)
            return
        await self.send_json({"type": "queue", "moves": queue, **echo})

    async def handle_chat_mute(self, message: protocol.ChatMute) -> None:
        await self._call(services.mute_chat, message, mute=message.mute)

    async def handle_takeback(self, message: protocol.Takeback) -> None:
        await self._call(services.offer_takeback, message)

    async def handle_takeback_answer(self, message: protocol.TakebackAnswer) -> None:
        await self._call(services.answer_takeback, message, accept=message.accept)

    async def handle_draw(self, message: protocol.Draw) -> None:
        await self._call(services.offer_draw, message)

    async def handle_draw_answer(self, message: protocol.DrawAnswer) -> None:
        await self._call(services.answer_draw, message, accept=message.accept)

    async def handle_ping(self, message: protocol.Ping) -> None:
        await self.send_json({"type": "pong", "id": message.id})

    async def handle_claim(self, message: protocol.Claim) -> None:
        await self._call(services.claim_victory, message)

    async def handle_lag_reply(self, message: protocol.LagReply) -> None:
        # Only an answer to a probe this socket sent counts, once: the round trip is then the
        # server's own measurement, and a client cannot claim a slower line than it has.
        if message.t not in self._probes:
            return
        self._probes.remove(message.t)
        round_trip = services.now_ms() - message.t
        if 0 <= round_trip <= 10_000:
            one_way = round_trip // 2
            self.lag_ms = one_way if not self.lag_ms else (self.lag_ms * 3 + one_way) // 4

    # --- time -------------------------------------------------------------------------------

    async def _probe_lag(self) -> None:
        with suppress(Exception):  # the socket closing ends the probing, nothing else
            while True:
                await asyncio.sleep(self.lag_probe_seconds)
                sent = services.now_ms()
                self._probes = [*self._probes[-(MAX_PROBES_OUTSTANDING - 1) :], sent]
                await self.send_json({"type": "lag_probe", "t": sent})

    def _arm(self, clock: dict[str, Any] | None) -> None:
        """Check the clock at the deadline: a player's socket ends the game itself (the
        sweeper is the backstop when nobody is connected), a spectator's looks whether it
        ended and catches up."""
        if not clock or not clock.get("running"):
            self._arm_in(None)
            return
        if clock.get("first_move_by"):
            left = clock["first_move_by"] - clock["server_time"]
        else:
            left = clock["remaining"][clock["running"] - 1]
        self._arm_in(left / 1000)

    def _arm_in(self, seconds: float | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if seconds is not None:
            loop = asyncio.get_running_loop()
            delay = 0.05 if self.player is not None else SPECTATOR_DEADLINE_DELAY
            self._timer = loop.call_later(
                max(0.0, seconds) + delay, lambda: loop.create_task(self._at_deadline())
            )

    async def _at_deadline(self) -> None:
        try:
            game = await db_call(selectors.load_game)(self.game_id)
            if game is None:
                return
            overdue = (
                game.deadline is not None and game.deadline.timestamp() * 1000 <= services.now_ms()
            )
            if game.status == Game.Status.ACTIVE and (self.player is not None or overdue):
                game = (await db_call(services.check_clock)(game_id=self.game_id)).game
            # The game may have ended elsewhere (the sweeper, another process) without this
            # socket hearing of it: catch up by version.
            await self.stream.catch_up(game.version)
            await self._arm_from_game(game)
        except Exception:
            logger.exception("deadline check of game %s failed", self.game_id)

    async def _arm_from_game(self, game: Game | None = None) -> None:
        if game is None:
            game = await db_call(selectors.load_game)(self.game_id)
        if game is None or game.status != Game.Status.ACTIVE or game.deadline is None:
            self._arm_in(None)
            return
        self._arm_in(game.deadline.timestamp() - services.now_ms() / 1000)
