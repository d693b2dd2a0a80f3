"""Every message a client sends about a game, typed (the socket /ws/games/<id>/ and the HTTP
move endpoint). See docs/PROTOCOL.md; docs/protocol.schema.json is generated from these."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from games.engine import MAX_MOVE_LENGTH
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

Notation = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_MOVE_LENGTH)]
Ply = Annotated[int, msgspec.Meta(ge=0)]


class Move(Message, tag="move", kw_only=True, frozen=True):
    move: Notation
    ply: Ply  # moves already played in the client's view


class Resign(Message, tag="resign", kw_only=True, frozen=True):
    pass


class Abort(Message, tag="abort", kw_only=True, frozen=True):
    pass


class Rematch(Message, tag="rematch", kw_only=True, frozen=True):
    pass


class Sync(Message, tag="sync", kw_only=True, frozen=True):
    v: int  # the last version the client saw
    chat: int | None = None  # the last chat line id the client saw: later lines are sent


class Ping(Message, tag="ping", kw_only=True, frozen=True):
    pass


class Claim(Message, tag="claim", kw_only=True, frozen=True):
    pass


class LagReply(Message, tag="lag_reply", kw_only=True, frozen=True):
    t: int  # as the server's lag_probe sent it


ChatText = Annotated[str, msgspec.Meta(max_length=1000)]  # the service says "at most 140"


class Chat(Message, tag="chat", kw_only=True, frozen=True):
    room: str  # "players" or "spectators"
    text: ChatText


class ChatMute(Message, tag="chat_mute", kw_only=True, frozen=True):
    mute: bool


class Queue(Message, tag="queue", kw_only=True, frozen=True):
    moves: Annotated[list[Notation], msgspec.Meta(max_length=40)]


class Takeback(Message, tag="takeback", kw_only=True, frozen=True):
    pass


class TakebackAnswer(Message, tag="takeback_answer", kw_only=True, frozen=True):
    accept: bool


class Draw(Message, tag="draw", kw_only=True, frozen=True):
    pass


class DrawAnswer(Message, tag="draw_answer", kw_only=True, frozen=True):
    accept: bool


CLIENT_MESSAGES = (
    Move
    | Resign
    | Abort
    | Rematch
    | Sync
    | Ping
    | Claim
    | LagReply
    | Chat
    | ChatMute
    | Queue
    | Takeback
    | TakebackAnswer
    | Draw
    | DrawAnswer
)


class MoveBody(Body, kw_only=True, frozen=True):
    """POST /api/games/<id>/move."""

    move: Notation
    ply: Ply


class VacationBody(Body, kw_only=True, frozen=True):
    """POST /api/vacation."""

    days: Annotated[int, msgspec.Meta(ge=1, le=366)]


# --- what the server sends on the game socket ---------------------------------------------
# The versioned events (Event and its kinds) are built typed by the services and the move
# transition (games/transition.py) and encoded once, when stored; the other frames are still
# built as dicts by the consumer. Either way these models are the contract: the published
# schema comes from them, and every frame a test receives is validated by them.


class Result(msgspec.Struct, forbid_unknown_fields=True):
    winner: int | None
    termination: str
    reason: str


class Clock(msgspec.Struct, forbid_unknown_fields=True):
    code: str
    kind: str
    label: str
    remaining: list[int]
    running: int | None
    first_move_by: int | None
    server_time: int
    paused_until: int | None = None  # a vacation: no clock runs before this (server ms)


class TimeControl(msgspec.Struct, forbid_unknown_fields=True):
    code: str
    kind: str
    label: str


class Groups(msgspec.Struct, forbid_unknown_fields=True):
    at_turn_start: int
    now: int
    needed: int
    members: list[list[str]]  # the stones of each group now


class ChessMoves(msgspec.Struct, forbid_unknown_fields=True):
    destinations: dict[str, dict[str, str]]
    echo: bool
    groups: Groups | None


class Block(msgspec.Struct, forbid_unknown_fields=True):
    label: str
    owner: int
    columns: list[int]


class Board(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    renderer: str
    names: list[list[str]] | None = None
    blocks: list[Block] | None = None
    files: str | None = None
    size: int | None = None
    steps: list[list[int]] | None = None


class Player(msgspec.Struct, forbid_unknown_fields=True):
    username: str
    is_guest: bool
    is_bot: bool  # the site's computer (levels 1-5)
    is_bot_account: bool = False  # a program playing through the Bot API (docs/API.md)


class PlayedMove(msgspec.Struct, forbid_unknown_fields=True):
    player: int
    notation: str


LegalMoves = list[str] | ChessMoves


class ChatLine(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    user: str
    text: str
    at: str  # ISO 8601


class ChatView(msgspec.Struct, forbid_unknown_fields=True):
    room: str
    lines: list[ChatLine]
    muted: bool  # this player muted their opponent's chat (always false for spectators)
    # A moderator muted the viewer's own chat until then (ISO 8601); null: they may chat.
    muted_until: str | None = None


class Takebacks(msgspec.Struct, forbid_unknown_fields=True):
    ply: int  # the number of moves played once it was taken back
    undone: int


class Game(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    slug: str
    options: dict[str, int | str]
    players: dict[str, Player]
    status: str
    result: Result | None
    ply: int
    state: dict[str, Any]
    board: Board
    to_move: int
    legal_moves: LegalMoves
    moves: list[PlayedMove]
    abortable: bool
    rematch_offers: list[int]
    rematch_id: int | None
    created_at: str
    time_control: TimeControl
    clock: Clock | None
    away: dict[str, int]
    rated: bool
    draws: bool  # whether the game can end in a draw (never in the Diffusions)
    offers: dict[str, int]  # {"takeback": 1, "draw": 2}: who is waiting for an answer
    takebacks: list[Takebacks]


class State(Frame, tag="state", kw_only=True):
    v: int
    you: int | None
    game: Game
    chat: ChatView | None = None
    queue: list[str] | None = None  # players only: their conditional moves


class Event(Frame, kw_only=True, omit_defaults=True):
    """A versioned event; the mover's copy carries its request's id (and `duplicate` when it
    was a resend). Optional fields left at their default are not sent (`id`, `duplicate`,
    a move's `path`): the stored and broadcast event has none of them."""

    v: int
    game_id: int
    id: RequestId = None
    duplicate: bool | None = None


class MoveEvent(Event, tag="move", kw_only=True):
    ply: int
    player: int
    move: str
    state: dict[str, Any]
    to_move: int
    legal_moves: LegalMoves
    status: str
    result: Result | None
    abortable: bool
    clock: Clock | None
    # Pit games: the move seed by seed, ["lift"|"sow", pit], ["store"|"sweep", store],
    # ["capture", pit, store] (the engine's `sowing`), for a client to animate.
    path: list[list[str | int]] | None = None


class End(Event, tag="end", kw_only=True):
    status: str
    result: Result | None
    clock: Clock | None


class RematchOffer(Event, tag="rematch_offer", kw_only=True):
    by: int


class RematchEvent(Event, tag="rematch", kw_only=True):
    new_game_id: int


class Away(Event, tag="away", kw_only=True):
    player: int
    claim_at: int


class Back(Event, tag="back", kw_only=True):
    player: int
    clock: Clock | None


class TakebackOffer(Event, tag="takeback_offer", kw_only=True):
    by: int


class TakebackDeclined(Event, tag="takeback_declined", kw_only=True):
    by: int


class TakebackEvent(Event, tag="takeback", kw_only=True):
    by: int  # the player who accepted
    ply: int  # moves played now
    undone: int  # moves taken back
    state: dict[str, Any]
    to_move: int
    legal_moves: LegalMoves
    abortable: bool
    clock: Clock | None


class VacationEvent(Event, tag="vacation", kw_only=True):
    player: int  # who went on vacation (or came back)
    until: int  # server ms: the clocks stand still until then
    clock: Clock | None


class DrawOffer(Event, tag="draw_offer", kw_only=True):
    by: int


class DrawDeclined(Event, tag="draw_declined", kw_only=True):
    by: int


class ChatFrame(Frame, tag="chat", kw_only=True, omit_defaults=True):
    """A chat line; only the sender's copy carries its request's id."""

    room: str
    line: ChatLine
    id: RequestId = None


class ChatRemoved(Frame, tag="chat_removed", kw_only=True):
    """A moderator removed a chat line: take it off the page (later syncs leave it out)."""

    room: str
    line_id: int


class QueueFrame(Frame, tag="queue", kw_only=True):
    moves: list[str]
    id: RequestId = None


class ChatLines(Frame, tag="chat_lines", kw_only=True):
    room: str
    lines: list[ChatLine]


class Crowd(Frame, tag="crowd", kw_only=True):
    spectators: int
    players: dict[str, bool]


class LagProbe(Frame, tag="lag_probe", kw_only=True):
    t: int


class Ack(Frame, tag="ack", kw_only=True):
    id: RequestId = None
    duplicate: bool


SERVER_FRAMES = (
    State
    | MoveEvent
    | End
    | RematchOffer
    | RematchEvent
    | Away
    | Back
    | TakebackOffer
    | TakebackDeclined
    | TakebackEvent
    | DrawOffer
    | DrawDeclined
    | VacationEvent
    | ChatFrame
    | ChatLines
    | ChatRemoved
    | QueueFrame
    | Crowd
    | LagProbe
    | Ack
    | AccountNotice
    | Pong
    | Restarting
    | Error
)


register_socket(
    SocketKind(name="game", prefix="/ws/games/", client=CLIENT_MESSAGES, frames=SERVER_FRAMES)
)
register_bodies({"POST /api/games/<id>/move": MoveBody})
