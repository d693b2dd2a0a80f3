"""Telling users what a moderator did: a notice kept until their next page shows it, and at
once an `account_notice` frame on every socket they have open (any page, any process)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import translation

from accounts.language import for_user
from accounts.models import User
from moderation.models import Action, Notice
from realtime.channel_layers import LAYER_DOWN
from realtime.db import run_soon
from realtime.protocol import AccountNotice, encode
from realtime.ws import account_group

logger = logging.getLogger(__name__)


def tell(
    action: Action,
    users: list[User],
    text: Callable[[], str],
    *,
    chat_muted_until: datetime | None = None,
) -> None:
    """Store the notice for each user and send the frame once the action has committed.
    `text` writes the notice; it is called once per user, in that user's language (not the
    moderator's)."""
    users = [user for user in users if not user.is_bot]
    notices = []
    messages: dict[int, dict[str, str]] = {}
    for user in users:
        with translation.override(for_user(user)):
            said = text()
        notices.append(Notice(user=user, action=action, text=said))
        frame = AccountNotice(
            action=action.kind,
            text=said,
            chat_muted_until=None if chat_muted_until is None else chat_muted_until.isoformat(),
        )
        messages[user.pk] = {"type": "account.notice", "text": encode(frame)}
    Notice.objects.bulk_create(notices)
    transaction.on_commit(lambda: _send(messages))


def _send(messages: dict[int, dict[str, str]]) -> None:
    """Each user's frame to every socket of theirs."""
    layer = get_channel_layer()
    if layer is None or not messages:
        return

    async def send() -> None:
        try:
            for user_id, message in messages.items():
                await layer.group_send(account_group(user_id), message)
        except LAYER_DOWN as error:
            # The notice is stored: the user's next page shows it.
            logger.warning("account notice not sent live (%s)", error)

    run_soon(send)
