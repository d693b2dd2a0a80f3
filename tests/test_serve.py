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
    assert arguments.websocket_max_message_size == 1 << 20
    assert (arguments.ping_interval, arguments.ping_timeout) == (20, 30)
    assert arguments.application == "config.asgi:application"


def test_an_ipv6_address_is_escaped_for_twisted() -> None:
    assert parsed("::1", 80).socket_strings == [r"tcp:port=80:interface=\:\:1:backlog=1024"]


def test_a_server_process_collects_garbage_seldom_and_serves_the_chosen_application(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from config import eager_writes, quick_content_type, quiet_autobahn

    started: dict[str, object] = {}

    def run(self: CommandLineInterface, args: list[str]) -> None:
        started["application"] = args[-1]
        started["thresholds"] = gc.get_threshold()

    monkeypatch.setattr(CommandLineInterface, "run", run)
    monkeypatch.setattr(eager_writes, "install", lambda: None)
    monkeypatch.setattr(quiet_autobahn, "install", lambda: None)
    monkeypatch.setattr(quick_content_type, "install", lambda: None)
    monkeypatch.setattr(serve, "no_twisted_access_lines", lambda: None)
    before = gc.get_threshold()
    try:
        serve.main(["--port", "8123"])
        assert started == {"application": serve.APPLICATION, "thresholds": (50_000, 20, 10)}
        serve.main(["--application", "devtools.bare_asgi:application"])
        assert started["application"] == "devtools.bare_asgi:application"
    finally:
        gc.set_threshold(*before)


# A Diffusion Chess game played by clicking in the browser tests: after its 14th move, Black's
# stones reach so many cells that the move event (the position and, for each stone, a shortest
# path to every cell it reaches) is 79 KB.
LONG_REACH = [
    "c6-c7-b7-a7",
    "i1-h1-h2-h3-h4-i4-j4-k4",
    "p5-p4-p3",
    "i2-h2-h3-h4-g4-f4-e4-d4-c4",
    "n19-m19-m18",
    "i19-h19-h18-h17-h16-i16-j16-k16-l16",
    "c14-b14-a14",
    "q14-r14-s14-s13",
    "j17-j16-k16",
    "m6-n6-o6",
    "g5-f5-f6-e6",
    "j3-j4-i4-h4-g4-g5-f5-f6",
    "q6-r6-s6",
    "c5-c6-c7",
]


def test_the_server_may_send_a_move_event_far_bigger_than_any_seen_in_diffusion_chess() -> None:
    import json

    from config import serve
    from games.engine import rules_for

    rules = rules_for("diffusion-chess", {})
    state = rules.initial_state()
    for move in LONG_REACH:
        state = rules.play(state, move)
    event = {"state": rules.to_json(state), "legal_moves": rules.client_moves(state)}
    size = len(json.dumps(event, separators=(",", ":")))
    assert size > 65_536  # what the old limit dropped unsent
    # Room for positions several times richer than any seen.
    assert 8 * size < serve.WS_MAX_BYTES, size
