"""A TCP proxy for server processes' connections that can stall: every connection stays open
and no byte passes either way, as when a database server hangs or the network between drops
every packet without a reset. Nothing fails then; everything waits.

(tests/test_layer_reconnect.py has a proxy of its own for Redis in the test's event loop; this
one runs in threads, for processes the test starts.)
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class StallingProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.stalled = threading.Event()
        self.closed = threading.Event()
        self.sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.connections = 0  # accepted, stalled or not
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    def stall(self) -> None:
        """From now on no byte passes, on the connections open and on new ones (accepted and
        held: the client's connect succeeds, its first read waits)."""
        self.stalled.set()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            self.sockets.append(client)
            if self.stalled.is_set():
                continue  # held open, never answered
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            self.sockets.append(server)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if self.stalled.is_set():
                    break  # what came is never delivered, nor anything after it
                sink.sendall(data)
            if not self.stalled.is_set():
                sink.shutdown(socket.SHUT_WR)  # a clean end passes, while not stalled
                return
        except OSError:
            return
        self.closed.wait()  # stalled: both ends held open until the test is done

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
        for held in self.sockets:
            with suppress(OSError):
                held.close()


@contextmanager
def stalling_proxy(host: str, port: int) -> Iterator[StallingProxy]:
    """A proxy to host:port, for as long as the block runs."""
    proxy = StallingProxy((host, port))
    try:
        yield proxy
    finally:
        proxy.close()
