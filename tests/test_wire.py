"""The websocket server's hot spots: TCP writes go out at once when nothing is buffered (in
order), and autobahn builds no debug-log arguments while its debug log is off."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from twisted.internet import tcp
from twisted.internet.protocol import Protocol

from config import eager_writes


class Reactor:
    """Records what a connection asks of the reactor."""

    def __init__(self) -> None:
        self.writers: list[Any] = []

    def addWriter(self, writer: Any) -> None:  # Twisted spells them so
        if writer not in self.writers:
            self.writers.append(writer)

    def removeWriter(self, writer: Any) -> None:
        if writer in self.writers:
            self.writers.remove(writer)

    def addReader(self, reader: Any) -> None:
        pass

    def removeReader(self, reader: Any) -> None:
        pass


@pytest.fixture
def connection() -> Iterator[tuple[tcp.Connection, socket.socket, Reactor]]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.settimeout(5)
    reactor = Reactor()
    original = tcp.Connection.write
    eager_writes.install()
    conn = tcp.Connection(ours, Protocol(), reactor)
    conn.connected = 1
    try:
        yield conn, theirs, reactor
    finally:
        tcp.Connection.write = original  # type: ignore[method-assign]
        ours.close()
        theirs.close()


def read_exactly(peer: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunks += peer.recv(size - len(chunks))
    return bytes(chunks)


def test_a_write_with_nothing_buffered_is_sent_at_once(connection: Any) -> None:
    conn, peer, reactor = connection
    conn.write(b"a frame")
    # Received without the reactor ever being asked to watch the socket for writing.
    assert peer.recv(100) == b"a frame"
    assert reactor.writers == []


def test_what_the_kernel_does_not_take_is_buffered_and_later_writes_queue_behind_it(
    connection: Any,
) -> None:
    conn, peer, reactor = connection
    big = bytes(range(256)) * 40_000  # far more than a socket buffer holds
    conn.write(big)
    assert reactor.writers == [conn]  # the rest waits for the socket to be writable
    conn.write(b"tail")  # must not overtake the buffered bytes
    received = bytearray()
    while len(received) < len(big) + 4:
        conn.doWrite()
        received += peer.recv(1 << 20)
    assert bytes(received) == big + b"tail"


def test_autobahn_builds_no_debug_log_arguments_while_its_debug_log_is_off() -> None:
    from autobahn.websocket import protocol

    from config import quiet_autobahn

    saved = (protocol.hltype, protocol.hlval, protocol.pformat)
    try:
        assert protocol.pformat({"a": 1}) != ""
        quiet_autobahn.install()
        assert (protocol.hltype(len), protocol.hlval(3), protocol.pformat({"a": 1})) == ("",) * 3
    finally:
        protocol.hltype, protocol.hlval, protocol.pformat = saved
