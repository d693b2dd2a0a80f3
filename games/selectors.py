"""Reads: snapshots, missed events, listings and the pbmserv-style text of a game."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from accounts import restrictions
from accounts.models import Block
from games import clocks, messages
from games.clocks import now_ms
from games.engine import client_moves, rules_for
from games.models import ChatLine, Game, GameEvent, Vacation
from games.reasons import translate
from games.rules import available_games, game_info

# A client further behind than this gets one fresh snapshot instead of the events: a frame
# per event would let a cheap `sync` pull a whole game's history out of the server.
MAX_REPLAY = 20


def player_info(user: Any) -> dict[str, Any]:
    # is_bot: the site's computer; is_bot_account: a program playing through the Bot API.
    return {
        "username": user.username,
        "is_guest": user.is_guest,
        "is_bot": user.is_bot,
        "is_bot_account": user.bot_since is not None,
    }


def snapshot(game: Game) -> dict[str, Any]:
    """Everything a client needs to draw the game from scratch."""
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    moves = [{"player": player, "notation": notation} for player, notation in played(game)]
    return {
        "id": game.pk,
        "slug": game.slug,
        "options": game.options,
        "players": {"1": player_info(game.player1), "2": player_info(game.player2)},
        "status": game.status,
        "result": game.result(),
        "ply": game.ply,
        "state": game.state,
        # How to draw it: the client keeps no per-game tables.
        "board": rules.board(),
        "to_move": rules.to_move(state),
        "legal_moves": client_moves(rules, state) if game.status == Game.Status.ACTIVE else [],
        "moves": moves,
        "abortable": game.abortable,
        "rematch_offers": game.rematch_offers,
        "rematch_id": game.rematch_id,
        "created_at": game.created_at.isoformat(),
        "time_control": game.time_control.describe(),
        "clock": clocks.view(game.clock, now_ms()),
        # Real-time players away from the game: when their opponent may claim the win.
        "away": {seat: at + clocks.ABANDON_MS for seat, at in game.away.items()},
        "rated": game.rated,
        "draws": game_info(game.slug).draws,
        "offers": game.offers,
        "takebacks": takebacks(game),
    }


def takebacks(game: Game) -> list[dict[str, int]]:
    """Every accepted takeback, in order: the moves played once it was done, and how many
    it took back (the move list shows them)."""
    rows = GameEvent.objects.filter(game=game, payload__type="takeback").order_by("version")
    return [
        {"ply": ply, "undone": undone}
        for ply, undone in rows.values_list("payload__ply", "payload__undone")
    ]


# The chat lines a snapshot or a resync carries at most (the newest).
CHAT_LINES = 50


def chat_room(player: int | None) -> str:
    """Players talk in the players' room; everyone else in the spectators' room."""
    return ChatLine.Room.PLAYERS if player else ChatLine.Room.SPECTATORS


def chat_line(line: ChatLine) -> dict[str, Any]:
    return {
        "id": line.pk,
        "user": line.user.username,
        "text": line.text,
        "at": line.created_at.isoformat(),
    }


def chat_hidden_from(game: Game, author_id: int, room: str) -> list[int]:
    """Users who must not see `author_id`'s lines in this game: the opponent who muted
    them or whose "who may chat with me" leaves them out (players' room), and everyone who
    blocked them."""
    hidden = list(Block.objects.filter(blocked_id=author_id).values_list("blocker_id", flat=True))
    if room == ChatLine.Room.PLAYERS:
        for player, user_id in ((1, game.player1_id), (2, game.player2_id)):
            if user_id == author_id:
                continue
            if player in game.chat_muted or not restrictions.sees_chat_of(user_id, author_id):
                hidden.append(user_id)
    return hidden


def chat_lines(game: Game, user: Any, player: int | None, after: int = 0) -> list[dict[str, Any]]:
    """The newest lines of the viewer's room (after line `after`), oldest first, without
    those the viewer muted or blocked."""
    room = chat_room(player)
    rows = ChatLine.objects.filter(
        game=game, room=room, id__gt=after, removed_at__isnull=True
    ).select_related("user")
    user_id = user.pk if user is not None and getattr(user, "is_authenticated", False) else None
    if user_id is not None:
        blocked = Block.objects.filter(blocker_id=user_id).values_list("blocked_id", flat=True)
        rows = rows.exclude(user_id__in=blocked)
        opponent = game.player2_id if player == 1 else game.player1_id
        if player in game.chat_muted or (
            player and not restrictions.sees_chat_of(user_id, opponent)
        ):
            rows = rows.filter(user_id=user_id)
    newest = list(rows.order_by("-id")[:CHAT_LINES])
    return [chat_line(line) for line in reversed(newest)]


def chat_view(game: Game, user: Any, player: int | None) -> dict[str, Any]:
    """The chat a socket's snapshot carries: its room, the newest lines, the mute, and
    until when a moderator muted the viewer."""
    user_id = user.pk if user is not None and getattr(user, "is_authenticated", False) else None
    until = None if user_id is None else restrictions.chat_muted_until(user_id)
    return {
        "room": chat_room(player),
        "lines": chat_lines(game, user, player),
        "muted": bool(player) and player in game.chat_muted,
        "muted_until": None if until is None else until.isoformat(),
    }


def move_events(game: Game) -> QuerySet[GameEvent]:
    """The game's move events in order: each is the record of one move (moves taken back
    are not part of the game any more)."""
    return GameEvent.objects.filter(game=game, ply__isnull=False, undone=False).order_by("ply")


def played(game: Game) -> list[tuple[int, str]]:
    """(player, move as played) for every move so far."""
    return list(move_events(game).values_list("payload__player", "payload__move"))


def load_game(game_id: int) -> Game | None:
    return Game.objects.select_related("player1", "player2").filter(pk=game_id).first()


def load_snapshot(game_id: int) -> tuple[Game, dict[str, Any]] | None:
    """The game and its snapshot, read as of one moment: the row, its moves and takebacks
    all of the same version. Read one query after another, a move committed in between put
    a move into the list that the snapshot's version did not have yet, and the client, which
    then applied that move's event too, showed it twice."""
    # Inside a transaction already (a test's), the reads share that one.
    own_transaction = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and own_transaction:
            with connection.cursor() as cursor:
                # Every read of the transaction sees the same snapshot (SQLite's transaction
                # already does): no lock, so moves are not held up.
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        game = load_game(game_id)
        return None if game is None else (game, snapshot(game))


