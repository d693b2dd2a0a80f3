"""The one way the project starts Daphne (config/serve.py), as Daphne itself reads it."""

from __future__ import annotations

import gc

import pytest
from daphne.cli import CommandLineInterface

from config import serve


def parsed(host: str, port: int) -> object:
    return CommandLineInterface().parser.parse_args(serve.daphne_arguments(host, port))


def test_a_storm_waits_in_a_long_listen_queue_and_has_30_seconds_to_handshake() -> None:
    arguments = parsed("127.0.0.1", 8123)
    assert arguments.socket_strings == ["tcp:port=8123:interface=127.0.0.1:backlog=1024"]
    # Daphne's 5 s default dropped sockets of a 500-connect storm (tests/test_lobby_postgres).
    assert arguments.websocket_connect_timeout == 30
    assert arguments.websocket_max_message_size == 65536
    assert (arguments.ping_interval, arguments.ping_timeout) == (20, 30)
    assert arguments.application == "config.asgi:application"


def test_an_ipv6_address_is_escaped_for_twisted() -> None:
    assert parsed("::1", 80).socket_strings == [r"tcp:port=80:interface=\:\:1:backlog=1024"]


def test_a_server_process_collects_garbage_seldom_and_serves_the_chosen_application(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from config import eager_writes, quiet_autobahn

    started: dict[str, object] = {}

    def run(self: CommandLineInterface, args: list[str]) -> None:
        started["application"] = args[-1]
        started["thresholds"] = gc.get_threshold()

    monkeypatch.setattr(CommandLineInterface, "run", run)
    monkeypatch.setattr(eager_writes, "install", lambda: None)
    monkeypatch.setattr(quiet_autobahn, "install", lambda: None)
    before = gc.get_threshold()
    try:
        serve.main(["--port", "8123"])
        assert started == {"application": serve.APPLICATION, "thresholds": (50_000, 20, 10)}
        serve.main(["--application", "devtools.bare_asgi:application"])
        assert started["application"] == "devtools.bare_asgi:application"
    finally:
        gc.set_threshold(*before)
