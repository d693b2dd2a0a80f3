"""A move reads the game without a lock and writes it only if the row is still as read: a write
that lands in between (another process, another door) makes the move start again from the new
row, so nothing either of them did is lost; after RACES lost races the move locks the row."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from games import selectors, services
from games.engine import rules_for
from games.models import Game, GameEvent, MoveNotice
from games.services import moves
from tests.games_helpers import new_game

# Threads with their own connections see only committed rows.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    # SQLite serialises writers where PostgreSQL locks rows: `make run`'s races are its own.
    pytest.mark.both_databases(reason="SQLite's locking is not PostgreSQL's"),
]


def elsewhere(write: Callable[[], Any]) -> None:
    """`write` on another connection (as another server process would), committed."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as error:  # pragma: no cover - shown by the assertion below
            failures.append(error)
        finally:
            connection.close()

    other = threading.Thread(target=run)
    other.start()
    other.join()
    assert not failures, failures


def between_read_and_write(monkeypatch: Any, writes: list[Callable[[], Any]]) -> list[int]:
    """Run the next of `writes` each time a move has read the game and computed itself, before
    it writes; returns the list the plies it computed from are appended to."""
    computed_at: list[int] = []
    play = moves._play

    def racing(game: Game, *args: Any, **kwargs: Any) -> Any:
        computed_at.append(game.ply)
        if writes:
            elsewhere(writes.pop(0))
        return play(game, *args, **kwargs)

    monkeypatch.setattr(moves, "_play", racing)
    return computed_at


def versions(game: Game) -> list[int]:
    return list(
        GameEvent.objects.filter(game=game).order_by("version").values_list("version", flat=True)
    )


def first_legal(game: Game) -> str:
    game.refresh_from_db()
    rules = rules_for(game.slug, game.options)
    return sorted(rules.legal_moves(rules.from_json(game.state)))[0]


def test_a_queue_set_while_the_move_is_computed_is_not_lost_and_answers_it(
    monkeypatch: Any,
) -> None:
    game = new_game()  # untimed: conditional moves are allowed
    alice, bob = game.player1, game.player2
    services.play_move(game_id=game.pk, user=alice, move="I", ply=0)
    game.refresh_from_db()
    rules = rules_for(game.slug, game.options)
    after_a = rules.play(rules.from_json(game.state), "A")
    answer = sorted(rules.legal_moves(after_a))[0]
    # Bob is to move (A); Alice queues her answer to A while Bob's move is being computed.
    computed_at = between_read_and_write(
        monkeypatch,
        [lambda: services.set_queue(game_id=game.pk, user=alice, moves=["A", answer])],
    )

    services.play_move(game_id=game.pk, user=bob, move="A", ply=1)

    game.refresh_from_db()
    assert computed_at == [1, 1]  # lost the race once, computed again from the new row
    assert selectors.played(game)[-2:] == [(2, "A"), (1, answer)]
    assert game.queues == {}
    assert versions(game) == [1, 2, 3]


def test_a_draw_offered_while_the_move_is_computed_gets_its_version_and_the_move_the_next(
    monkeypatch: Any,
) -> None:
    game = new_game("zigzag", {"pits": 4, "seeds": 3})
    alice, bob = game.player1, game.player2
    move = first_legal(game)
    computed_at = between_read_and_write(
        monkeypatch, [lambda: services.offer_draw(game_id=game.pk, user=bob)]
    )

    applied = services.play_move(game_id=game.pk, user=alice, move=move, ply=0)

    game.refresh_from_db()
    assert computed_at == [0, 0]
    assert applied.version == 2  # the offer is v1
    kinds = [
        event.payload["type"] for event in GameEvent.objects.filter(game=game).order_by("version")
    ]
    assert kinds == ["draw_offer", "move"]
    assert game.offers == {}  # the move withdrew the offer made before it
    assert game.ply == 1


def test_after_losing_every_race_the_move_locks_the_row_and_lands(monkeypatch: Any) -> None:
    game = new_game()
    alice = game.player1
    muted = [True, False, True, False, True]
    computed_at = between_read_and_write(
        monkeypatch,
        [
            (lambda mute=mute: services.mute_chat(game_id=game.pk, user=alice, mute=mute))
            for mute in muted[: moves.RACES]
        ],
    )

    services.play_move(game_id=game.pk, user=alice, move="I", ply=0)

    game.refresh_from_db()
    assert computed_at == [0] * (moves.RACES + 1)
    assert game.ply == 1
    assert game.chat_muted == ([1] if muted[moves.RACES - 1] else [])  # the last write kept
    assert selectors.played(game) == [(1, "I")]


def test_a_move_reads_once_and_writes_its_row_event_and_notice_together() -> None:
    """On PostgreSQL the write is one statement (no BEGIN or COMMIT either); on SQLite a
    transaction of three. Either way the row, the event and the notice are all written."""
    game = new_game()  # untimed: the player to move is sent a "your move" notice
    services.play_move(game_id=game.pk, user=game.player1, move=first_legal(game), ply=0)
    bob, move = game.player2, first_legal(game)
    with CaptureQueriesContext(connection) as seen:
        services.play_move(game_id=game.pk, user=bob, move=move, ply=1)
    statements = [query["sql"] for query in seen.captured_queries]
    # SQLite's backend shows its BEGIN and COMMIT among the statements: 1 + 2 + 3.
    expected = 2 if connection.vendor == "postgresql" else 6
    assert len(statements) == expected, statements
    game.refresh_from_db()
    assert game.ply == 2
    assert list(GameEvent.objects.filter(game=game, ply=1).values_list("version", flat=True)) == [
        game.version
    ]
    assert sorted(MoveNotice.objects.filter(game=game).values_list("player", flat=True)) == [1, 2]


def test_a_move_that_lost_the_race_wrote_no_event_or_notice_of_its_first_try(
    monkeypatch: Any,
) -> None:
    game = new_game()
    move = first_legal(game)
    # A chat mute lands between the move's read and its write: the first write matches no row.
    computed_at = between_read_and_write(
        monkeypatch, [lambda: Game.objects.filter(pk=game.pk).update(updated_at=timezone.now())]
    )
    services.play_move(game_id=game.pk, user=game.player1, move=move, ply=0)
    assert computed_at == [0, 0]
    assert versions(game) == sorted(set(versions(game)))
    assert GameEvent.objects.filter(game=game, ply=0).count() == 1
    assert MoveNotice.objects.filter(game=game).count() == 1


def _row_updates() -> tuple[int, int]:
    """games_game's updates and HOT updates so far, as PostgreSQL counts them (this backend's
    pending counts flushed first)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s",
            [Game._meta.db_table],
        )
        upd, hot = cursor.fetchone()
    return int(upd), int(hot)


@pytest.mark.postgres(reason="a HOT update is PostgreSQL's")
def test_on_postgresql_a_timed_move_rewrites_the_game_row_in_place_touching_no_index() -> None:
    """No index of the games names a column a move changes (games/models.py): each move's
    UPDATE is HOT (the row rewritten on its page, no index entry written) even in a timed
    game, whose deadline and clock change with every move."""
    alice, bob = new_game().player1, new_game().player2
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="5+3"
    )
    before = _row_updates()
    for ply, player in zip(range(6), [alice, bob] * 3, strict=False):
        services.play_move(game_id=game.pk, user=player, move=first_legal(game), ply=ply)
    after = _row_updates()
    updates, hot = after[0] - before[0], after[1] - before[1]
    game.refresh_from_db()
    assert game.ply == 6 and game.deadline is not None
    assert updates == 6, updates
    assert hot == updates, (hot, updates)
