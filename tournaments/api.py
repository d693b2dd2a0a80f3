"""Tournaments over HTTP: the list, one tournament, creating, joining and withdrawing.

Session auth; browsers send the CSRF token in X-CSRFToken. Answers are JSON; refusals are
{"error": {"code", "message"}} with the status of docs/PROTOCOL.md's error table.
"""

from __future__ import annotations

from typing import Any

import msgspec
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.tokens import ANY_SCOPE, accepts_tokens
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder, encode
from tournaments import protocol, selectors
from tournaments.services import creation, entries

_create = decoder(protocol.CreateBody)
_join = decoder(protocol.JoinBody)


def _json(answer: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(encode(answer), content_type="application/json", status=status)


@require_http_methods(["GET", "POST"])
@accepts_tokens("challenge")
def tournaments(request: HttpRequest) -> HttpResponse:
    """GET: upcoming, running and finished tournaments. POST: create one."""
    if request.method == "GET":
        return _json(selectors.listing())
    try:
        body = decode(request.body or b"{}", _create)
        tournament = creation.create_tournament(
            creator=request.user, **msgspec.structs.asdict(body)
        )
    except ServiceError as error:
        return refuse(error)
    answer: dict[str, Any] = {
        "tournament_id": tournament.pk,
        "url": f"/tournaments/{tournament.pk}/",
    }
    if tournament.invite_token:
        answer["invite"] = f"/tournaments/{tournament.pk}/?invite={tournament.invite_token}"
    return _json(answer, status=201)


@require_GET
@accepts_tokens(*ANY_SCOPE)
def tournament(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The snapshot the tournament socket sends on connect."""
    frame = selectors.snapshot(tournament_id, request.user)
    if frame is None:
        return refuse(
            ServiceError(
                "no_such_tournament",
                _("There is no tournament %(tournament)s.") % {"tournament": tournament_id},
            )
        )
    return _json(frame)


@require_POST
@accepts_tokens("challenge")
def join(request: HttpRequest, tournament_id: int) -> HttpResponse:
    try:
        body = decode(request.body or b"{}", _join)
        entries.join(user=request.user, tournament_id=tournament_id, token=body.token)
    except ServiceError as error:
        return refuse(error)
    return _json({"joined": True})


@require_POST
@accepts_tokens("challenge")
def withdraw(request: HttpRequest, tournament_id: int) -> HttpResponse:
    try:
        entries.withdraw(user=request.user, tournament_id=tournament_id)
    except ServiceError as error:
        return refuse(error)
    return _json({"joined": False})
