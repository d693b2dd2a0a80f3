from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from games.fields import TimeControlField


class Game(models.Model):
    """One game between two players; `state` is the engine's JSON after `ply` moves."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        FINISHED = "finished"
        ABORTED = "aborted"

    class Termination(models.TextChoices):
        RULES = "rules"  # the engine's outcome: an empty block, a stranded king, ...
        RESIGNATION = "resignation"
        ABORT = "abort"
        TIME = "time"  # the running player's clock ran out (games/clocks.py)
        ABANDON = "abandon"  # a real-time player left and the opponent claimed the win
        AGREEMENT = "agreement"  # both players agreed to a draw
        FORFEIT = "forfeit"  # a correspondence player did not move for FORFEIT_DAYS

    slug = models.CharField(max_length=40)
    options = models.JSONField(default=dict, blank=True)
    player1 = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="games_as_player1"
    )
    player2 = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="games_as_player2"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # None with a termination = a draw; None without one = no result yet.
    winner = models.PositiveSmallIntegerField(null=True, blank=True)
    termination = models.CharField(max_length=12, choices=Termination.choices, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    state = models.JSONField()
    ply = models.PositiveIntegerField(default=0)
    # Player 1 moves first in every game: once player 2 has moved, both have, and the game
    # can no longer be aborted (only resigned).
    both_moved = models.BooleanField(default=False)
    # One step per broadcast event; clients that miss one resync from GameEvent.
    version = models.PositiveIntegerField(default=0)
    # Which players asked for a rematch ([1], [2]); the rematch game once both have.
    rematch_offers = models.JSONField(default=list, blank=True)
    # Time: the control ("" untimed, "5+3", "3d"), the clock (games/clocks.py; null when
    # untimed) and when the running side runs out, for the sweeper (found through the index
    # of active games: an index on it would make every timed move rewrite the row's index
    # entries, see Meta).
    time_control = TimeControlField()
    clock = models.JSONField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    # Real-time players whose last socket closed: {"1": epoch ms when they left}.
    away = models.JSONField(default=dict, blank=True)
    # Rated games change the players' ratings when they end (ratings/); casual ones do not.
    rated = models.BooleanField(default=False)
    # Whether a player is the computer (User.is_bot, which never changes for an account):
    # the bots worker looks for its games ten times a second, through the partial index
    # below, however many other games are going.
    against_computer = models.BooleanField(default=False, db_default=False)
    # A finished game a moderator annulled (moderation/): it counts for no rating.
    annulled = models.BooleanField(default=False, db_default=False)
    # Offers waiting for the opponent's answer: {"takeback": 1, "draw": 2} (the offering
    # player). A move withdraws every offer (it was made for the position before it).
    offers = models.JSONField(default=dict, blank=True)
    # Conditional moves a correspondence player queued (pbmserv's `queue`), seen by nobody
    # else: {"2": ["X", "Y", "Z", "W"]}: if the opponent plays X, answer Y; then Z, W...
    queues = models.JSONField(default=dict, blank=True)
    # Players who muted their opponent's chat in this game ([1], [2], [1, 2]).
    chat_muted = models.JSONField(default=list, blank=True)
    # The last move (or the start), and the last "you have not moved" reminder: long
    # correspondence and untimed games are reminded and forfeited from these.
    moved_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    rematch = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rematch_of"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # When the game ended (finished or aborted): set once, for the lists of finished games.
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # No index names a column a move changes (ply, state, clock, deadline, moved_at,
        # updated_at, version...): PostgreSQL then rewrites a move's row in place on its page
        # ("HOT"), touching none of the indexes, where any such index made every move insert
        # an entry into each of the table's eight (tests/test_move_races.py holds this).
        # Active games are found through their partial index and sorted or filtered on the
        # row: there are few of them beside the finished ones.
        indexes = [
            models.Index(fields=["id"], condition=models.Q(status="active"), name="games_active"),
            models.Index(
                fields=["-ended_at"],
                condition=models.Q(ended_at__isnull=False),
                name="games_ended",
            ),
            models.Index(
                fields=["id"],
                condition=models.Q(status="active", against_computer=True),
                name="games_active_vs_computer",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(winner__isnull=True) | models.Q(winner__in=[1, 2]),
                name="games_game_winner_is_a_player",
            ),
            models.CheckConstraint(
                condition=~models.Q(player1=models.F("player2")),
                name="games_game_two_different_players",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.slug} #{self.pk}"

    def result(self) -> dict[str, Any] | None:
        """How the game ended (None while it goes on), as every event and snapshot says it."""
        if self.status == Game.Status.ACTIVE:
            return None
        return {"winner": self.winner, "termination": self.termination, "reason": self.reason}

    @property
    def abortable(self) -> bool:
        """Whether a player may still abort (rather than resign) the game."""
        return self.status == Game.Status.ACTIVE and not self.both_moved

    def player_number(self, user: Any) -> int | None:
        """1 or 2 for the game's players, None for everyone else."""
        if user is None or not getattr(user, "is_authenticated", False):
            return None
        if user.pk == self.player1_id:
            return 1
        if user.pk == self.player2_id:
            return 2
        return None


