"""The tournament socket /ws/tournaments/<id>/ and the tournaments' HTTP bodies, typed.

A page gets the `tournament` snapshot on connect (and on `sync`), then a `tournament_update`
for every change, each with the tournament's version: an update whose `v` is not the next
one means something was missed, and the page asks for `sync`. See docs/PROTOCOL.md.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from realtime.protocol import (
    AccountNotice,
    Body,
    Error,
    Frame,
    Message,
    Pong,
    Restarting,
    SocketKind,
    register_bodies,
    register_socket,
)

MAX_NAME_LENGTH = 80


class Sync(Message, tag="sync", kw_only=True, frozen=True):
    pass


class Ping(Message, tag="ping", kw_only=True, frozen=True):
    pass


CLIENT_MESSAGES = Sync | Ping


class CreateBody(Body, kw_only=True, frozen=True):
    """POST /api/tournaments: a new tournament (docs/TOURNAMENTS.md gives the limits)."""

    name: Annotated[str, msgspec.Meta(max_length=MAX_NAME_LENGTH)] = ""
    kind: str
    slug: str
    options: dict[str, int | str] = {}
    time_control: str = ""
    rated: bool = True
    starts_in_minutes: int = 5
    minutes: int | None = None  # an arena's length
    rounds: int | None = None  # a Swiss's rounds
    double: bool = False  # a round robin's second cycle, colours reversed
    max_players: int | None = None
    invite_only: bool = False
    allow_bots: bool = False  # bot accounts may join


class JoinBody(Body, kw_only=True, frozen=True):
    """POST /api/tournaments/<id>/join: `token` is the invitation's, for one by invitation."""

    token: str = ""


class Row(msgspec.Struct, forbid_unknown_fields=True):
    """A player's line in the standings."""

    rank: int
    name: str
    rating: int
    points: int  # arena points, or half points in a Swiss or round robin
    games: int
    wins: int
    draws: int
    losses: int
    fire: bool  # arena: on a streak (the next win counts double)
    playing: bool
    withdrawn: bool
    tiebreak: float  # Swiss: Buchholz; round robin: Sonneborn-Berger; arena: 0
    # One mark a game (arena: its points, 0 1 2 4) or a round (Swiss, round robin): 1 = 0 a
    # win, draw, loss; + a bye or a win by forfeit; - a round without a game or points.
    sheet: str
    is_bot_account: bool = False  # the player is a bot account (docs/API.md)


class PairingView(msgspec.Struct, forbid_unknown_fields=True):
    round: int
    game_id: int | None  # None: a bye (a round robin's sit-out too) or a forfeit
    first: str
    second: str | None
    result: str  # "" in play, "1", "2", "draw", "bye", "void"


class TournamentView(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    name: str
    kind: str
    slug: str
    game: str  # the game's display name
    options: dict[str, int | str]
    time_control: str
    rated: bool
    invite_only: bool
    status: str  # upcoming, running, finished, cancelled
    starts_at: str  # ISO 8601
    ends_at: str | None  # an arena's end; a finished one's end
    minutes: int | None
    rounds: int | None
    round: int
    max_players: int
    players: int
    creator: str | None
    winner: str | None
    allow_bots: bool = False  # bot accounts may join


class TournamentFrame(Frame, tag="tournament", kw_only=True):
    """The snapshot: on connect and after `sync`."""

    v: int
    tournament: TournamentView
    standings: list[Row]  # the top of the standings
    pairings: list[PairingView]  # the games in play, and the current round's
    you: Row | None  # the viewer's own line, if they joined
    joined: bool


class TournamentUpdate(Frame, tag="tournament_update", kw_only=True):
    """One change: a game counted, a pairing wave or round, a start, an end, a player in or
    out. `standings` is the new top; `changed` the lines of the players it concerned."""

    v: int
    status: str
    round: int
    players: int
    winner: str | None
    standings: list[Row]
    changed: list[Row]
    pairings: list[PairingView]  # new pairings and newly counted results


SERVER_FRAMES = TournamentFrame | TournamentUpdate | AccountNotice | Pong | Restarting | Error


register_socket(
    SocketKind(
        name="tournament",
        prefix="/ws/tournaments/",
        client=CLIENT_MESSAGES,
        frames=SERVER_FRAMES,
    )
)
register_bodies({"POST /api/tournaments": CreateBody, "POST /api/tournaments/<id>/join": JoinBody})