def events_since(game_id: int, version: int, latest: int) -> list[dict[str, Any]] | None:
    """The events after `version` in order, or None when a snapshot is the better answer."""
    if version >= latest:
        return []
    if version < 0 or latest - version > MAX_REPLAY:
        return None
    payloads = list(
        GameEvent.objects.filter(game_id=game_id, version__gt=version, version__lte=latest)
        .order_by("version")
        .values_list("payload", flat=True)
    )
    if len(payloads) != latest - version:
        return None
    return payloads


def games_with_status(status: str, limit: int = 100) -> QuerySet[Game]:
    """The games in progress most recently active first; the others latest ended first."""
    latest = "-updated_at" if status == Game.Status.ACTIVE else "-ended_at"
    return (
        Game.objects.filter(status=status)
        .select_related("player1", "player2")
        .order_by(latest, "-pk")[:limit]
    )


# A Diffusion Chess turn can be any of thousands of paths: the text lists the stones instead.
MAX_LISTED_MOVES = 60


def legal_moves_text(rules: Any, state: Any) -> str:
    """The moves the player to move may make, in the notation a move is sent in."""
    moves = client_moves(rules, state)
    if isinstance(moves, dict):  # Diffusion Chess: {"destinations": {stone: {cell: path}}, "echo"}
        text = _("stones that can move: %(stones)s") % {
            "stones": " ".join(sorted(moves["destinations"]))
        }
        if moves.get("echo"):
            # Translators: "echo" is the move's word, typed as it is: keep it in English.
            text += _("; or echo")
        return text + _(" (a move is the stone's path, as d4-d5-e5)")
    listed = list(moves)
    if len(listed) > MAX_LISTED_MOVES:
        return _("%(count)s moves, among them %(moves)s ...") % {
            "count": len(listed),
            "moves": " ".join(listed[:MAX_LISTED_MOVES]),
        }
    return " ".join(listed) if listed else pgettext("legal moves", "none")


