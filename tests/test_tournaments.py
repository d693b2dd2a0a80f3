"""Tournaments through their services: created, joined, started and ended on time by the
sweeper's tick, paired (arena waves, Swiss and round-robin rounds), results counted once, and
the pages' socket and the HTTP API. The pairing rules themselves: tests/test_pairing_*.py."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from follows.models import Follow
from games import services as game_services
from games.models import Game
from lobby.models import LobbyVersion
from lobby.services import seeks
from realtime.errors import ServiceError
from realtime.protocol import encode
from tests.games_helpers import make_user, session_for
from tests.wsutil import connected, receive
from tournaments.models import Entry, Pairing, Schedule, Tournament
from tournaments.services import clock, creation, entries, publish, results, rounds

# A result is counted when the game's transaction commits (games.lifecycle), as in production.
pytestmark = pytest.mark.django_db(transaction=True)


def players(count: int, prefix: str = "p") -> list[User]:
    return [make_user(f"{prefix}{n}") for n in range(1, count + 1)]


def arena(creator: User, **fields: Any) -> Tournament:
    return creation.create_tournament(
        creator=creator,
        kind="arena",
        slug="diffusion",
        time_control="3+2",
        minutes=30,
        **fields,
    )


def started(tournament: Tournament) -> Tournament:
    """Its start time comes: the sweeper's tick starts it."""
    Tournament.objects.filter(pk=tournament.pk).update(starts_at=timezone.now())
    clock.tick()
    return Tournament.objects.get(pk=tournament.pk)


def in_play(tournament: Tournament) -> list[Pairing]:
    return list(
        Pairing.objects.filter(tournament=tournament, result="").select_related("first", "second")
    )


def win(pairing: Pairing, winner: User) -> None:
    """The loser resigns."""
    loser = pairing.second if winner.pk == pairing.first_id else pairing.first
    game_services.resign(game_id=pairing.game_id, user=loser)


def entry(tournament: Tournament, user: User) -> Entry:
    return Entry.objects.get(tournament=tournament, user=user)


# --- creating ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"kind": "ladder"}, "invalid_tournament"),
        ({"slug": "chess"}, "invalid_options"),
        ({"options": {"pits": 7}}, "invalid_options"),
        ({"time_control": "3d"}, "invalid_time_control"),  # an arena is real time
        ({"time_control": "soon"}, "invalid_time_control"),
        ({"minutes": 5}, "invalid_tournament"),
        ({"minutes": "30"}, "invalid_tournament"),
        ({"max_players": 1}, "invalid_tournament"),
        ({"starts_in_minutes": -1}, "invalid_tournament"),
        ({"kind": "swiss", "rounds": 2}, "invalid_tournament"),
        ({"kind": "swiss", "rounds": None}, "invalid_tournament"),
        ({"kind": "swiss", "rounds": 5, "time_control": ""}, "invalid_time_control"),
        ({"kind": "round_robin", "max_players": 31}, "invalid_tournament"),
    ],
)
def test_a_tournament_the_site_cannot_run_is_refused_and_nothing_is_made(
    fields: dict[str, Any], code: str
) -> None:
    creator = make_user("maker")
    asked: dict[str, Any] = {
        "kind": "arena",
        "slug": "diffusion",
        "time_control": "3+2",
        "minutes": 30,
        **fields,
    }
    with pytest.raises(ServiceError) as caught:
        creation.create_tournament(creator=creator, **asked)
    assert caught.value.code == code and caught.value.message
    assert not Tournament.objects.exists()


def test_a_creator_may_have_three_tournaments_waiting_at_once() -> None:
    creator = make_user("maker")
    for _ in range(creation.MAX_OPEN_PER_CREATOR):
        arena(creator)
    with pytest.raises(ServiceError) as caught:
        arena(creator)
    assert caught.value.code == "too_many_tournaments"
    assert Tournament.objects.count() == creation.MAX_OPEN_PER_CREATOR
    guest = User.objects.create_user(username="Guest-1", password=None, is_guest=True)
    with pytest.raises(ServiceError) as caught:
        arena(guest)  # rated
    assert caught.value.code == "guests_play_casual"
    assert arena(guest, rated=False).creator == guest


