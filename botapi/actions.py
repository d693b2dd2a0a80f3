"""Game actions over HTTP: POST /api/games/<id>/<action> (docs/API.md, "Game actions").

Each action is the game socket's message of that type, sent as the body without `type`:
decoded into the socket's own model by the same edge (realtime/protocol.py), handed to the
same service the socket's handler calls (games/consumers.py), refused with the same codes.
`move` is games.views.game_move, the HTTP move that was there before the Bot API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.tokens import accepts_tokens
from botapi.protocol import ACTION_BODIES, ChatBody
from games import services
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder


@dataclass(frozen=True)
class Action:
    reader: msgspec.json.Decoder[Any]
    # The service, called with the game, the user and what the message says.
    call: Callable[[int, Any, Any], dict[str, Any] | None]


def _applied(service: Callable[..., services.Applied], *fields: str) -> Callable[..., Any]:
    """An action whose service returns `Applied`: the answer is its event (null when nothing
    changed), as the socket's mover receives it."""

    def call(game_id: int, user: Any, message: Any) -> dict[str, Any] | None:
        given = {name: getattr(message, name) for name in fields}
        return service(game_id=game_id, user=user, **given).event

    return call


def _chat(game_id: int, user: Any, message: ChatBody) -> dict[str, Any]:
    frame = services.post_chat(game_id=game_id, user=user, room=message.room, text=message.text)
    return dict(msgspec.to_builtins(frame))


_CALLS: dict[str, Callable[[int, Any, Any], dict[str, Any] | None]] = {
    "resign": _applied(services.resign),
    "abort": _applied(services.abort),
    "draw": _applied(services.offer_draw),
    "draw_answer": _applied(services.answer_draw, "accept"),
    "takeback": _applied(services.offer_takeback),
    "takeback_answer": _applied(services.answer_takeback, "accept"),
    "claim": _applied(services.claim_victory),
    "chat": _chat,
}
ACTIONS = {name: Action(decoder(ACTION_BODIES[name]), call) for name, call in _CALLS.items()}


@require_POST
@accepts_tokens("play")
def game_action(request: HttpRequest, game_id: int, action: str) -> JsonResponse:
    """POST /api/games/<id>/<action>: {"ok": true, "event": ...} or the service's refusal."""
    known = ACTIONS.get(action)
    if known is None:
        return refuse(
            ServiceError(
                "not_found",
                _("There is no game action %(action)s; the actions are: %(actions)s.")
                % {"action": action[:40], "actions": ", ".join(["move", *ACTIONS])},
            )
        )
    if not request.user.is_authenticated:
        return refuse(ServiceError("not_logged_in", _("Log in (or play as a guest) to play.")))
    try:
        message = decode(request.body or b"{}", known.reader)
        event = known.call(game_id, request.user, message)
    except ServiceError as refusal:
        return refuse(refusal)
    return JsonResponse({"ok": True, "event": event})
