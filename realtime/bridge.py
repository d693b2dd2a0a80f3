"""The embedded default's channel layer: in-memory, with the other processes' broadcasts
brought to the server at once.

`make run` serves without Redis, on Channels' in-memory layer, but the computer's moves are
played by the bots worker and clocks are ended by the sweeper, each its own process, whose
broadcasts the in-memory layer cannot carry to the server's sockets. Those sockets then
learnt of such a move only from the catch-up (games/catchup.py, every 250 ms): a level-5
answer thought in 140 ms reached the page after a median 504 ms. Here every process that
is not the server forwards what it sends to a group, after the in-memory delivery, as one
datagram on a Unix socket the server listens on; the server hands it to its own layer. The
catch-up stays as the safety net (a datagram lost, or a message too big for one).

The socket's path is derived from the database and the secret key, so each site's processes
find each other and no other site's; a datagram carries an HMAC of the secret key, so only
a process of the site can send one. The server is whichever process `config.serve` started
(`listen_in_this_process`); it binds the socket as it starts (`bind`, from config.asgi) and
reads it from its first socket's `group_add` on. A message a datagram cannot hold (over
`MAX_DATAGRAM` bytes) is left to the catch-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import os
import socket
import tempfile
from typing import Any

import msgspec
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings

logger = logging.getLogger(__name__)

MAX_DATAGRAM = 200_000  # under Linux's default socket buffer for a Unix datagram
_DIGEST = hashlib.sha256().digest_size

_server_process = False


def listen_in_this_process() -> None:
    """Mark this process as the site's server: its layer listens for the others' sends."""
    global _server_process
    _server_process = True


def _key() -> bytes:
    return hashlib.sha256(b"channel-bridge:" + settings.SECRET_KEY.encode()).digest()


def socket_path() -> str:
    """Where this site's server listens: one path per database and secret key."""
    name = str(settings.DATABASES["default"].get("NAME", ""))
    site = hashlib.sha256(f"{name}\0{settings.SECRET_KEY}".encode()).hexdigest()[:20]
    return os.path.join(tempfile.gettempdir(), f"diffusion-layer-{site}.sock")


def seal(group: str, message: dict[str, Any]) -> bytes:
    payload = msgspec.msgpack.encode((group, message))
    return hmac.new(_key(), payload, hashlib.sha256).digest() + payload


def unseal(datagram: bytes) -> tuple[str, dict[str, Any]] | None:
    """The group and message of a datagram sealed by this site, or None."""
    mac, payload = datagram[:_DIGEST], datagram[_DIGEST:]
    if not hmac.compare_digest(mac, hmac.new(_key(), payload, hashlib.sha256).digest()):
        return None
    try:
        group, message = msgspec.msgpack.decode(payload)
    except (msgspec.DecodeError, TypeError, ValueError):
        return None
    if not isinstance(group, str) or not isinstance(message, dict):
        return None
    return group, message


class _Receiver(asyncio.DatagramProtocol):
    def __init__(self, layer: BridgedInMemoryChannelLayer) -> None:
        self.layer = layer

    def datagram_received(self, data: bytes, addr: Any) -> None:
        opened = unseal(data)
        if opened is None:
            logger.warning("ignored a datagram on the channel bridge that this site did not seal")
            return
        group, message = opened
        task = asyncio.ensure_future(InMemoryChannelLayer.group_send(self.layer, group, message))
        self.layer.deliveries.add(task)
        task.add_done_callback(self.layer.deliveries.discard)


class BridgedInMemoryChannelLayer(InMemoryChannelLayer):
    """Channels' in-memory layer; in a process other than the server, each group send is
    also forwarded to the server's layer (module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.listening: asyncio.AbstractEventLoop | None = None
        self.sender: socket.socket | None = None
        self.deliveries: set[asyncio.Future[None]] = set()

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        if _bound is not None:
            await self._listen(_bound)

    async def _listen(self, bound: socket.socket) -> None:
        """Read the bound socket on this loop (a server has one loop; once)."""
        loop = asyncio.get_running_loop()
        if self.listening is loop:
            return
        self.listening = loop
        await loop.create_datagram_endpoint(lambda: _Receiver(self), sock=bound)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await super().group_send(group, message)
        if not _server_process:
            self.forward(group, message)

    def forward(self, group: str, message: dict[str, Any]) -> None:
        try:
            datagram = seal(group, message)
        except (TypeError, ValueError):
            logger.warning("a message to %s cannot cross the channel bridge", group)
            return
        if len(datagram) > MAX_DATAGRAM:
            return  # the catch-up brings it
        if self.sender is None:
            self.sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sender.setblocking(False)
        # No server listening (or its queue full): the catch-up brings it.
        with contextlib.suppress(OSError):
            self.sender.sendto(datagram, socket_path())


_bound: socket.socket | None = None


def bind() -> None:
    """In the server process on the bridged layer, take the site's socket now (config.asgi,
    as the server starts): what the others send before the first page subscribes waits in
    the kernel's queue instead of being lost. Elsewhere, nothing."""
    global _bound
    if not _server_process or _bound is not None:
        return
    if isinstance(get_channel_layer(), BridgedInMemoryChannelLayer):
        _bound = bind_at(socket_path())


def bind_at(path: str) -> socket.socket | None:
    """A datagram socket bound at `path` for this user only; None (logged) if it cannot be."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # left by a server of this site that stopped without removing it
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        bound.bind(path)
        os.chmod(path, 0o600)
    except OSError:
        bound.close()
        logger.warning(
            "the channel bridge cannot listen on %s: moves of other processes reach the"
            " sockets by the catch-up only",
            path,
            exc_info=True,
        )
        return None
    bound.setblocking(False)
    return bound