class GameEvent(models.Model):
    """Every versioned broadcast of a game, kept so a client that missed one can catch up.

    A `move` event is also the record of the move: its payload holds the player, the move
    as played and the state it produced, and `ply` (the moves played before it) is set on
    move events only. One row per move keeps a move to one insert.
    """

    # No index of its own: the unique (game, version) below serves every lookup by game.
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events", db_index=False)
    version = models.PositiveIntegerField()
    ply = models.PositiveIntegerField(
        null=True, blank=True, help_text="move events: the moves played before this one"
    )
    payload = models.JSONField()
    # A move taken back by consent: its event stays (history is never rewritten), but it is
    # no longer part of the game's moves, and the ply may be played again.
    undone = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "version"]
        constraints = [
            models.UniqueConstraint(fields=["game", "version"], name="games_event_one_per_version"),
            # The backstop of "one writer per game": two processes can never both store ply n.
            models.UniqueConstraint(
                fields=["game", "ply"],
                condition=models.Q(undone=False),
                name="games_move_one_per_ply",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.game_id} v{self.version} {self.payload.get('type')}"


class MoveNotice(models.Model):
    """A "your move" e-mail to send (correspondence): written in the move's transaction,
    sent by the sweeper, so a slow mail server never holds up a move."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="+")
    player = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "player"], name="games_notice_one_pending"),
        ]

    def __str__(self) -> str:
        return f"notice {self.game_id}:{self.player}"


class GameConnection(models.Model):
    """An open websocket on a game: who is watching, across every server process."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="connections")
    channel_name = models.CharField(max_length=200, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE
    )
    player = models.PositiveSmallIntegerField(null=True, blank=True)
    # The client's address as the server sees it (behind a proxy, from X-Forwarded-For).
    address = models.CharField(max_length=64, blank=True, default="", db_index=True)
    # The server process holding the socket, and when it last vouched for it
    # (realtime/presence.py removes rows of processes that died).
    server = models.CharField(max_length=80, blank=True, db_index=True)
    seen_at = models.DateTimeField(default=timezone.now, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["game", "player"])]

    def __str__(self) -> str:
        return f"{self.game_id} {self.channel_name}"


class ChatLine(models.Model):
    """One line of a game's chat: the players' room or the spectators' room."""

    class Room(models.TextChoices):
        PLAYERS = "players"
        SPECTATORS = "spectators"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="chat")
    room = models.CharField(max_length=10, choices=Room.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.CharField(max_length=140)
    created_at = models.DateTimeField(auto_now_add=True)
    # Removed by a moderator: kept for the audit log and the report, shown to nobody.
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["game", "room", "id"])]

    def __str__(self) -> str:
        return f"{self.game_id} {self.room} {self.user_id}: {self.text[:20]}"


class Vacation(models.Model):
    """A player's time away: the clocks of their correspondence games stand still from
    `starts_at` to `ends_at` (moved earlier when they come back sooner)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["user", "ends_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gte=models.F("starts_at")),
                name="games_vacation_ends_after_it_starts",
            ),
        ]

    def __str__(self) -> str:
        return f"vacation of {self.user_id} until {self.ends_at:%Y-%m-%d}"


class PlayedGame(models.Model):
    """The game database's index (games/search.py): one row for each player of a finished
    game, written in the transaction that ends it (games/services/records.py).

    Narrow, so that a search reads these rows and not the games' wide ones (the state, the
    clock); one row for each seat, so that a player's games are one range of one index
    whichever side they played. The rows of seat 1 stand for the games themselves in a
    search that names no player (partial indexes). Every index ends with the search's order,
    newest first (games/search.py: keyset pages, no OFFSET)."""

    class Result(models.TextChoices):
        WIN = "win"
        DRAW = "draw"
        LOSS = "loss"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="+", db_index=False)
    seat = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    opponent = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    slug = models.CharField(max_length=40)
    # The option set as "name=value,..." sorted by name ("" for a game without options).
    options = models.CharField(max_length=100, blank=True, default="")
    rated = models.BooleanField()
    # The time control's kind: realtime, correspondence or untimed (games/clocks.py).
    speed = models.CharField(max_length=16)
    # For `user`: won, drew or lost.
    result = models.CharField(max_length=4, choices=Result.choices)
    termination = models.CharField(max_length=12, choices=Game.Termination.choices)
    ended_at = models.DateTimeField()
    plies = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["user", "-ended_at", "-game"], name="played_by_user"),
            models.Index(
                fields=["user", "opponent", "-ended_at", "-game"], name="played_by_user_vs"
            ),
            models.Index(fields=["user", "slug", "-ended_at", "-game"], name="played_by_user_game"),
            models.Index(
                fields=["-ended_at", "-game"], condition=models.Q(seat=1), name="played_all"
            ),
            models.Index(
                fields=["slug", "-ended_at", "-game"],
                condition=models.Q(seat=1),
                name="played_by_game",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["game", "seat"], name="played_one_per_seat"),
        ]

    def __str__(self) -> str:
        return f"{self.game_id}:{self.seat} {self.result}"


class PlayedMoves(models.Model):
    """The moves of a finished game in one narrow row, written with its PlayedGame rows: the
    opening explorer (analysis/explorer.py) reads a game's line here, not from its move
    events (each of which holds a whole position).

    `explored` says whether the explorer has counted the game: it is set in the transaction
    that adds the game's counts, so a game is counted once even when a process dies between
    the two; the partial index finds the ones still to count (`python manage.py explorer`)."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, primary_key=True, related_name="+")
    # The moves in order, as their events record them, separated by spaces (no move of any
    # of the games has one).
    moves = models.TextField()
    explored = models.BooleanField(default=False, db_default=False)

    class Meta:
        indexes = [
            models.Index(
                fields=["game"], condition=models.Q(explored=False), name="played_moves_unexplored"
            ),
        ]

    def __str__(self) -> str:
        return f"moves of {self.game_id}"