def _now_text(game: Game, rules: Any, state: Any) -> list[str]:
    """Whose move and its number, with the legal moves; or how the game ended."""
    result = game.result()
    if result is None:
        seat = rules.to_move(state)
        mover = game.player1 if seat == 1 else game.player2
        return [
            _("%(name)s (%(seat)s) to move; this move is #%(number)s.")
            % {"name": mover.username, "seat": seat, "number": game.ply + 1},
            _("Legal moves: %(moves)s") % {"moves": legal_moves_text(rules, state)},
        ]
    if result["winner"] is None:
        return [_("Game over: %(reason)s (no winner).") % {"reason": translate(result["reason"])}]
    winner = game.player1 if result["winner"] == 1 else game.player2
    return [
        _("Game over: %(name)s wins (%(reason)s).")
        % {"name": winner.username, "reason": translate(result["reason"])}
    ]


def game_text(game: Game, *, at: int | None = None, last: int | None = None) -> str:
    """pbmserv-style, as the site's text view and the mail door show a game: a header, the
    board, whose move and its number with the legal moves (or how the game ended), and the
    numbered moves (the `last` few only, if given). With `at`, the board as it stood after
    move `at` (0: before the first)."""
    rules = rules_for(game.slug, game.options)
    moves = played(game)
    lines = [
        _("%(game)s game %(number)s: %(first)s (1) vs %(second)s (2)")
        % {
            "game": game.slug,
            "number": game.pk,
            "first": game.player1.username,
            "second": game.player2.username,
        },
    ]
    if game.options:
        options = " ".join(f"-{k}={v}" for k, v in sorted(game.options.items()))
        lines.append(_("options: %(options)s") % {"options": options})
    lines.append(
        (_("rated, %(time)s") if game.rated else _("casual, %(time)s"))
        % {"time": time_label(game.time_control)}
    )
    if at is not None:
        states = positions(game)
        at = max(0, min(at, len(states) - 1))
        moves = moves[:at]
        lines += [
            _("as it stood after move %(at)s of %(moves)s") % {"at": at, "moves": len(states) - 1}
        ]
        state = rules.from_json(states[at])
    else:
        state = rules.from_json(game.state)
    lines += ["", rules.render_text(state).rstrip("\n"), ""]
    if at is None:
        lines += _now_text(game, rules, state)
    lines.append("")
    numbered = [f"{n:4d}. ({player}) {notation}" for n, (player, notation) in enumerate(moves, 1)]
    lines += numbered[-last:] if last else numbered
    return "\n".join(lines) + "\n"


def game_record(game: Game) -> dict[str, Any]:
    """A finished (or running) game as a file: enough to replay it anywhere."""
    return {
        "id": game.pk,
        "game": game.slug,
        "name": title_for(game.slug, game.options),
        "options": game.options,
        "players": {"1": player_info(game.player1), "2": player_info(game.player2)},
        "time_control": game.time_control.describe(),
        "rated": game.rated,
        "status": game.status,
        "result": game.result(),
        "started": game.created_at.isoformat(),
        "moves": [
            {"ply": number, "player": player, "move": notation}
            for number, (player, notation) in enumerate(played(game), start=1)
        ],
        "takebacks": takebacks(game),
        "final_state": game.state,
    }


def positions(game: Game) -> list[dict[str, Any]]:
    rules = rules_for(game.slug, game.options)
    states = list(move_events(game).values_list("payload__state", flat=True))
    return [rules.to_json(rules.initial_state()), *states]


def title(game: Game) -> str:
    """The game's display name and options, and who plays."""
    name = title_for(game.slug, game.options)
    return _("%(game)s: %(first)s vs %(second)s") % {
        "game": name,
        "first": game.player1.username,
        "second": game.player2.username,
    }


def preview_text(game: Game, ply: int | None) -> str:
    """A line for a link's preview: where the game stands (and the moment linked to)."""
    if game.status == Game.Status.ACTIVE:
        where = ngettext(
            "Being played: %(moves)s move so far.",
            "Being played: %(moves)s moves so far.",
            game.ply,
        ) % {"moves": game.ply}
    elif game.status == Game.Status.ABORTED:
        where = _("Aborted.")
    elif game.winner is None:
        where = _("A draw: %(reason)s.") % {"reason": game.reason}
    else:
        winner = (game.player1 if game.winner == 1 else game.player2).username
        where = _("%(winner)s won: %(reason)s.") % {"winner": winner, "reason": game.reason}
    if ply is None:
        return where
    return _("After move %(ply)s of %(moves)s. %(where)s") % {
        "ply": ply,
        "moves": game.ply,
        "where": where,
    }


