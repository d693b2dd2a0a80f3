"""The lobby over HTTP, for clients without a socket: the same services as /ws/lobby/.

Session auth (log in or play as a guest first); browsers send the CSRF token in X-CSRFToken.
Bodies and answers are JSON; refusals are {"error": {"code", "message"}}.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from config.errors import ServiceError, http_status
from lobby import selectors
from lobby.services import challenges, seeks
from lobby.services.challenges import challenge_payload
from lobby.services.seeks import seek_payload


def refuse(error: ServiceError) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": error.code, "message": error.message}}, status=http_status(error.code)
    )


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise ServiceError("bad_message", "The body must be JSON.") from None
    if not isinstance(body, dict):
        raise ServiceError("bad_message", "The body must be a JSON object.")
    return body


def _signed_in(request: HttpRequest) -> Any:
    if not request.user.is_authenticated:
        raise ServiceError("not_logged_in", "Log in or play as a guest first.")
    return request.user


def lobby_call(view: Callable[..., dict[str, Any]]) -> Callable[..., JsonResponse]:
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        try:
            return JsonResponse(view(request, *args, **kwargs))
        except ServiceError as error:
            return refuse(error)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


@require_GET
@lobby_call
def lobby(request: HttpRequest) -> dict[str, Any]:
    """The snapshot the lobby socket sends on connect."""
    return selectors.snapshot(request.user)


@require_POST
@lobby_call
def create_seek(request: HttpRequest) -> dict[str, Any]:
    body = _body(request)
    seek, game = seeks.create_seek(
        user=_signed_in(request),
        games=body.get("games"),
        time_control=body.get("time_control", ""),
    )
    seek.refresh_from_db()
    return {"seek": seek_payload(seek), "game_id": game.pk if game else None}


@require_POST
@lobby_call
def cancel_seek(request: HttpRequest, seek_id: int) -> dict[str, Any]:
    seeks.cancel_seek(user=_signed_in(request), seek_id=seek_id)
    return {"ok": True}


@require_POST
@lobby_call
def create_challenge(request: HttpRequest) -> dict[str, Any]:
    body = _body(request)
    challenge = challenges.create_challenge(
        challenger=_signed_in(request),
        challenged=body.get("user"),
        slug=body.get("slug"),
        options=body.get("options"),
        side=body.get("side", "random"),
        time_control=body.get("time_control", ""),
    )
    return {"challenge": challenge_payload(challenge)}


@require_POST
@lobby_call
def answer_challenge(request: HttpRequest, challenge_id: int, action: str) -> dict[str, Any]:
    user = _signed_in(request)
    if action == "accept":
        game = challenges.accept_challenge(user=user, challenge_id=challenge_id)
        return {"game_id": game.pk}
    if action == "decline":
        reason = _body(request).get("reason", "")
        challenge = challenges.decline_challenge(
            user=user, challenge_id=challenge_id, reason=reason
        )
    else:
        challenge = challenges.cancel_challenge(user=user, challenge_id=challenge_id)
    return {"challenge": challenge_payload(challenge)}


@require_POST
@lobby_call
def command(request: HttpRequest) -> dict[str, Any]:
    """pbmserv's command form: {"text": "zigzag challenge -pits=8 alice bob"}."""
    challenge = challenges.pbm_challenge(
        sender=_signed_in(request), text=_body(request).get("text")
    )
    return {"challenge": challenge_payload(challenge)}
