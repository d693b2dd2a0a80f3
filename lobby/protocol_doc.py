"""What docs/PROTOCOL.md says the server may send, read from the document itself.

Its tables "Every frame the server sends" (socket, type) and "Error codes" are read once;
`check_text` says whether a frame is one of them and matches its typed model. The tests
check every frame they receive with it, and so does the fault-injection suite
(`python -m devtools chaos`): a frame the document does not describe is a failure.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from realtime.protocol import SOCKETS, SocketKind

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md"
# Only these may come inside a lobby `batch`.
BATCHED = frozenset({"seek_added", "seek_removed", "game_started", "game_ended"})


class UndocumentedFrame(AssertionError):
    pass


@dataclass(frozen=True)
class Protocol:
    frames: frozenset[tuple[str, str]]  # (socket, type)
    codes: frozenset[str]


def _table(text: str, heading: str) -> list[list[str]]:
    """The rows of the first table under `heading`, cells stripped of backticks."""
    section = f"\n{text}".split(f"\n## {heading}\n", 1)
    if len(section) < 2:
        raise AssertionError(f"docs/PROTOCOL.md has no section '## {heading}'")
    rows = []
    for line in section[1].split("\n## ", 1)[0].splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows[1:]  # without the header


def parse(text: str) -> Protocol:
    frames = frozenset((row[0], row[1]) for row in _table(text, "Every frame the server sends"))
    codes = frozenset(row[0] for row in _table(text, "Error codes"))
    return Protocol(frames=frames, codes=codes)


@cache
def documented() -> Protocol:
    return parse(DOCUMENT.read_text())


def sockets() -> dict[str, SocketKind]:
    """Every kind of socket the installed apps declare (each app's protocol module registers
    its own: realtime.protocol.register_socket)."""
    _import_protocols()
    return SOCKETS


@cache
def _import_protocols() -> None:
    # Once: a client checking every frame it receives (the cluster drill's thousand) asks for
    # each frame, and looking the modules up again cost it most of a core.
    from django.apps import apps

    for config in apps.get_app_configs():
        if importlib.util.find_spec(f"{config.name}.protocol") is not None:
            importlib.import_module(f"{config.name}.protocol")


def socket_of(path: str) -> str:
    for kind in sockets().values():
        if path.startswith(kind.prefix):
            return kind.name
    raise UndocumentedFrame(f"a socket at {path!r}, which docs/PROTOCOL.md does not describe")


def check(
    socket: str,
    frame: Any,
    protocol: Protocol | None = None,
    seen: set[tuple[str, str]] | None = None,
) -> None:
    """Raise UndocumentedFrame unless `frame` is one the document lets `socket` send
    (recording its (socket, type) in `seen`)."""
    protocol = protocol or documented()
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise UndocumentedFrame(f"the {socket} socket sent a frame without a type: {frame!r}")
    kind = frame["type"]
    if seen is not None:
        seen.add((socket, kind))
    if (socket, kind) not in protocol.frames:
        raise UndocumentedFrame(
            f"the {socket} socket sent a {kind!r} frame, which docs/PROTOCOL.md does not list: "
            f"{json.dumps(frame)[:300]}"
        )
    if kind == "error" and frame.get("code") not in protocol.codes:
        raise UndocumentedFrame(f"undocumented error code {frame.get('code')!r}: {frame!r}")
    if kind == "batch":
        for event in frame.get("events", []):
            if not isinstance(event, dict) or event.get("type") not in BATCHED:
                raise UndocumentedFrame(f"a batch holds {event!r}, not a public feed event")
            check(socket, event, protocol, seen)


@cache
def frame_decoder(socket: str) -> msgspec.json.Decoder[Any]:
    """The typed models of what this socket sends (its app's protocol module)."""
    return msgspec.json.Decoder(sockets()[socket].frames)


def check_text(path: str, text: str | bytes, seen: set[tuple[str, str]] | None = None) -> None:
    """Raise UndocumentedFrame unless the text is a documented frame of the socket at path."""
    try:
        frame = json.loads(text)
    except ValueError:
        raise UndocumentedFrame(f"a frame that is not JSON: {text[:200]!r}") from None
    socket = socket_of(path)
    check(socket, frame, seen=seen)
    try:
        frame_decoder(socket).decode(text)
    except msgspec.ValidationError as error:
        raise UndocumentedFrame(
            f"the {socket} socket sent a {frame.get('type')!r} frame that does not match its "
            f"model ({error}): {str(text)[:300]}"
        ) from None