def title_for(slug: str, options: dict[str, Any]) -> str:
    """A game's display name with its options (ZigZag (pits 8, seeds 7)), in the active
    language."""
    names = {g["slug"]: g.get("name", g["slug"]) for g in available_games()}
    return messages.game_title(names.get(slug, slug), options)


def time_label(control: clocks.TimeControl) -> str:
    """A time control as people read it, in the active language ("5+3 (real time)", "3 days
    per move", "untimed"). The frames carry `control.label`, the same for every reader."""
    if control.realtime:
        return _("%(code)s (real time)") % {"code": control.code}
    if control.correspondence:
        return ngettext("%(days)s day per move", "%(days)s days per move", control.days) % {
            "days": control.days
        }
    return _("untimed")


# --- vacations -------------------------------------------------------------------------------


def vacation_days_used(user: Any, now: datetime) -> float:
    """Whole days of vacation taken (or booked) in the 365 days up to `now`. A vacation ended
    early counts the whole days it ran: the part of a day not completed is given back with
    the days not taken (booked and ended at once, it costs nothing)."""
    window = now - timedelta(days=365)
    used = 0.0
    for vacation in Vacation.objects.filter(user=user, ends_at__gt=window):
        start = max(vacation.starts_at, window)
        days = (vacation.ends_at - start).total_seconds() / 86400
        used += max(0, math.floor(days + 1e-6))  # 1e-6 day: a clock's rounding, not a day
    return used


def current_vacation(user: Any) -> Vacation | None:
    return (
        Vacation.objects.filter(user=user, ends_at__gt=timezone.now()).order_by("-ends_at").first()
    )


def vacation_info(user: Any) -> dict[str, Any]:
    """What the profile and GET /api/vacation show."""
    now = timezone.now()
    current = current_vacation(user)
    used = vacation_days_used(user, now)
    return {
        "until": current.ends_at.isoformat() if current else None,
        "days_used": round(used, 1),
        "days_left": max(0, int(settings.VACATION_DAYS - used + 1e-9)),
        "allowance": settings.VACATION_DAYS,
    }


# --- The game database (games/search.py) --------------------------------------------------

# The columns a list of finished games shows: not the state, clock or queues of each row.
LISTED = (
    "slug",
    "options",
    "player1",
    "player2",
    "status",
    "winner",
    "termination",
    "reason",
    "ply",
    "rated",
    "time_control",
    "ended_at",
    "updated_at",
)


def games_by_id(ids: list[int]) -> dict[int, Game]:
    """The games of a page of search results, their players loaded."""
    return {
        game.pk: game
        for game in Game.objects.filter(pk__in=ids)
        .select_related("player1", "player2")
        .only(*LISTED, *(f"player{n}__{f}" for n in (1, 2) for f in PLAYER_FIELDS))
    }


PLAYER_FIELDS = ("username", "is_guest", "is_bot", "bot_since")


def finished_game_info(game: Game) -> dict[str, Any]:
    """A finished game as the game database lists it (docs/API.md)."""
    return {
        "id": game.pk,
        "slug": game.slug,
        "name": title_for(game.slug, game.options),
        "options": game.options,
        "players": {"1": player_info(game.player1), "2": player_info(game.player2)},
        "status": game.status,
        "ply": game.ply,
        "rated": game.rated,
        "speed": game.time_control.kind,
        "time_control": game.time_control.code,
        "result": {
            "winner": game.winner,
            "termination": game.termination,
            "reason": translate(game.reason),
        },
        "ended_at": game.ended_at.isoformat() if game.ended_at else None,
        "updated_at": game.updated_at.isoformat(),
    }


def export_page(query: Any, cursor: str | None, kind: str) -> tuple[str, str | None]:
    """One page of a search's games as game records (kind "json": one JSON object a line;
    "txt": the text form, a blank line between games), and where the next page starts."""
    import json

    from games.search import MAX_LIMIT, search

    page = search(query, cursor, MAX_LIMIT)
    games = Game.objects.filter(pk__in=[found.game_id for found in page.games]).select_related(
        "player1", "player2"
    )
    by_id = {game.pk: game for game in games}
    parts = []
    for found in page.games:
        game = by_id[found.game_id]
        if kind == "json":
            parts.append(json.dumps(game_record(game), separators=(",", ":")) + "\n")
        else:
            parts.append(game_text(game) + "\n\n")
    return "".join(parts), page.next