# --- joining ---------------------------------------------------------------------------------


def test_joining_and_withdrawing_refuse_what_cannot_be_done() -> None:
    creator, alice, bob = players(3)
    tournament = arena(creator, max_players=2)
    entries.join(user=alice, tournament_id=tournament.pk)
    refusals = [
        (lambda: entries.join(user=alice, tournament_id=tournament.pk), "already_joined"),
        (lambda: entries.join(user=bob, tournament_id=999_999), "no_such_tournament"),
        (lambda: entries.join(user=bob, tournament_id="1"), "bad_message"),
        (lambda: entries.withdraw(user=bob, tournament_id=tournament.pk), "not_joined"),
    ]
    for call, code in refusals:
        with pytest.raises(ServiceError) as caught:
            call()
        assert caught.value.code == code, code
    entries.join(user=bob, tournament_id=tournament.pk)
    with pytest.raises(ServiceError) as caught:
        entries.join(user=creator, tournament_id=tournament.pk)
    assert caught.value.code == "tournament_full"
    # Before the start, withdrawing frees the place.
    entries.withdraw(user=bob, tournament_id=tournament.pk)
    entries.join(user=creator, tournament_id=tournament.pk)
    assert set(Entry.objects.values_list("user__username", flat=True)) == {"p1", "p2"}


def test_a_rated_tournament_takes_no_guest_and_an_invitation_needs_its_token() -> None:
    creator, alice = players(2)
    guest = User.objects.create_user(username="Guest-2", password=None, is_guest=True)
    rated = arena(creator)
    with pytest.raises(ServiceError) as caught:
        entries.join(user=guest, tournament_id=rated.pk)
    assert caught.value.code == "guests_play_casual"
    private = arena(creator, invite_only=True, rated=False)
    assert private.invite_token
    with pytest.raises(ServiceError) as caught:
        entries.join(user=alice, tournament_id=private.pk, token="guess")
    assert caught.value.code == "not_invited"
    entries.join(user=alice, tournament_id=private.pk, token=private.invite_token)
    entries.join(user=guest, tournament_id=private.pk, token=private.invite_token)
    assert Entry.objects.filter(tournament=private).count() == 2


def test_a_swiss_nobody_joined_is_cancelled_but_an_empty_arena_starts_and_waits() -> None:
    creator, alice, bob = players(3)
    swiss = creation.create_tournament(
        creator=creator, kind="swiss", slug="diffusion", time_control="1d", rounds=3
    )
    entries.join(user=alice, tournament_id=swiss.pk)
    swiss = started(swiss)
    assert swiss.status == Tournament.Status.CANCELLED
    with pytest.raises(ServiceError) as caught:
        entries.join(user=creator, tournament_id=swiss.pk)
    assert caught.value.code == "tournament_over"
    empty = started(arena(creator))
    assert empty.status == Tournament.Status.RUNNING
    for player in (alice, bob):  # joined late, paired as they come
        entries.join(user=player, tournament_id=empty.pk)
    clock.tick()
    assert len(in_play(empty)) == 1


# --- arena -----------------------------------------------------------------------------------


