"""Bot accounts over the Bot API (docs/API.md, "Bot accounts"): the upgrade of an account
without games, with a token holding the `bot` scope. The service is accounts.bot_accounts."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import bot_accounts
from accounts.tokens import accepts_tokens, request_token
from realtime.api_errors import error, refuse
from realtime.errors import ServiceError


@require_POST
@accepts_tokens("bot")
def upgrade(request: HttpRequest) -> HttpResponse:
    """`POST /api/bot/account/upgrade`: the token's account becomes a bot account, for good.
    Asking again answers the same. Only with a token: a signed-in page cannot do it by a
    click it did not mean."""
    if request_token(request) is None:
        return error(
            403,
            "missing_scope",
            _("Upgrade with a token that holds the bot scope (docs/BOTS.md)."),
        )
    try:
        user = bot_accounts.upgrade(user=request.user)
    except ServiceError as refusal:
        return refuse(refusal)
    return JsonResponse(
        {
            "ok": True,
            "username": user.username,
            "is_bot_account": True,
            "bot_since": user.bot_since.isoformat() if user.bot_since else None,
        }
    )
