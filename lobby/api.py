"""The lobby over HTTP, for clients without a socket: the same services as /ws/lobby/.

Session auth (log in or play as a guest first); browsers send the CSRF token in X-CSRFToken.
Bodies and answers are JSON; refusals are {"error": {"code", "message"}}.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from bots import services as bots
from lobby import protocol, selectors
from lobby.payloads import challenge_payload, seek_payload
from lobby.services import challenges, seeks
from realtime.errors import ServiceError, http_status
from realtime.protocol import decode, decoder, encode

T = TypeVar("T")


def refuse(error: ServiceError) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": error.code, "message": error.message}}, status=http_status(error.code)
    )


def _body(request: HttpRequest, kind: type[T]) -> T:
    """The request body as the typed message `kind`, through the protocol's one edge."""
    return decode(request.body or b"{}", _decoders[kind])


_decoders: dict[type, Any] = {
    kind: decoder(kind)
    for kind in (
        protocol.SeekBody,
        protocol.ChallengeBody,
        protocol.DeclineBody,
        protocol.CommandBody,
        protocol.ComputerBody,
    )
}


def _signed_in(request: HttpRequest) -> Any:
    if not request.user.is_authenticated:
        raise ServiceError("not_logged_in", "Log in or play as a guest first.")
    return request.user


def lobby_call(view: Callable[..., Any]) -> Callable[..., HttpResponse]:
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            # msgspec, not JsonResponse: answers hold the typed views of lobby/protocol.py.
            answer = encode(view(request, *args, **kwargs))
            return HttpResponse(answer, content_type="application/json")
        except ServiceError as error:
            return refuse(error)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


@require_GET
@lobby_call
def lobby(request: HttpRequest) -> protocol.Lobby:
    """The snapshot the lobby socket sends on connect."""
    return selectors.snapshot(request.user)


@require_POST
@lobby_call
def create_seek(request: HttpRequest) -> dict[str, Any]:
    body = _body(request, protocol.SeekBody)
    seek, game = seeks.create_seek(
        user=_signed_in(request),
        games=msgspec.to_builtins(body.games),
        time_control=body.time_control,
        rated=body.rated,
        rating_range=body.rating_range,
        computer=body.computer,
    )
    seek.refresh_from_db()
    return {"seek": seek_payload(seek), "game_id": game.pk if game else None}


@require_POST
@lobby_call
def play_computer(request: HttpRequest) -> dict[str, Any]:
    """A casual game against the computer, started now."""
    body = _body(request, protocol.ComputerBody)
    game = bots.play_computer(
        user=_signed_in(request),
        slug=body.slug,
        options=dict(body.options),
        level=body.level,
        side=body.side,
        time_control=body.time_control,
    )
    return {"game_id": game.pk, "you": game.player_number(request.user)}


@require_POST
@lobby_call
def cancel_seek(request: HttpRequest, seek_id: int) -> dict[str, Any]:
    seeks.cancel_seek(user=_signed_in(request), seek_id=seek_id)
    return {"ok": True}


@require_POST
@lobby_call
def create_challenge(request: HttpRequest) -> dict[str, Any]:
    body = _body(request, protocol.ChallengeBody)
    challenge = challenges.create_challenge(
        challenger=_signed_in(request),
        challenged=body.user,
        slug=body.slug,
        options=dict(body.options),
        side=body.side,
        time_control=body.time_control,
        rated=body.rated,
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
        challenge = challenges.decline_challenge(
            user=user,
            challenge_id=challenge_id,
            reason=_body(request, protocol.DeclineBody).reason,
        )
    else:
        challenge = challenges.cancel_challenge(user=user, challenge_id=challenge_id)
    return {"challenge": challenge_payload(challenge)}


@require_POST
@lobby_call
def command(request: HttpRequest) -> dict[str, Any]:
    """pbmserv's command form: {"text": "zigzag challenge -pits=8 alice bob"}."""
    text = _body(request, protocol.CommandBody).text
    challenge = challenges.pbm_challenge(sender=_signed_in(request), text=text)
    return {"challenge": challenge_payload(challenge)}
