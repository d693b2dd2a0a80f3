"""Twisted TCP writes that go out at once when nothing is waiting to be sent.

Twisted buffers every `transport.write` and sends it on the reactor's next turn: on Daphne's
asyncio reactor that means registering the socket for writability (an epoll_ctl), a loop
iteration, the send, and unregistering it (another epoll_ctl) for every websocket frame. A
profile of a server with ten spectators per game put the epoll_ctl calls at 12% of the
event loop's busy time. Sending at once when the buffer is empty (what asyncio's own
transports do) cut the server's CPU per move by 7-28% over four paired runs, most with many
spectators (docs/PERFORMANCE.md). Whatever
the kernel does not take is buffered as before, and once anything is buffered every later
write queues behind it, so bytes never change order.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import tcp

_buffered_write = tcp.Connection.write


def _write(self: Any, data: bytes) -> None:
    if (
        data
        and self.connected
        and not self._writeDisconnected
        and not self._tempDataBuffer
        and self.offset >= len(self.dataBuffer)
    ):
        sent = self.writeSomeData(data)
        if not isinstance(sent, int):  # the connection is lost: the reactor reports it
            _buffered_write(self, data)
            return
        if sent >= len(data):
            return
        data = data[sent:]
    _buffered_write(self, data)


def install() -> None:
    """Make every Twisted TCP connection of this process write eagerly."""
    tcp.Connection.write = _write  # type: ignore[method-assign]