def test_an_arena_pairs_everyone_at_its_start_and_again_as_games_end() -> None:
    creator, *field = players(6)
    tournament = arena(creator)
    for player in field[:4]:
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    assert tournament.status == Tournament.Status.RUNNING
    assert tournament.ends_at is not None
    first_wave = in_play(tournament)
    assert len(first_wave) == 2
    games = Game.objects.filter(pk__in=[p.game_id for p in first_wave])
    assert all(g.rated and g.time_control.code == "3+2" for g in games)
    # One game ends: it is counted at once; its players wait for the next wave.
    win(first_wave[0], first_wave[0].first)
    counted = Pairing.objects.get(pk=first_wave[0].pk)
    assert (counted.result, counted.first_points, counted.second_points) == ("1", 2, 0)
    assert entry(tournament, first_wave[0].first).points == 2
    # The other game ends too: four are free, and nobody meets their last opponent.
    win(first_wave[1], first_wave[1].second)
    clock.tick()
    second_wave = in_play(tournament)
    assert len(second_wave) == 2
    before = {frozenset((p.first_id, p.second_id)) for p in first_wave}
    assert not before & {frozenset((p.first_id, p.second_id)) for p in second_wave}
    # A late joiner is paired in the next wave.
    entries.join(user=field[4], tournament_id=tournament.pk)
    assert entry(tournament, field[4]).playing is False
    win(second_wave[0], second_wave[0].first)
    clock.tick()
    assert entry(tournament, field[4]).playing is True


def test_an_arena_streak_doubles_the_points_after_two_wins() -> None:
    creator, star, *others = players(5)
    tournament = arena(creator)
    for player in (star, *others):
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    sheet = []
    for _ in range(3):
        mine = next(p for p in in_play(tournament) if star.pk in (p.first_id, p.second_id))
        win(mine, star)
        for other in in_play(tournament):
            win(other, other.first)  # everyone else's games end too: the next wave pairs all
        clock.tick()
        sheet.append(entry(tournament, star).points)
    assert sheet == [2, 4, 8]  # the third win, on fire, scores 4
    assert entry(tournament, star).sheet == "224"


def test_an_arena_ends_on_time_and_a_game_finished_after_does_not_count() -> None:
    creator, alice, bob = players(3)
    tournament = arena(creator)
    for player in (alice, bob):
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    (pairing,) = in_play(tournament)
    Tournament.objects.filter(pk=tournament.pk).update(ends_at=timezone.now())
    clock.tick()
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    win(pairing, pairing.first)
    assert Pairing.objects.get(pk=pairing.pk).result == "void"
    assert entry(tournament, pairing.first).points == 0
    assert not Entry.objects.filter(tournament=tournament, playing=True).exists()


def test_an_arena_player_who_never_moves_is_paused_and_may_come_back() -> None:
    creator, alice, bob, carol = players(4)
    tournament = arena(creator)
    for player in (alice, bob, carol):
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    (pairing,) = in_play(tournament)
    # The first player never moves: the clock aborts the game (as the sweeper would).
    game_services.abort(game_id=pairing.game_id, user=pairing.second)
    counted = Pairing.objects.get(pk=pairing.pk)
    assert counted.result == "void"
    assert entry(tournament, pairing.first).withdrawn is True
    assert entry(tournament, pairing.second).withdrawn is False
    clock.tick()  # the two still here are paired; the absent one is not
    (again,) = in_play(tournament)
    assert pairing.first_id not in (again.first_id, again.second_id)
    entries.join(user=pairing.first, tournament_id=tournament.pk)  # back with one click
    assert entry(tournament, pairing.first).withdrawn is False


def test_a_result_is_counted_once_and_the_sweeper_counts_one_nobody_counted() -> None:
    creator, alice, bob = players(3)
    tournament = arena(creator)
    for player in (alice, bob):
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    (pairing,) = in_play(tournament)
    # The game ends but the process that ended it dies before its receiver runs.
    Game.objects.filter(pk=pairing.game_id).update(status=Game.Status.FINISHED, winner=1)
    assert entry(tournament, pairing.first).points == 0
    clock.tick()
    assert entry(tournament, pairing.first).points == 2
    assert results.count(tournament.pk, pairing.game_id) is False  # never twice
    assert entry(tournament, pairing.first).points == 2


