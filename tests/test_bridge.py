"""The embedded default's layer carries the other processes' broadcasts to the server
(realtime/bridge.py): a group send in another process reaches the server's layer, and a
datagram not sealed with the site's key is dropped."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from realtime import bridge
from realtime.bridge import BridgedInMemoryChannelLayer

# What the bots worker does after a move commits: one group send, in a process of its own.
SENDER = """
import asyncio, os, sys
import django
django.setup()
from realtime import bridge
bridge.socket_path = lambda: sys.argv[1]
layer = bridge.BridgedInMemoryChannelLayer()
asyncio.run(layer.group_send("game-7", {"type": "game.event", "v": 3, "text": "{}", "n": [1.5]}))
"""


@pytest.fixture
def server_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[BridgedInMemoryChannelLayer]:
    """This test process as the site's server: its layer listens at a path of the test's."""
    path = str(tmp_path / "layer.sock")
    bound = bridge.bind_at(path)
    assert bound is not None
    monkeypatch.setattr(bridge, "socket_path", lambda: path)
    monkeypatch.setattr(bridge, "_server_process", True)
    monkeypatch.setattr(bridge, "_bound", bound)
    yield BridgedInMemoryChannelLayer()
    bound.close()


def send_from_another_process(path: str) -> None:
    env = {**os.environ, "DJANGO_SECRET_KEY": settings.SECRET_KEY}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    subprocess.run(
        [sys.executable, "-c", SENDER, path],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
        timeout=60,
    )


async def test_a_group_send_in_another_process_reaches_the_servers_sockets(
    server_layer: BridgedInMemoryChannelLayer,
) -> None:
    channel = await server_layer.new_channel()
    await server_layer.group_add("game-7", channel)
    await asyncio.to_thread(send_from_another_process, bridge.socket_path())
    message = await asyncio.wait_for(server_layer.receive(channel), 10)
    assert message == {"type": "game.event", "v": 3, "text": "{}", "n": [1.5]}


async def test_a_send_made_before_the_first_socket_subscribed_still_arrives(
    server_layer: BridgedInMemoryChannelLayer,
) -> None:
    # The datagram waits in the bound socket's queue until the server reads it.
    await asyncio.to_thread(send_from_another_process, bridge.socket_path())
    channel = await server_layer.new_channel()
    await server_layer.group_add("game-7", channel)
    message = await asyncio.wait_for(server_layer.receive(channel), 10)
    assert message["v"] == 3


async def test_a_datagram_not_sealed_with_the_sites_key_is_dropped(
    server_layer: BridgedInMemoryChannelLayer,
) -> None:
    channel = await server_layer.new_channel()
    await server_layer.group_add("game-7", channel)
    sealed = bridge.seal("game-7", {"type": "game.event", "v": 9})
    forged = bytes(32) + sealed[32:]
    tampered = sealed[:-1] + b"\x00"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        for datagram in (forged, tampered, b"short", sealed):
            sender.sendto(datagram, bridge.socket_path())
    message = await asyncio.wait_for(server_layer.receive(channel), 10)
    assert message == {"type": "game.event", "v": 9}
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(server_layer.receive(channel), 0.3)


def test_the_server_does_not_forward_its_own_sends_and_others_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forwarded: list[str] = []
    layer = BridgedInMemoryChannelLayer()
    monkeypatch.setattr(layer, "forward", lambda group, message: forwarded.append(group))
    monkeypatch.setattr(bridge, "_server_process", True)
    asyncio.run(layer.group_send("lobby", {"type": "x"}))
    monkeypatch.setattr(bridge, "_server_process", False)
    asyncio.run(layer.group_send("game-1", {"type": "x"}))
    assert forwarded == ["game-1"]


def test_each_site_has_its_own_socket_path_and_key(settings: Any) -> None:
    path, sealed = bridge.socket_path(), bridge.seal("g", {})
    settings.SECRET_KEY = "another site's key"
    assert bridge.socket_path() != path
    assert bridge.unseal(sealed) is None
