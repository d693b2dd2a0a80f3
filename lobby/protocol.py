"""Every message a client sends to the lobby, typed (the socket /ws/lobby/ and the HTTP API).
See docs/PROTOCOL.md; docs/protocol.schema.json is generated from these."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from config.protocol import Body, Message

MAX_GAMES_PER_SEEK = 8
MAX_REASON_LENGTH = 100
MAX_COMMAND_LENGTH = 200

Slug = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
# Engine options: names to numbers or words ({"pits": 8, "seeds": 7}); the engine checks them.
Options = Annotated[
    dict[
        Annotated[str, msgspec.Meta(max_length=40)],
        int | Annotated[str, msgspec.Meta(max_length=40)],
    ],
    msgspec.Meta(max_length=20),
]
TimeControl = Annotated[str, msgspec.Meta(max_length=20)]
Side = Literal["first", "second", "random"]


class GameChoice(msgspec.Struct, kw_only=True, frozen=True):
    slug: Slug
    options: Options = {}


Games = Annotated[list[GameChoice], msgspec.Meta(min_length=1, max_length=MAX_GAMES_PER_SEEK)]


class Seek(Message, tag="seek", kw_only=True, frozen=True):
    games: Games | GameChoice  # in order of preference
    time_control: TimeControl = ""


class CancelSeek(Message, tag="cancel_seek", kw_only=True, frozen=True):
    seek_id: int


class Challenge(Message, tag="challenge", kw_only=True, frozen=True):
    user: Annotated[str, msgspec.Meta(max_length=40)] | None = None  # None: an open challenge
    slug: Slug
    options: Options = {}
    side: Side = "random"
    time_control: TimeControl = ""


class Accept(Message, tag="accept", kw_only=True, frozen=True):
    challenge_id: int | None = None
    token: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class Decline(Message, tag="decline", kw_only=True, frozen=True):
    challenge_id: int
    reason: Annotated[str, msgspec.Meta(max_length=MAX_REASON_LENGTH)] = ""


class CancelChallenge(Message, tag="cancel_challenge", kw_only=True, frozen=True):
    challenge_id: int


class Command(Message, tag="command", kw_only=True, frozen=True):
    text: Annotated[str, msgspec.Meta(max_length=MAX_COMMAND_LENGTH)]


class Sync(Message, tag="sync", kw_only=True, frozen=True):
    v: int


class Ping(Message, tag="ping", kw_only=True, frozen=True):
    pass


CLIENT_MESSAGES = (
    Seek | CancelSeek | Challenge | Accept | Decline | CancelChallenge | Command | Sync | Ping
)


# --- HTTP bodies ---------------------------------------------------------------------------


class SeekBody(Body, kw_only=True, frozen=True):
    games: Games | GameChoice
    time_control: TimeControl = ""


class ChallengeBody(Body, kw_only=True, frozen=True):
    user: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    slug: Slug
    options: Options = {}
    side: Side = "random"
    time_control: TimeControl = ""


class DeclineBody(Body, kw_only=True, frozen=True):
    reason: Annotated[str, msgspec.Meta(max_length=MAX_REASON_LENGTH)] = ""


class EmptyBody(Body, kw_only=True, frozen=True):
    pass


class CommandBody(Body, kw_only=True, frozen=True):
    text: Annotated[str, msgspec.Meta(max_length=MAX_COMMAND_LENGTH)]