def queries_of_an_arena(size: int, prefix: str) -> tuple[int, int]:
    """(the queries of an arena's start with its first wave, those of its second wave), for
    `size` players."""
    creator, *field = players(size + 1, prefix)
    follower = make_user(f"{prefix}fan")  # someone follows the players: they hear of games
    for player in field:
        Follow.objects.create(user=follower, player=player)
    tournament = arena(creator)
    for player in field:
        entries.join(user=player, tournament_id=tournament.pk)
    Tournament.objects.filter(pk=tournament.pk).update(starts_at=timezone.now())
    with CaptureQueriesContext(connection) as start:
        rounds.start(tournament.pk)
    first_wave = in_play(tournament)
    assert len(first_wave) == size // 2
    for pairing in first_wave:
        win(pairing, pairing.first)
    with CaptureQueriesContext(connection) as wave:
        assert rounds.arena_wave(tournament.pk) == size // 2
    return len(start), len(wave)


def test_an_arena_wave_runs_as_many_queries_for_forty_players_as_for_four() -> None:
    LobbyVersion.objects.get_or_create(pk=1)  # the lobby's first event creates it: not a wave's
    assert queries_of_an_arena(40, "big") == queries_of_an_arena(4, "small")


def sends_after_commit(games: list[Game]) -> int:
    """How many after-commit sends announcing these games registers."""
    with transaction.atomic():
        seeks.announce_games(games)
        return len(connection.run_on_commit)


def test_a_waves_games_are_announced_to_their_players_in_one_send_however_many() -> None:
    # From the sweeper each send is a trip to an event loop of its own: a wave of 500 games
    # announced player by player took seconds.
    creator, *field = players(9)
    tournament = arena(creator)
    for player in field:
        entries.join(user=player, tournament_id=tournament.pk)
    started(tournament)
    games = list(Game.objects.filter(tournament_pairing__tournament=tournament))
    assert len(games) == 4
    assert sends_after_commit(games) == sends_after_commit(games[:1])


# --- Swiss and round robin -------------------------------------------------------------------


def play_round(tournament: Tournament) -> None:
    """Every game of the round ends: the first player wins."""
    for pairing in in_play(tournament):
        win(pairing, pairing.first)


