"""What every game action shares: the locked row, who is asking, what an action returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from django.utils.translation import gettext as _

from games import protocol, store
from games.models import Game
from realtime.errors import ServiceError
from realtime.protocol import encode


@dataclass(frozen=True, slots=True)
class Applied:
    """What a service did: the versioned event it stored and broadcast (typed, and its JSON
    text, encoded once), or neither when nothing changed. A resent move is a duplicate: its
    text is the move's stored event and it has no new frame."""

    game: Game
    frame: protocol.Event | None = None
    text: str | None = None
    duplicate: bool = False
    # {"clock": the clock as clients see it} for an event that carries one, else {}: the
    # broadcast and the mover's socket re-arm their deadline timers from it (events.emit
    # fills it once for both).
    timing: dict[str, Any] | None = None

    @property
    def event(self) -> dict[str, Any] | None:
        """The event as a JSON-ready dict (the HTTP answer, tests), decoded from its text:
        the socket path sends the text itself."""
        return None if self.text is None else msgspec.json.decode(self.text)

    @property
    def version(self) -> int:
        assert self.frame is not None, "a duplicate has no new version"
        return self.frame.v

    def reply(self, request_id: Any = None, *, duplicate: bool = False) -> str:
        """The event's text as the requester gets it: with its request's id (and
        `duplicate`) appended, the stored text spliced rather than encoded again."""
        assert self.text is not None
        extra = "" if request_id is None else ',"id":' + encode(request_id)
        if duplicate:
            extra += ',"duplicate":true'
        return f"{self.text[:-1]}{extra}}}" if extra else self.text


def locked(game_id: int) -> Game:
    """The game, its row locked until the transaction ends."""
    game = store.lock_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    return game


def player_of(game: Game, user: Any) -> int:
    number = game.player_number(user)
    if number is None:
        raise ServiceError("not_a_player", _("Only the two players of this game can do that."))
    return number


def active_player(game_id: int, user: Any) -> tuple[Game, int]:
    """The locked game and the asker's seat; refused when the game is over."""
    game = locked(game_id)
    player = player_of(game, user)
    if game.status != Game.Status.ACTIVE:
        raise ServiceError("game_over", _("The game is already over."))
    return game, player
