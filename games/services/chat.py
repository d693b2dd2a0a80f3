"""Chat in a game: the players' room and the spectators' room, rate-limited, mutable."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import restrictions
from games import presence, protocol, selectors
from games.models import ChatLine
from games.services._core import Applied, locked, player_of
from realtime.db import run_soon
from realtime.errors import ServiceError
from realtime.protocol import encode

logger = logging.getLogger(__name__)

CHAT_MAX = 140
# At most CHAT_BURST lines in CHAT_WINDOW seconds from one user in one game.
CHAT_BURST = 5
CHAT_WINDOW = 10


def post_chat(*, game_id: int, user: Any, room: str, text: str) -> protocol.ChatFrame:
    """Store a chat line and send it to its room (encoded once); returns its frame."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in (or play as a guest) to chat."))
    restrictions.check_may_chat(user.pk)
    text = " ".join(str(text).split())
    if not text:
        raise ServiceError("bad_message", _("A chat line needs some text."))
    if len(text) > CHAT_MAX:
        raise ServiceError(
            "chat_too_long", _("A chat line has at most %(most)s characters.") % {"most": CHAT_MAX}
        )
    if room not in ChatLine.Room.values:
        raise ServiceError("bad_message", _('room is "players" or "spectators".'))
    game = selectors.load_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    player = game.player_number(user)
    if room == ChatLine.Room.PLAYERS and player is None:
        raise ServiceError("not_a_player", _("Only the two players talk in the players' room."))
    if room == ChatLine.Room.SPECTATORS and player is not None:
        raise ServiceError(
            "not_a_spectator", _("Players talk to each other in the players' room, not here.")
        )
    since = timezone.now() - timedelta(seconds=CHAT_WINDOW)
    recent = ChatLine.objects.filter(game=game, user=user, created_at__gte=since).count()
    if recent >= CHAT_BURST:
        raise ServiceError(
            "chat_too_fast",
            _("At most %(lines)s lines in %(seconds)s seconds: slow down.")
            % {"lines": CHAT_BURST, "seconds": CHAT_WINDOW},
        )
    line = ChatLine.objects.create(game=game, room=room, user=user, text=text)
    frame = protocol.ChatFrame(room=room, line=protocol.ChatLine(**selectors.chat_line(line)))
    hidden = selectors.chat_hidden_from(game, user.pk, room)
    transaction.on_commit(lambda: _send_chat(game.pk, frame, hidden))
    return frame


def _send_chat(game_id: int, frame: protocol.ChatFrame, hidden: list[int]) -> None:
    message = {
        "type": "game.chat",
        "room": frame.room,
        "line_id": frame.line.id,
        "hidden_from": hidden,
        "text": encode(frame),
    }
    _send(game_id, message)


def remove_line(*, line_id: int) -> ChatLine:
    """Take a chat line out of its game (a moderator's action): it disappears from every
    open page at once (`chat_removed`), and no snapshot or sync carries it again. The row is
    kept, marked, for the report and the audit log."""
    with transaction.atomic():
        line = ChatLine.objects.select_for_update().filter(pk=line_id).first()
        if line is None:
            raise ServiceError(
                "no_such_line", _("There is no chat line %(line)s.") % {"line": line_id}
            )
        if line.removed_at is None:
            line.removed_at = timezone.now()
            line.save(update_fields=["removed_at"])
        frame = protocol.ChatRemoved(room=line.room, line_id=line.pk)
        message = {"type": "game.chat_removed", "room": line.room, "text": encode(frame)}
        game_id = line.game_id
        transaction.on_commit(lambda: _send(game_id, message))
    return line


def _send(game_id: int, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return

    async def send() -> None:
        try:
            await layer.group_send(presence.game_group(game_id), message)
        except Exception:
            # Stored either way: a client's next sync (with `chat`) brings a new line, and
            # its next snapshot leaves a removed one out.
            logger.exception("chat of game %s not sent", game_id)

    run_soon(send)


def mute_chat(*, game_id: int, user: Any, mute: bool) -> Applied:
    """A player hides (or shows again) their opponent's chat in this game."""
    with transaction.atomic():
        game = locked(game_id)
        player = player_of(game, user)
        muted = set(game.chat_muted)
        muted = muted | {player} if mute else muted - {player}
        game.chat_muted = sorted(muted)
        game.save(update_fields=["chat_muted", "updated_at"])
    return Applied(game=game)