def test_a_swiss_plays_its_rounds_with_a_bye_and_no_rematch_then_finishes() -> None:
    creator, *field = players(6)
    tournament = creation.create_tournament(
        creator=creator, kind="swiss", slug="zigzag", time_control="1d", rounds=3
    )
    for player in field:  # five: a bye each round
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    seen: Counter[frozenset[int]] = Counter()
    for round_number in (1, 2, 3):
        tournament.refresh_from_db()
        assert tournament.round == round_number
        pairings = Pairing.objects.filter(tournament=tournament, round=round_number)
        assert sorted(p.result for p in pairings) == ["", "", "bye"]
        for pairing in pairings.exclude(result="bye"):
            seen[frozenset((pairing.first_id, pairing.second_id))] += 1
        play_round(tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    assert max(seen.values()) == 1  # nobody met anyone twice
    byes = Counter(Pairing.objects.filter(result="bye").values_list("first_id", flat=True))
    assert max(byes.values()) == 1  # nobody had two byes
    rows = list(Entry.objects.filter(tournament=tournament))
    assert sum(row.points for row in rows) == 3 * (2 * 2 + 2)  # two games and a bye a round
    assert tournament.winner_id == max(rows, key=lambda r: (r.points, r.tiebreak)).user_id
    assert any(row.tiebreak for row in rows)  # Buchholz


def queries_of_a_swiss_round(size: int, prefix: str) -> int:
    """The queries of the result that completes a Swiss's first round and pairs the second,
    for `size` players."""
    creator, *field = players(size + 1, prefix)
    tournament = creation.create_tournament(
        creator=creator, kind="swiss", slug="zigzag", time_control="1d", rounds=3
    )
    for player in field:
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    *others, last = in_play(tournament)
    for pairing in others:
        win(pairing, pairing.first)
    with CaptureQueriesContext(connection) as queries:
        win(last, last.first)
    assert Tournament.objects.get(pk=tournament.pk).round == 2
    return len(queries)


def test_a_swiss_round_is_paired_with_as_many_queries_for_forty_players_as_for_four() -> None:
    assert queries_of_a_swiss_round(40, "big") == queries_of_a_swiss_round(4, "small")


def test_a_double_round_robin_meets_every_pair_once_with_each_colour() -> None:
    creator, *field = players(4)
    tournament = creation.create_tournament(
        creator=creator, kind="round_robin", slug="diffusion", time_control="2d", double=True
    )
    for player in field:
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    assert tournament.rounds == 6  # three players: three rounds a cycle, one sits out each
    with pytest.raises(ServiceError) as caught:
        entries.join(user=creator, tournament_id=tournament.pk)
    assert caught.value.code == "tournament_started"
    for _ in range(6):
        play_round(tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    colours = Counter(Pairing.objects.exclude(result="bye").values_list("first_id", "second_id"))
    pairs = {frozenset(p) for p in colours}
    # Each player sits out once a cycle: a bye row without points.
    sat_out = Counter(Pairing.objects.filter(result="bye").values_list("first_id", "first_points"))
    assert sat_out == {(user.pk, 0): 2 for user in field}
    assert len(pairs) == 3 and all(count == 1 for count in colours.values())
    assert all((b, a) in colours for a, b in colours)  # each pair, once with each colour
    # Everyone won their games as the first player: two wins and two losses each.
    assert sorted(Entry.objects.values_list("points", flat=True)) == [4, 4, 4]
    assert tournament.winner_id is not None


# --- schedules -------------------------------------------------------------------------------


def test_a_schedule_lists_its_next_tournament_an_hour_ahead_once() -> None:
    soon = timezone.now() + timedelta(minutes=30)
    schedule = Schedule.objects.create(
        name="Hourly ZigZag arena",
        kind="arena",
        slug="zigzag",
        time_control="3+0",
        minutes=30,
        every_minutes=60,
        next_at=soon,
    )
    clock.tick()
    clock.tick()
    made = Tournament.objects.get(schedule=schedule)
    assert (made.name, made.starts_at, made.creator) == ("Hourly ZigZag arena", soon, None)
    schedule.refresh_from_db()
    assert schedule.next_at == soon + timedelta(hours=1)


# --- the doors: the socket and HTTP -----------------------------------------------------------


async def test_a_tournament_page_gets_its_snapshot_then_each_change() -> None:
    creator, alice = await database_sync_to_async(players)(2)
    tournament = await database_sync_to_async(arena)(creator)
    client = await connected(f"/ws/tournaments/{tournament.pk}/")
    try:
        snapshot = await receive(client)
        assert snapshot["type"] == "tournament" and snapshot["tournament"]["players"] == 0
        await database_sync_to_async(entries.join)(user=alice, tournament_id=tournament.pk)
        update = await receive(client)
        assert update["type"] == "tournament_update"
        assert update["v"] == snapshot["v"] + 1 and update["players"] == 1
        assert [row["name"] for row in update["standings"]] == ["p2"]
        await client.send_json_to({"type": "sync"})
        again = await receive(client)
        assert again["type"] == "tournament" and again["v"] == update["v"]
    finally:
        await client.disconnect()
    missing = await connected("/ws/tournaments/999999/")
    error = await receive(missing)
    assert error["code"] == "no_such_tournament"
    await missing.disconnect()


async def test_a_tournament_page_gets_updates_in_version_order_and_each_once() -> None:
    # Two processes that counted results a moment apart send their updates in either order.
    (creator,) = await database_sync_to_async(players)(1)
    tournament = await database_sync_to_async(arena)(creator)
    client = await connected(f"/ws/tournaments/{tournament.pk}/")
    layer = get_channel_layer()

    async def update(version: int) -> dict[str, Any]:
        frame = await database_sync_to_async(publish.update_frame)(
            tournament.pk, version, set(), []
        )
        return {"type": "tournament.update", "v": version, "text": encode(frame)}

    try:
        v = (await receive(client))["v"]
        for version in (v + 2, v, v + 1):  # swapped, and one the snapshot holds already
            await layer.group_send(publish.group(tournament.pk), await update(version))
        assert [(await receive(client))["v"] for _ in range(2)] == [v + 1, v + 2]
        assert await client.receive_nothing(timeout=0.2)
    finally:
        await client.disconnect()


def test_the_http_api_creates_joins_and_withdraws_with_documented_errors() -> None:
    alice = make_user("alice")
    client = Client()
    client.cookies["sessionid"] = session_for(alice)
    made = client.post(
        "/api/tournaments",
        json.dumps({"kind": "swiss", "slug": "diffusion", "time_control": "5+3", "rounds": 5}),
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    tournament_id = made.json()["tournament_id"]
    form = client.post(f"/api/tournaments/{tournament_id}/join", {"token": ""})
    assert (form.status_code, form.json()["error"]["code"]) == (400, "bad_request")
    join = f"/api/tournaments/{tournament_id}/join"
    assert client.post(join, "{}", content_type="application/json").json() == {"joined": True}
    again = client.post(join, content_type="application/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "already_joined")
    listed = client.get("/api/tournaments").json()
    assert [t["id"] for t in listed["upcoming"]] == [tournament_id]
    one = client.get(f"/api/tournaments/{tournament_id}").json()
    assert one["joined"] is True and one["tournament"]["kind"] == "swiss"
    assert client.post(f"/api/tournaments/{tournament_id}/withdraw").json() == {"joined": False}
    bad = client.post("/api/tournaments", "{", content_type="application/json")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "bad_json")
    missing = client.get("/api/tournaments/999999")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "no_such_tournament")
    visitor = Client().post(join, content_type="application/json")
    assert (visitor.status_code, visitor.json()["error"]["code"]) == (403, "not_logged_in")
    page = client.get(f"/tournaments/{tournament_id}/")
    assert page.status_code == 200 and b"Swiss" in page.content
    assert client.get("/tournaments/").status_code == 200


def test_the_list_gives_an_upcoming_tournaments_start_as_a_day_an_hour_and_utc() -> None:
    tournament = arena(players(1)[0])
    page = Client().get("/tournaments/").content.decode()
    # The day and the hour were glued together ("2026-11-2705:37").
    starts = tournament.starts_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    assert f">{starts}</time>" in page


def test_a_tournament_games_page_links_to_its_tournament_and_another_games_page_does_not(
    django_assert_num_queries: Any,
) -> None:
    creator, alice, bob = players(3)
    tournament = arena(creator, name="Friday arena", rated=False)
    for player in (alice, bob):
        entries.join(user=player, tournament_id=tournament.pk)
    pairing = in_play(started(tournament))[0]
    page = Client().get(f"/games/{pairing.game_id}/").content.decode()
    assert (
        f'<a class="tournament-link" id="tournament-link" href="/tournaments/{tournament.pk}/">'
        "Tournament: Friday arena</a>"
    ) in page
    ordinary = game_services.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
    visitor = Client()
    visitor.get(f"/games/{ordinary.pk}/")  # the session and the site's first reads, once
    # The link costs an ordinary game's page one indexed lookup: the game's own read is
    # the other.
    with django_assert_num_queries(2):
        page = visitor.get(f"/games/{ordinary.pk}/").content.decode()
    assert "tournament-link" not in page


def test_a_closed_account_leaves_its_tournaments_and_a_profile_lists_them() -> None:
    from privacy.closure import close_account

    creator, alice, bob, carol = players(4)
    waiting, running = arena(creator), arena(creator, rated=False)
    for player in (alice, bob, carol):
        entries.join(user=player, tournament_id=waiting.pk)
        entries.join(user=player, tournament_id=running.pk)
    running = started(running)
    profile = Client().get(f"/@{alice.username}/")
    assert profile.status_code == 200
    assert f'data-tournament-id="{running.pk}"'.encode() in profile.content
    close_account(user=alice, reason="test")
    assert not Entry.objects.filter(tournament=waiting, user=alice).exists()
    assert Entry.objects.get(tournament=running, user=alice).withdrawn is True
