"""The only code that changes a game, one module per concern.

Every action follows one pattern (Zulip's check_/do_): lock the game row, check the request
against the game and the engine, write, bump the version, store the event, and broadcast it
after commit. A move, the busiest action, locks later: it is computed by a pure transition
(games/transition.py, lila's Progress) from the row read without a lock, its events encoded,
and then written in one short transaction only if the row is still as read (compare and set),
else computed again. Two processes can never both apply a move: the compare and set (or the
row lock of every other action) orders them, and the unique (game, ply) constraint of the
move events backs it up.

- `_core`: the locked row, who is asking, `Applied` (what an action returns)
- `events`: storing a versioned event and broadcasting it after commit
- `create`: new games; `moves`: playing a move; `queue`: conditional moves
- `clock`: deadlines and ending on time; `ending`: resign, abort and every end
- `rematch`; `consent`: takebacks and draws; `chat`; `abandonment`; `vacations`
- `correspondence`: reminders, forfeits and "your move" e-mails
- `moderation`: a moderator's abort and annulment (the moderation app calls them)

Callers use the names re-exported here (`from games import services`).
"""

from games.clocks import now_ms
from games.services._core import Applied
from games.services.abandonment import (
    claim_victory,
    connections_reaped,
    connections_revived,
    player_left,
    player_returned,
)
from games.services.chat import (
    CHAT_BURST,
    CHAT_MAX,
    CHAT_WINDOW,
    mute_chat,
    post_chat,
    remove_line,
)
from games.services.clock import check_clock, next_deadline, overdue_games
from games.services.clock import set_deadline as _set_deadline
from games.services.consent import answer_draw, answer_takeback, offer_draw, offer_takeback
from games.services.correspondence import (
    forfeit_stalled,
    notify_move,
    remind_stalled,
    send_move_notices,
    stalled_games,
)
from games.services.create import (
    bot_max_games,
    bots_without_room,
    check_bot_room,
    check_time_control,
    create_game,
    create_games,
    new_game,
)
from games.services.ending import abort, resign
from games.services.events import broadcast
from games.services.moderation import abort_by_moderator, annul
from games.services.moves import MOVE_COLUMNS, play_move
from games.services.queue import QUEUE_MAX, set_queue
from games.services.rematch import offer_rematch
from games.services.vacations import end_vacation, start_vacation

__all__ = [
    "CHAT_BURST",
    "CHAT_MAX",
    "CHAT_WINDOW",
    "MOVE_COLUMNS",
    "QUEUE_MAX",
    "Applied",
    "_set_deadline",
    "abort",
    "abort_by_moderator",
    "annul",
    "answer_draw",
    "answer_takeback",
    "bot_max_games",
    "bots_without_room",
    "broadcast",
    "check_bot_room",
    "check_clock",
    "check_time_control",
    "claim_victory",
    "connections_reaped",
    "connections_revived",
    "create_game",
    "create_games",
    "end_vacation",
    "forfeit_stalled",
    "mute_chat",
    "new_game",
    "next_deadline",
    "notify_move",
    "now_ms",
    "offer_draw",
    "offer_rematch",
    "offer_takeback",
    "overdue_games",
    "play_move",
    "player_left",
    "player_returned",
    "post_chat",
    "remind_stalled",
    "remove_line",
    "resign",
    "send_move_notices",
    "set_queue",
    "stalled_games",
    "start_vacation",
]
