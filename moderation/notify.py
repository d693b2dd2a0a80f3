"""Telling users what a moderator did: a notice kept until their next page shows it, and at
once an `account_notice` frame on every socket they have open (any page, any process)."""

from __future__ import annotations

import logging
from datetime import datetime

from channels.layers import get_channel_layer
from django.db import transaction

from accounts.models import User
from moderation.models import Action, Notice
from realtime.channel_layers import LAYER_DOWN
from realtime.db import run_soon
from realtime.protocol import AccountNotice, encode
from realtime.ws import account_group

logger = logging.getLogger(__name__)


def tell(
    action: Action, users: list[User], text: str, *, chat_muted_until: datetime | None = None
) -> None:
    """Store the notice for each user and send the frame once the action has committed."""
    users = [user for user in users if not user.is_bot]
    Notice.objects.bulk_create([Notice(user=user, action=action, text=text) for user in users])
    frame = AccountNotice(
        action=action.kind,
        text=text,
        chat_muted_until=None if chat_muted_until is None else chat_muted_until.isoformat(),
    )
    message = {"type": "account.notice", "text": encode(frame)}
    ids = [user.pk for user in users]
    transaction.on_commit(lambda: _send(ids, message))


def _send(user_ids: list[int], message: dict[str, str]) -> None:
    layer = get_channel_layer()
    if layer is None or not user_ids:
        return

    async def send() -> None:
        try:
            for user_id in user_ids:
                await layer.group_send(account_group(user_id), message)
        except LAYER_DOWN as error:
            # The notice is stored: the user's next page shows it.
            logger.warning("account notice not sent live (%s)", error)

    run_soon(send)
