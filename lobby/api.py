"""The lobby over HTTP, for clients without a socket: the operations of lobby.commands, the
same table the socket /ws/lobby/ serves.

Session auth (log in or play as a guest first); browsers send the CSRF token in X-CSRFToken.
Bodies and answers are JSON; refusals are {"error": {"code", "message"}}.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET, require_POST

from accounts.tokens import ANY_SCOPE, accepts_tokens
from lobby import commands, selectors
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder, encode


def _json(answer: Any) -> HttpResponse:
    # msgspec, not JsonResponse: answers hold the typed views of lobby/protocol.py.
    return HttpResponse(encode(answer), content_type="application/json")


@require_GET
@accepts_tokens(*ANY_SCOPE)
def lobby(request: HttpRequest) -> HttpResponse:
    """The snapshot the lobby socket sends on connect."""
    return _json(selectors.snapshot(request.user))


def view(operation: commands.Operation) -> Callable[..., HttpResponse]:
    """The HTTP door of one operation: the route's parameters and the body (through the
    protocol's one edge) make the operation's message, as the socket would have sent it."""
    reader = decoder(operation.body) if operation.body is not None else None

    @require_POST
    @accepts_tokens("challenge")
    def serve(request: HttpRequest, **route: Any) -> HttpResponse:
        try:
            fields = dict(route)
            if reader is not None:
                fields.update(msgspec.structs.asdict(decode(request.body or b"{}", reader)))
            message = operation.message(**fields)
            return _json(commands.run(request.user, message, socket=False).answer)
        except ServiceError as error:
            return refuse(error)

    serve.__name__ = f"api_{operation.tag}"
    serve.__doc__ = f"POST /{operation.route}: the lobby's `{operation.tag}` over HTTP."
    return serve
