"""What the Bot API's streams send, and the bodies of its game actions (docs/API.md).

The streams are newline-delimited JSON: one of these frames a line, and an empty line every
KEEP_ALIVE_SECONDS. The game stream sends the game socket's own frames (games/protocol.py),
the versioned events exactly as the socket sends them; only `state`, `move` and `takeback`
gain `position`, the position in the site's notation (docs/NOTATION.md), so that a program
needs no rules of its own. The published schema (`python manage.py protocol_schema`) and the
tests read these models.
"""

from __future__ import annotations

from typing import Any

import msgspec

from games import protocol as games
from lobby.protocol import ChallengeView
from realtime.protocol import Body, Frame, Restarting, register_bodies, register_streams

# An empty line this often on every stream: a client tells a quiet stream from a dead one.
KEEP_ALIVE_SECONDS = 5.0

# --- the event stream: GET /api/stream/event ----------------------------------------------


class Opponent(msgspec.Struct, forbid_unknown_fields=True):
    username: str
    is_bot: bool  # the site's computer (levels 1-5)
    is_bot_account: bool  # a program playing through the Bot API
    rating: int  # in this game, at its speed (1500 before a rated game)
    provisional: bool


class ApiGame(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A game of the account's, as its event stream names it."""

    id: int
    slug: str
    options: dict[str, int | str]
    you: int  # 1 or 2: the account's seat
    opponent: Opponent
    rated: bool
    time_control: games.TimeControl
    status: str  # "active" at the start; "finished" or "aborted" at the end
    result: games.Result | None  # null while the game goes on


class GameStart(Frame, tag="game_start", kw_only=True):
    """A game of the account's is on: sent on open for each active game, then as each starts
    (from a seek, a challenge, a rematch, a tournament)."""

    game: ApiGame


class GameFinish(Frame, tag="game_finish", kw_only=True):
    game: ApiGame


class ChallengeNews(Frame, tag="challenge", kw_only=True):
    """A challenge to or from the account, waiting for an answer (the lobby's own view)."""

    challenge: ChallengeView


class ChallengeCancelled(Frame, tag="challenge_cancelled", kw_only=True):
    """Its challenger cancelled it, or it expired (`challenge.status` says which)."""

    challenge: ChallengeView


class ChallengeDeclined(Frame, tag="challenge_declined", kw_only=True):
    """The challenged declined it (`challenge.decline_reason` may say why)."""

    challenge: ChallengeView


EVENT_STREAM_FRAMES = (
    GameStart | GameFinish | ChallengeNews | ChallengeCancelled | ChallengeDeclined | Restarting
)

# --- the game stream: GET /api/games/<id>/stream -------------------------------------------


class StreamState(games.State, tag="state", kw_only=True):
    """The game socket's `state`, and the position in the site's notation."""

    position: str


class StreamMove(games.MoveEvent, tag="move", kw_only=True):
    position: str = ""  # always sent on the stream


class StreamTakeback(games.TakebackEvent, tag="takeback", kw_only=True):
    position: str = ""  # always sent on the stream


GAME_STREAM_FRAMES = (
    StreamState
    | StreamMove
    | games.End
    | games.RematchOffer
    | games.RematchEvent
    | games.Away
    | games.Back
    | games.TakebackOffer
    | games.TakebackDeclined
    | StreamTakeback
    | games.DrawOffer
    | games.DrawDeclined
    | games.VacationEvent
    | games.ChatFrame
    | games.ChatRemoved
    | Restarting
)

# The frames whose lines carry `position` (computed from their `state`).
WITH_POSITION = frozenset({"state", "move", "takeback"})

# --- game actions: POST /api/games/<id>/<action> -------------------------------------------


class ChatBody(Body, kw_only=True, frozen=True):
    """POST /api/games/<id>/chat: the socket's `chat` message, in the players' room unless
    `room` says otherwise (a spectator writes in "spectators")."""

    text: games.ChatText
    room: str = "players"


# The socket's own messages are the bodies (without `type` and `id`, which are allowed and
# ignored): the same models, decoded by the same edge (realtime/protocol.py).
ACTION_BODIES: dict[str, Any] = {
    "resign": games.Resign,
    "abort": games.Abort,
    "draw": games.Draw,
    "draw_answer": games.DrawAnswer,
    "takeback": games.Takeback,
    "takeback_answer": games.TakebackAnswer,
    "claim": games.Claim,
    "chat": ChatBody,
}
register_bodies({f"POST /api/games/<id>/{name}": body for name, body in ACTION_BODIES.items()})
register_streams(
    {
        "GET /api/stream/event": EVENT_STREAM_FRAMES,
        "GET /api/games/<id>/stream": GAME_STREAM_FRAMES,
    }
)
