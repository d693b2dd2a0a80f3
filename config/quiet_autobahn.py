"""autobahn's debug-log arguments, built only when its debug log is on.

autobahn (Daphne's websocket layer) evaluates the arguments of its debug log calls whether or
not debug logging is on: colouring a type name and two values for every frame sent, and
pretty-printing its whole configuration for every connection. A profile of a server process
put the pretty-printing at 0.6 ms of CPU per websocket connection, about 0.7 s for a storm of
1,200 sockets. With debug logging off, the helpers return an empty string instead.
"""

from __future__ import annotations

from typing import Any

import txaio


def _nothing(*args: Any, **kwargs: Any) -> str:
    return ""


def install() -> None:
    """Stop building autobahn's debug-log arguments, unless its debug log is on."""
    from autobahn.twisted import websocket as twisted_websocket  # selects txaio's Twisted
    from autobahn.websocket import protocol

    # txaio's framework functions are bound when a framework is chosen: no static type.
    level = getattr(txaio, "get_global_log_level")()  # noqa: B009
    if level in ("debug", "trace"):
        return
    for module in (protocol, twisted_websocket):
        module.hltype = _nothing  # type: ignore[attr-defined]
        module.hlval = _nothing  # type: ignore[attr-defined]
    protocol.pformat = _nothing
