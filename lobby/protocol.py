"""Every message a client sends to the lobby, typed (the socket /ws/lobby/ and the HTTP API).
See docs/PROTOCOL.md; docs/protocol.schema.json is generated from these."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from games import protocol as game_protocol
from realtime.protocol import (
    AccountNotice,
    Body,
    Error,
    Frame,
    Message,
    Pong,
    RequestId,
    Restarting,
    SocketKind,
    register_bodies,
    register_socket,
)

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


RatingRange = Annotated[list[int], msgspec.Meta(min_length=2, max_length=2)]
# The computer's level, 1 to 5 (checked by bots.services, which says so in words).
Level = int


class Seek(Message, tag="seek", kw_only=True, frozen=True):
    games: Games | GameChoice  # in order of preference
    time_control: TimeControl = ""
    rated: bool = False
    rating_range: RatingRange | None = None  # [min, max] of the opponent's rating
    computer: Level | None = None  # no partner within 30 s: play the computer at this level
    bots: bool = False  # bot accounts may pair with it too


class PlayComputer(Message, tag="play_computer", kw_only=True, frozen=True):
    slug: Slug
    options: Options = {}
    level: Level
    side: Side = "random"
    time_control: TimeControl = ""


class CancelSeek(Message, tag="cancel_seek", kw_only=True, frozen=True):
    seek_id: int


class Challenge(Message, tag="challenge", kw_only=True, frozen=True):
    user: Annotated[str, msgspec.Meta(max_length=40)] | None = None  # None: an open challenge
    slug: Slug
    options: Options = {}
    side: Side = "random"
    time_control: TimeControl = ""
    rated: bool = False


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
    Seek
    | CancelSeek
    | Challenge
    | Accept
    | Decline
    | CancelChallenge
    | Command
    | PlayComputer
    | Sync
    | Ping
)


# --- HTTP bodies ---------------------------------------------------------------------------


class SeekBody(Body, kw_only=True, frozen=True):
    games: Games | GameChoice
    time_control: TimeControl = ""
    rated: bool = False
    rating_range: RatingRange | None = None
    computer: Level | None = None
    bots: bool = False


class ComputerBody(Body, kw_only=True, frozen=True):
    slug: Slug
    options: Options = {}
    level: Level
    side: Side = "random"
    time_control: TimeControl = ""


class ChallengeBody(Body, kw_only=True, frozen=True):
    user: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    slug: Slug
    options: Options = {}
    side: Side = "random"
    time_control: TimeControl = ""
    rated: bool = False


class DeclineBody(Body, kw_only=True, frozen=True):
    reason: Annotated[str, msgspec.Meta(max_length=MAX_REASON_LENGTH)] = ""


class EmptyBody(Body, kw_only=True, frozen=True):
    pass


class CommandBody(Body, kw_only=True, frozen=True):
    text: Annotated[str, msgspec.Meta(max_length=MAX_COMMAND_LENGTH)]


# --- what the server sends on the lobby socket --------------------------------------------
# Services build these frames (lobby/payloads.py the views of rows inside them) and the feed
# encodes each once; the published schema comes from them, and every frame a test receives is
# validated by them.


class Account(msgspec.Struct, forbid_unknown_fields=True):
    username: str
    is_guest: bool
    is_bot_account: bool = False


class SeekView(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    user: str
    games: list[GameChoice]
    time_control: str
    time_label: str
    created_at: str
    rated: bool
    rating_range: list[int] | None
    rating: int  # the seeker's rating in the first game named, at this speed
    provisional: bool
    user_is_bot_account: bool = False  # the seeker is a bot account (docs/API.md)
    bots: bool = False  # the seek pairs with bot accounts too


class ChallengeView(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    challenger: str
    challenged: str | None
    slug: str
    options: dict[str, int | str]
    side: Side
    time_control: str
    time_label: str
    status: str
    decline_reason: str
    token: str
    game_id: int | None
    expires_at: str
    rated: bool
    challenger_is_bot_account: bool = False
    challenged_is_bot_account: bool = False


class Challenges(msgspec.Struct, forbid_unknown_fields=True):
    incoming: list[ChallengeView]
    outgoing: list[ChallengeView]


class LiveGame(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    slug: str
    options: dict[str, int | str]
    players: dict[str, str]
    ply: int
    spectators: int
    # The seats ("1", "2") whose player is a bot account; empty between people.
    bot_accounts: list[str] = []


class GameSummary(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    slug: str
    options: dict[str, int | str]
    players: dict[str, str]
    bot_accounts: list[str] = []  # seats of bot accounts, as LiveGame's


class Lobby(Frame, tag="lobby", kw_only=True):
    v: int
    user: Account | None
    seeks: list[SeekView]
    challenges: Challenges
    games: list[LiveGame]
    my_games: list[int]
    online: int


class SeekAdded(Frame, tag="seek_added", kw_only=True):
    v: int
    seek: SeekView


class SeekRemoved(Frame, tag="seek_removed", kw_only=True):
    v: int
    seek_id: int


# The fields of the other kind are left out, not sent as null: clients test for `you`.
class GameStarted(Frame, tag="game_started", kw_only=True, omit_defaults=True):
    """Public (versioned, with `game`) or personal (not versioned, with `you`)."""

    game_id: int
    v: int | None = None
    game: GameSummary | None = None
    you: int | None = None


class GameEnded(Frame, tag="game_ended", kw_only=True):
    v: int
    game_id: int
    status: str


FeedEvent = SeekAdded | SeekRemoved | GameStarted | GameEnded


class Batch(Frame, tag="batch", kw_only=True):
    events: list[FeedEvent]


class ChallengeNews(Frame, tag="challenge", kw_only=True):
    challenge: ChallengeView


class ChallengeUpdated(Frame, tag="challenge_updated", kw_only=True):
    challenge: ChallengeView


class Online(Frame, tag="online", kw_only=True):
    online: int


class Announcement(Frame, tag="announcement", kw_only=True):
    text: str


class SeekFailed(Error, tag="error", kw_only=True, omit_defaults=True):
    """The `error` that comes as a personal message when the computer cannot take a seek:
    no request to answer, so no `id`. On the wire it is an `Error` (outside SERVER_FRAMES,
    so the published schema has the one `error`)."""


class FollowedGame(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    name: str
    players: dict[str, str]
    bot_accounts: list[str] = []  # seats of bot accounts, as LiveGame's


class FollowedResult(msgspec.Struct, forbid_unknown_fields=True):
    winner: int | None
    termination: str
    reason: str


class Followed(Frame, tag="followed", kw_only=True):
    """News of a followed player (a game started) or game (it ended); see follows/."""

    news: str  # "game_started" | "game_ended"
    player: str | None
    game: FollowedGame
    result: FollowedResult | None


# Only the fields of the request's answer are sent, and `id` always (null when the request had
# none): so `id` has no default, which omit_defaults would leave out.
class Ok(Frame, tag="ok", kw_only=True, omit_defaults=True):
    id: RequestId
    seek_id: int | None = None
    challenge_id: int | None = None
    token: str | None = None
    game_id: int | None = None


SERVER_FRAMES = (
    Lobby
    | Batch
    | SeekAdded
    | SeekRemoved
    | GameStarted
    | GameEnded
    | ChallengeNews
    | ChallengeUpdated
    | Online
    | Announcement
    | Followed
    | Ok
    | AccountNotice
    | Pong
    | Restarting
    | Error
)


register_socket(
    SocketKind(name="lobby", prefix="/ws/lobby/", client=CLIENT_MESSAGES, frames=SERVER_FRAMES)
)
# The notification socket sends a few of the lobby's frames and accepts only `ping`.
register_socket(SocketKind(name="notify", prefix="/ws/notify/", client=Ping, frames=SERVER_FRAMES))


class TvGame(msgspec.Struct, forbid_unknown_fields=True):
    """The game TV shows (as GET /api/tv gives it)."""

    id: int
    slug: str
    title: str
    rating: int
    players: dict[str, str]
    ply: int


class Tv(Frame, tag="tv", kw_only=True):
    """TV's game (null: none is being played); its snapshot follows."""

    game: TvGame | None


# The TV socket sends a spectator's frames of the game socket, and `tv`; it accepts only `ping`.
register_socket(
    SocketKind(name="tv", prefix="/ws/tv/", client=Ping, frames=Tv | game_protocol.SERVER_FRAMES)
)
register_bodies(
    {
        "POST /api/seeks": SeekBody,
        "POST /api/challenges": ChallengeBody,
        "POST /api/challenges/<id>/decline": DeclineBody,
        "POST /api/command": CommandBody,
    }
)
