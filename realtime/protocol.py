"""The one edge where client messages become typed values (msgspec).

Each app lists its messages as tagged `Struct`s (games/protocol.py, lobby/protocol.py); the
sockets and the HTTP views decode through `decode` here, so a message is validated the same
way whichever door it came in by, and a refusal is always a ServiceError with the protocol's
code. msgspec was chosen by measurement: decoding and validating the move message takes
0.26 µs against 1.66 µs for pydantic and 3.3 µs for json.loads plus hand-written checks
(the tooling's protocol_bench prints the figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import msgspec
from django.utils.translation import gettext as _

from realtime.errors import ServiceError

MAX_ID_LENGTH = 64

# A request's id: echoed in the answer so clients can match it to what they sent.
RequestId = int | Annotated[str, msgspec.Meta(max_length=MAX_ID_LENGTH)] | None


class Message(msgspec.Struct, tag_field="type", kw_only=True, frozen=True):
    """A message from a client; its class name's tag is the `type` field."""

    id: RequestId = None


class Body(msgspec.Struct, kw_only=True, frozen=True):
    """An HTTP request body (no `type`: the URL says what it is)."""


class Frame(msgspec.Struct, tag_field="type", kw_only=True, forbid_unknown_fields=True):
    """A frame the server sends; `type` is its tag. Each app defines its own frames on this
    base; the ones every socket sends are here, once."""


class Pong(Frame, tag="pong", kw_only=True):
    id: RequestId = None


class Restarting(Frame, tag="restarting", kw_only=True):
    """This server process is stopping (a deploy): open a new socket, to any process, within
    `within_ms`, resuming from what you have seen, then close this one (docs/PROTOCOL.md)."""

    within_ms: int


class AccountNotice(Frame, tag="account_notice", kw_only=True):
    """A moderator acted on this user's account (docs/MODERATION.md): sent on every socket
    the user has open, whatever the page. `action` names what was done; `text` is what the
    user is told; `chat_muted_until` (ISO 8601) is set while their chat is muted."""

    action: str
    text: str
    chat_muted_until: str | None = None


class Error(Frame, tag="error", kw_only=True):
    code: str
    message: str
    id: RequestId = None


class _IdOnly(msgspec.Struct):
    id: RequestId = None


T = TypeVar("T")

_encoder = msgspec.json.Encoder()


def encode(frame: Any) -> str:
    """A frame as JSON text. Events are encoded once, stored as this text and sent on every
    socket as it is."""
    return _encoder.encode(frame).decode()


def decoder(kinds: Any) -> msgspec.json.Decoder[Any]:
    """A decoder for a message type, or a union of tagged message types."""
    return msgspec.json.Decoder(kinds)


def _humane(error: str) -> str:
    """msgspec's wording, with the field named the way the protocol document names it (the
    parts said here in the reader's language; the field's path, and msgspec's other
    wordings, as they are)."""
    error = re.sub(
        r"Expected `str` of length <= (\d+)",
        lambda found: _("Text of at most %(most)s characters") % {"most": found[1]},
        error,
    )
    error = re.sub(r"Expected `str` of length >= 1", lambda _found: _("Non-empty text"), error)
    error = re.sub(
        r"Expected `(array|object)` of length <= (\d+)",
        lambda found: _("At most %(most)s items") % {"most": found[2]},
        error,
    )
    return error.replace("Object missing required field", _("Missing the field"))


def decode(data: str | bytes, reader: msgspec.json.Decoder[T], accepted: str = "") -> T:
    """Decode and validate `data`; ServiceError(bad_json | bad_message | unknown_type)."""
    try:
        message = reader.decode(data)
    except RecursionError:
        raise ServiceError("bad_json", _("That message is nested too deeply.")) from None
    except msgspec.ValidationError as error:  # before DecodeError: it is one
        text = str(error)
        unknown = re.match(r"Invalid value '(.{0,40}).*' - at `\$\.type`$", text)
        if unknown and accepted:
            raise ServiceError(
                "unknown_type",
                _("Unknown message type %(type)s; this socket accepts: %(accepted)s.")
                % {"type": repr(unknown.group(1)), "accepted": accepted},
                **_echo(data),
            ) from None
        raise ServiceError("bad_message", _humane(text), **_echo(data)) from None
    except msgspec.DecodeError:
        raise ServiceError("bad_json", _("That message is not valid JSON.")) from None
    # A NUL can only arrive escaped; PostgreSQL refuses it in text, so it never gets that far.
    escaped_nul = b"\\u0000" if isinstance(data, bytes) else "\\u0000"
    if escaped_nul in data and _has_nul(message):  # type: ignore[operator]
        raise ServiceError(
            "bad_message", _("Text in a message may not contain the NUL character."), **_echo(data)
        )
    return message


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, msgspec.Struct):
        return any(_has_nul(getattr(value, field)) for field in value.__struct_fields__)
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_has_nul(item) for item in value)
    return False


def _echo(data: str | bytes) -> dict[str, Any]:
    """The request's id, if one can be read from a message that failed validation."""
    try:
        request_id = msgspec.json.decode(data, type=_IdOnly).id
    except (msgspec.MsgspecError, RecursionError):
        return {}
    return {} if request_id is None else {"id": request_id}


def tag_of(kind: type[msgspec.Struct]) -> str:
    """The `type` a message class is sent with."""
    return str(kind.__struct_config__.tag)


@dataclass(frozen=True)
class SocketKind:
    """One kind of socket, as an app declares it (its protocol module registers it): where it
    is served, what clients send on it and what the server sends. The protocol's document
    checks (lobby/protocol_doc.py) and the published schema read these, so an app added above
    the others brings its socket's description with it."""

    name: str  # as docs/PROTOCOL.md's frame table names it: "game", "lobby", ...
    prefix: str  # its path: "/ws/games/"
    client: Any  # the union of messages clients may send
    frames: Any  # the union of frames the server sends


SOCKETS: dict[str, SocketKind] = {}
# HTTP bodies of the published schema: "POST /api/..." -> the Body type.
HTTP_BODIES: dict[str, Any] = {}


def register_socket(kind: SocketKind) -> None:
    SOCKETS[kind.name] = kind


def register_bodies(bodies: dict[str, Any]) -> None:
    HTTP_BODIES.update(bodies)


# Streamed HTTP answers (newline-delimited JSON) of the published schema: "GET /api/..." -> the
# union of the frames a line may hold.
HTTP_STREAMS: dict[str, Any] = {}


def register_streams(streams: dict[str, Any]) -> None:
    HTTP_STREAMS.update(streams)


# JSON answers of the Bot API's description (botapi/openapi.py): "GET /api/..." -> the type of
# the answer's body (an endpoint not named here is described as answering an object).
HTTP_ANSWERS: dict[str, Any] = {}


def register_answers(answers: dict[str, Any]) -> None:
    HTTP_ANSWERS.update(answers)


def schema(kinds: Any) -> dict[str, Any]:
    """The JSON Schema of a message type or union (published in docs/protocol.schema.json)."""
    return dict(msgspec.json.schema(kinds))
