"""The base of every websocket consumer: decoding, size limits, dispatch and error frames.

Consumers stay thin: a subclass names its typed messages (``messages``, from the app's
protocol module) and their handlers (``handlers``), and each handler calls one service.
Whatever a client sends, it gets a clear ``error`` frame back and the socket stays open;
nothing a client sends can crash the consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import typing
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from realtime import drain, language, logs, metrics, presence
from realtime.channel_layers import LAYER_DOWN, LAYER_RETRY_SECONDS
from realtime.errors import UNAVAILABLE, ServiceError, is_outage
from realtime.protocol import Message, Restarting, decode, decoder, encode, tag_of

logger = logging.getLogger(__name__)

Handler = Callable[[Any, dict[str, Any]], Awaitable[None]]


class TokenBucket:
    """Allows `rate` messages a second on average and bursts of up to `burst`."""

    # Slots: one per socket, and an idle socket's memory is counted (docs/PERFORMANCE.md).
    __slots__ = ("burst", "clock", "rate", "stamp", "tokens")

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.clock = clock
        self.stamp = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class FloodGuard:
    """What to do with each message of a client: `ok`, `warn` (the first one dropped in a
    flood: tell the client once), `drop` (silently) or `close` (the flood went on).

    A flood lasts from its first dropped message until `quiet` seconds pass without one;
    the messages the bucket lets through meanwhile do not end it, so a client sending
    without pause is warned once and closed after `limit` drops, whatever its rate.
    """

    __slots__ = ("bucket", "clock", "dropped", "last_drop", "limit", "quiet")

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        limit: int,
        quiet: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bucket = TokenBucket(rate, burst, clock)
        self.limit = limit
        self.quiet = quiet
        self.clock = clock
        self.dropped = 0
        self.last_drop = float("-inf")

    def admit(self) -> str:
        if self.bucket.take():
            return "ok"
        now = self.clock()
        if now - self.last_drop > self.quiet:
            self.dropped = 0  # a new flood
        self.last_drop = now
        self.dropped += 1
        if self.dropped >= self.limit:
            return "close"
        return "warn" if self.dropped == 1 else "drop"


# Close code for a socket that keeps flooding after being told to slow down.
CLOSE_FLOODING = 4429


class Cooldown:
    """Clients (a user, or a visitor's address) whose socket this process closed for flooding,
    and until when their new sockets are refused at the handshake. Closing alone let a script
    reconnect and flood again at once, each reconnection costing the server a handshake, a
    snapshot and presence writes. Per process: a flooder meets each process once a period."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.until: dict[str, float] = {}

    def start(self, key: str, seconds: float) -> None:
        now = self.clock()
        if len(self.until) > 10_000:  # a bound on memory: forget the ones that ended
            self.until = {k: t for k, t in self.until.items() if t > now}
        self.until[key] = now + seconds

    def active(self, key: str) -> bool:
        until = self.until.get(key)
        if until is None:
            return False
        if until <= self.clock():
            del self.until[key]
            return False
        return True


COOLDOWN = Cooldown()
# Close code for a socket whose session ended: its user logged out, or changed password.
CLOSE_SIGNED_OUT = 4401


# Close code for a socket over the user's limit of open sockets.
CLOSE_TOO_MANY_SOCKETS = 4408


# Close code for a socket that could not open because the database is unreachable: "try again
# later" (the standard 1013 is not one a server may send: applications use 4000-4999).
class Turn:
    """Messages take turns: one is handled at a time, the others wait in order. asyncio.Lock
    would do, but keeps the queue it makes at its first wait for good, 0.5 KB on every idle
    socket that ever had two messages at once; this one drops it once empty."""

    __slots__ = ("_held", "_waiting")

    def __init__(self) -> None:
        self._held = False
        self._waiting: list[asyncio.Future[None]] | None = None

    async def __aenter__(self) -> None:
        if not self._held:
            self._held = True
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiting is None:
            self._waiting = []
        self._waiting.append(turn)
        try:
            await turn  # handed over by the one before (still held)
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._pass()  # handed over, but not taken: to the next
            elif self._waiting is not None and turn in self._waiting:
                self._waiting.remove(turn)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._pass()

    def _pass(self) -> None:
        while self._waiting:
            turn = self._waiting.pop(0)
            if not turn.done():
                turn.set_result(None)
                return
        self._waiting = None
        self._held = False


CLOSE_TRY_AGAIN = 4503


def account_group(user_id: int) -> str:
    """The group of every socket a signed-in user has open (any session, any page)."""
    return f"account.{user_id}"


class JsonConsumer(AsyncJsonWebsocketConsumer):
    """Decodes JSON frames into the app's typed messages and dispatches on their type."""

    # The union of the Message classes this socket accepts (the app's protocol module).
    messages: ClassVar[Any] = None
    # message type -> name of the coroutine method that handles it
    handlers: ClassVar[dict[str, str]] = {}
    _reader: ClassVar[Any]
    _accepted: ClassVar[str]
    # The tasks joining a group again after a failed join: made only when needed.
    _joining: set[asyncio.Task[None]] | None
    _closing: bool
    _layer_receive: Callable[[], Awaitable[Any]] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.messages is not None:
            cls._reader = decoder(cls.messages)
            cls._accepted = ", ".join(sorted(cls.handlers))
            kinds = {tag_of(kind) for kind in typing.get_args(cls.messages) or (cls.messages,)}
            if kinds != set(cls.handlers):
                raise TypeError(f"{cls.__name__}: handlers {set(cls.handlers)} != {kinds}")

    # None: settings.WEBSOCKET_MAX_MESSAGE_BYTES
    max_message_bytes: ClassVar[int | None] = None
    rate_per_second: ClassVar[float] = 20.0
    rate_burst: ClassVar[float] = 40.0
    # What a `sync` costs the client's rate, in messages: its answer is a snapshot or up to a
    # few dozen replayed events.
    sync_cost: ClassVar[float] = 10.0
    # Messages dropped in one flood before the socket is closed, and the calm that ends one.
    flood_limit: ClassVar[int] = 100
    flood_quiet_seconds: ClassVar[float] = 2.0

    async def _receive_patiently(self) -> Any:
        """The channel layer's receive, waiting out an outage instead of ending the consumer
        (a socket opened while Redis was down crashed with it)."""
        assert self._layer_receive is not None, "set as the consumer starts"
        delay = 0.2
        while True:
            try:
                return await self._layer_receive()
            except LAYER_DOWN as error:
                metrics.REDIS_ERRORS.labels("receive").inc()
                logger.warning(
                    "%s: channel layer unreachable (%s); waiting", type(self).__name__, error
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, LAYER_RETRY_SECONDS)

    async def join(self, group: str) -> None:
        """Join a channel-layer group. While the layer is unreachable the socket still works
        (game sockets are caught up from the database) and joins once it is back."""
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except LAYER_DOWN as error:
            metrics.REDIS_ERRORS.labels("group_add").inc()
            logger.warning("%s: cannot join %s yet (%s)", type(self).__name__, group, error)
            task = asyncio.create_task(self._join_later(group))
            if self._joining is None:
                self._joining = set()
            self._joining.add(task)
            task.add_done_callback(self._joining.discard)

    async def _join_later(self, group: str) -> None:
        delay = 0.2
        while not self._closing:
            await asyncio.sleep(delay)
            try:
                await self.channel_layer.group_add(group, self.channel_name)
                return
            except LAYER_DOWN:
                delay = min(delay * 2, LAYER_RETRY_SECONDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # What Channels sets as the consumer starts, some of it after an await, set here first.
        # CPython keeps one table of attribute names for all the instances of a class while
        # each adds its attributes in the same order, none after the next instance was made;
        # in a storm of connects, an instance that added one after others were made got a
        # dictionary of its own (0.8-1.2 KB a socket, tracemalloc). Subclasses set theirs in
        # their __init__ for the same reason.
        self.scope: dict[str, Any] = {}
        self.channel_layer: Any = None
        self.channel_name = ""
        self._layer_receive = None
        self.base_send: Any = None
        self._joining = None
        self._flood = FloodGuard(
            self.rate_per_second,
            self.rate_burst,
            limit=self.flood_limit,
            quiet=self.flood_quiet_seconds,
        )
        self._cleaned_up = False
        self._closing = False
        self._account: str | None = None  # the account group this socket joined
        self._session_key: str | None = None
        # Whether a message is in hand: a restart closes the socket only between messages.
        self._busy = False
        self._restart_pending = False
        self._restarting = False
        self._log_context: logs.LogContext | None = None
        # One message at a time, whichever side it comes from (see _serve).
        self._turn = Turn()
        self._layer_failure: Exception | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # The socket's id, user and game, for the lines logged while it handles a message.
        self._log_context = logs.for_socket(scope)
        reader = language.for_scope(scope)
        if reader != translation.get_language():
            # What the socket says (refusals, notices) is in its reader's language: the
            # account's, the switcher's cookie or the browser's (realtime/language.py). Set
            # once for the socket's task (the tasks and threads it starts inherit it), not
            # per message: each activation copies the language's storage for the task, a
            # kilobyte a socket when done per message.
            translation.activate(reader)
        sockets = metrics.SOCKETS.labels(type(self).__name__.removesuffix("Consumer").lower())
        sockets.inc()
        try:
            await self._serve(scope, receive, send)
        finally:
            sockets.dec()
            # Whatever ended the consumer (a crash in connect, a cancelled task, a bug), the
            # rows and groups it holds must go: presence must never outlive the socket.
            if not self._cleaned_up:
                await asyncio.shield(self._clean_up(1011))

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        """What Channels' AsyncConsumer.__call__ does, in a lighter loop: the client's
        messages are awaited in this task and the channel layer's in one task for the
        socket's life, taking turns (one message at a time, as in Channels). Channels waits
        on both with `asyncio.wait` and a new task for every message, and keeps the last
        finished one and its message: about 1.5 KB an idle socket (docs/PERFORMANCE.md)."""
        self.scope = scope
        self.base_send = send
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        layer: asyncio.Task[None] | None = None
        if self.channel_layer is not None:
            self.channel_name = await self.channel_layer.new_channel()
            self._layer_receive = functools.partial(self.channel_layer.receive, self.channel_name)
            layer = asyncio.create_task(self._serve_layer(asyncio.current_task()))
        try:
            while True:
                message = await receive()
                async with self._turn:
                    await self.dispatch(message)
                del message  # not kept while the socket idles
        except StopConsumer:
            pass
        except asyncio.CancelledError:
            failure = self._layer_failure
            if failure is None:
                raise
            # Cancelled by the layer's task, which failed: end as Channels would, with that.
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            raise failure from None
        finally:
            if layer is not None:
                # Cancelling the layer's receive is what unsubscribes the socket's channel.
                # Shielded: when Daphne gives up waiting for the socket's end and cancels it
                # (thousands closing at once queue their unsubscribes on Redis), that second
                # cancel would cut the unsubscribe short and leave the channel subscribed.
                layer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(layer)

    async def _serve_layer(self, consumer: asyncio.Task[Any] | None) -> None:
        try:
            while True:
                message = await self._receive_patiently()
                async with self._turn:
                    await self.dispatch(message)
                del message
        except Exception as error:
            self._layer_failure = error
            if consumer is not None:
                consumer.cancel()

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Bound around each message, not the consumer's whole task: the tasks Channels and the
        # channel layer start for the process must not carry this socket's context. Tasks,
        # timers and database threads started while the message is handled do.
        token = logs.bind(self._log_context)
        try:
            await self._dispatch(message)
        finally:
            logs.unbind(token)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        # Channels hops to the sync thread before EVERY message to close stale database
        # connections, which made each broadcast cost a thread round trip. Our consumers
        # never touch the database themselves: realtime.db.db_call does that cleanup in the
        # thread that runs the query.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        self._busy = True
        try:
            if message["type"].startswith("websocket."):
                await handler(message)
                return
            try:
                await handler(message)
            except Exception:
                # A broadcast this socket could not handle must not end the socket (and with
                # it the cleanup of its presence): log it, and go on with the next message.
                logger.exception("%s failed on %s", type(self).__name__, message["type"])
        finally:
            self._busy = False
            if self._restart_pending:
                await self._close_for_restart_now()

    def client_key(self) -> str | None:
        """Who this socket is for the flood cool-down: the user, or a visitor's address."""
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return f"address:{self.address}" if self.address else None

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        if drain.is_draining():
            # Reached a process that is stopping (the handshake was already under way): the
            # client reconnects at once, to another process.
            self._cleaned_up = True
            await self.accept()
            await self.close(code=drain.CLOSE_RESTARTING)
            return
        if self.scope.get("database_unreachable"):
            # The sign-in could not be looked up (realtime/auth.py): come back in a moment.
            self._cleaned_up = True
            await self.accept()
            await self.send_error("unavailable", _(UNAVAILABLE))
            await self.close(code=CLOSE_TRY_AGAIN)
            return
        key = self.client_key()
        if key is not None and COOLDOWN.active(key):
            # Refused at the handshake (HTTP 403), before any database or channel work.
            self._cleaned_up = True
            await self.close()
            return
        drain.track(self)
        # Join the account's group before anything else: a logout that comes while the
        # consumer connects still reaches it.
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            session = self.scope.get("session")
            self._session_key = getattr(session, "session_key", None)
            self._account = account_group(user.pk)
            await self.join(self._account)
        try:
            await super().websocket_connect(message)
        except Exception as error:
            if not is_outage(error):
                raise
            # The database went away while the socket opened: say so, and let the client
            # come back (it crashed the consumer: a 1011 close and an error in the log).
            metrics.DATABASE_ERRORS.labels("socket").inc()
            logger.warning(
                "%s: database unreachable while opening (%s)", type(self).__name__, error
            )
            await self.send_error("unavailable", _(UNAVAILABLE))
            await self.close(code=CLOSE_TRY_AGAIN)

    @property
    def address(self) -> str:
        """The client's address (Daphne puts the proxy's X-Forwarded-For here when started
        with --proxy-headers); empty when the server does not know it."""
        client = self.scope.get("client")
        return str(client[0])[:64] if client else ""

    async def refused_as_one_too_many(self, model: type[Any], **fields: Any) -> bool:
        """Admit this (accepted) socket under its user's and its address's limits of open
        sockets, recording it in `model` (its presence table) in the same step; if over,
        the client is told why and the socket closed, and nothing is recorded."""
        user = self.scope.get("user")
        user_id = user.pk if user is not None and user.is_authenticated else None
        per_user, per_address = settings.MAX_SOCKETS_PER_USER, settings.MAX_SOCKETS_PER_ADDRESS
        refused = await presence.admit_socket(
            presence.Admission(
                model, self.channel_name, user_id, self.address, per_user, per_address, fields
            )
        )
        if refused is None:
            return False
        if refused == "user":
            message = _(
                "You have %(count)s connections open already (tabs, devices): close one and reload."
            ) % {"count": per_user}
        else:
            message = _(
                "Your network address has %(count)s connections open already: close one and reload."
            ) % {"count": per_address}
        await self.send_error("too_many_sockets", message)
        await self.close(code=CLOSE_TOO_MANY_SOCKETS)
        return True

    def charge(self, messages: float) -> None:
        """Count an expensive answer against the client's rate as that many more messages
        (a snapshot or a replay costs the server far more than the request did)."""
        self._flood.bucket.tokens -= messages

    async def account_ended(self, message: dict[str, Any]) -> None:
        """The user logged out (of this session, or of every one but `keep` by changing
        password, or of every one by closing the account)."""
        if message.get("session") in (None, self._session_key) and (
            message.get("keep") is None or message.get("keep") != self._session_key
        ):
            await self.close(code=CLOSE_SIGNED_OUT)

    async def token_revoked(self, message: dict[str, Any]) -> None:
        """Some of the user's API tokens ended (accounts.tokens.TOKEN_REVOKED, on the account's
        group for the Bot API's streams): a socket is signed in by its session, not by a
        token, and goes on. Without this handler the message ended every socket of the user."""

    async def account_notice(self, message: dict[str, Any]) -> None:
        """A moderator acted on the account: every socket of the user, on any page, passes
        the `account_notice` frame on (encoded once by the sender)."""
        await self.send(text_data=message["text"])

    async def announce_restart(self, within_ms: int) -> None:
        """This process is stopping: the client is asked to move to another one (it opens
        its new socket, then closes this one); this socket works on meanwhile."""
        await self.send_json(Restarting(within_ms=within_ms))

    async def close_for_restart(self) -> None:
        """This process is stopping: once the message in hand is done (a move being played is
        answered first), close with 1012 so that the client reconnects elsewhere. Frames it
        sent before it saw the close are still handled (realtime/drain.py)."""
        if self._busy:
            self._restart_pending = True  # closed as soon as the message in hand is done
            return
        await self._close_for_restart_now()

    async def _close_for_restart_now(self) -> None:
        self._restart_pending = False
        if self._closing:
            return
        self._restarting = True
        await self.close(code=drain.CLOSE_RESTARTING)

    @property
    def handed_over(self) -> bool:
        """Closed while this process drains (closed for the restart, or by a page that moved
        to another process): its presence is handed over with the process's other rows
        (realtime/presence.py), not ended one by one. The page is back elsewhere, or will
        count as gone when a live process reaps the row."""
        return self._restarting or drain.is_draining()

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        await self._clean_up(message.get("code", 1006))
        raise StopConsumer()

    async def _clean_up(self, code: int) -> None:
        """Run `disconnect` once, however the consumer ends."""
        if self._cleaned_up:
            return
        self._cleaned_up = True
        self._closing = True
        try:
            await self.disconnect(code)
        except Exception:
            logger.exception("%s could not clean up after its socket", type(self).__name__)
        if self._account is not None:
            try:
                await self.channel_layer.group_discard(self._account, self.channel_name)
            except Exception:
                logger.exception("%s could not leave its account group", type(self).__name__)
        drain.untrack(self)

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        if self._closing:
            return
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Exception:
            # The client closed the socket between our decision to send and the send itself
            # (Daphne: "Attempt to send on a closed protocol"). Nothing is lost: a client that
            # comes back resyncs by version. The disconnect message follows and cleans up.
            self._closing = True
            logger.debug("%s: send on a closing socket dropped", type(self).__name__)

    async def send_json(self, content: Any, close: bool = False) -> None:
        # Channels' own send_json calls the base class's send, past the guard above.
        await self.send(text_data=await self.encode_json(content), close=close)

    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None:
        try:
            await super().close(code=code, reason=reason)
        finally:
            self._closing = True

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return encode(content)

    async def send_error(self, code: str, message: str, **extra: Any) -> None:
        await self.send_json({"type": "error", "code": code, "message": message, **extra})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self._closing and not self._restarting:
            # Frames still in flight after we closed: acting on them would, among other
            # things, restart a flooder's cool-down after it had run out. (Closed for a
            # restart, they are played: a move sent before the client saw the close is not
            # lost, and its page learns of it when it resyncs on another process.)
            return
        verdict = self._flood.admit()
        if verdict != "ok":
            if verdict == "close":
                key = self.client_key()
                if key is not None:
                    COOLDOWN.start(key, settings.FLOOD_COOLDOWN_SECONDS)
                await self.close(code=CLOSE_FLOODING)
            elif verdict == "warn":
                await self.send_error("rate_limited", _("Too many messages: slow down."))
            return
        if text_data is None:
            await self.send_error("bad_frame", _("Send JSON text frames, not binary ones."))
            return
        limit = self.max_message_bytes or settings.WEBSOCKET_MAX_MESSAGE_BYTES
        if len(text_data.encode("utf-8", errors="replace")) > limit:
            await self.send_error(
                "too_large", _("Messages are limited to %(limit)s bytes.") % {"limit": limit}
            )
            return
        try:
            message = decode(text_data, self._reader, self._accepted)
        except ServiceError as error:
            await self.send_error(error.code, error.message, **error.extra)
            return
        await self.handle(message)

    async def handle(self, message: Message) -> None:
        """Run the handler of a decoded message; refusals and bugs become error frames."""
        echo = {} if message.id is None else {"id": message.id}
        method_name = self.handlers[tag_of(type(message))]
        try:
            await getattr(self, method_name)(message)
        except ServiceError as error:
            # Answers carry the request's id so clients can match them to what they sent.
            await self.send_error(error.code, error.message, **{**echo, **error.extra})
        except Exception as error:
            if is_outage(error):
                metrics.DATABASE_ERRORS.labels("socket").inc()
                logger.warning(
                    "websocket handler %s: database unreachable (%s)", method_name, error
                )
                await self.send_error("unavailable", _(UNAVAILABLE), **echo)
                return
            # The traceback stays in the server log; the client gets a plain message and the
            # socket stays usable.
            logger.exception("websocket handler %s failed", method_name)
            await self.send_error("server_error", _("Something went wrong on the server."), **echo)
