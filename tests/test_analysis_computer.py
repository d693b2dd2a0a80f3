"""The computer's view and the game review, searched by the bots worker in its own pool
(bots/searches.py, analysis/reviews.py): a view deepens in rounds and is readable after each,
a user's older requests give way, a review marks the move that threw a game away with the
move the search preferred, and none of it touches the game."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from analysis import reviews, services
from analysis.models import Analysis, Review
from bots.models import SearchJob
from bots.worker import Worker, ticked
from games import services as games
from games.models import Game
from games.rules import get_rules
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db(transaction=True)

# A ZigZag game (4 pits, 3 seeds) in which North, at move 16, could have won at once with A
# and played B instead, letting South win at once with d.
THROWN = ["c", "C", "b", "C", "c", "D", "c", "D", "c", "C", "b", "B", "c", "D", "c", "B", "d"]


@pytest.fixture
def worker(settings: Any) -> Iterator[Worker]:
    settings.COMPUTER_VIEW_MS = (60, 120)
    settings.REVIEW_MS = 500  # 40 ms a position: the suite's time is everyone's
    running = Worker(processes=1, poll=0.02, search_processes=1)
    yield running
    running.close()


def until(worker: Worker, done: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the worker did not finish"
        worker.step()
        time.sleep(0.01)


def thrown_game() -> Game:
    south, north = make_user("south"), make_user("north")
    game = games.create_game(
        slug="zigzag", options={"pits": 4, "seeds": 3}, player1=south, player2=north
    )
    for ply, move in enumerate(THROWN):
        games.play_move(game_id=game.pk, user=(south, north)[ply % 2], move=move, ply=ply)
    return Game.objects.get(pk=game.pk)


def test_the_computer_view_deepens_in_rounds_and_names_a_legal_best_line(worker: Worker) -> None:
    alice = make_user("alice")
    analysis = services.start(user=alice, slug="diffusion", moves="I A")
    job = services.ask_computer(user=alice, analysis=analysis, node=analysis.current)
    seen: list[int] = []

    def progressed() -> bool:
        job.refresh_from_db()
        if job.result is not None and job.rounds not in seen:
            seen.append(job.rounds)
        return job.status == SearchJob.Status.DONE

    until(worker, progressed)
    assert seen[-1] == 2 and job.rounds == 2
    result = job.result
    assert result is not None and 0.0 <= result["win"] <= 1.0 and result["playouts"] > 0
    rules: Any = get_rules("diffusion")
    state = rules.play(rules.play(rules.initial_state(), "I"), "A")
    assert result["best"] in rules.legal_moves(state) and result["line"][0] == result["best"]
    for move in result["line"]:
        state = rules.play(state, move)  # the whole line is playable
    # Anyone with the link reads it over HTTP.
    answer = Client().get(f"/api/analysis/{analysis.key}/eval?node={analysis.current}").json()
    assert answer["search"]["status"] == "done" and answer["search"]["of"] == 2


def test_a_users_older_requests_give_way_to_new_ones(worker: Worker) -> None:
    alice = make_user("alice")
    analysis = services.start(user=alice, slug="diffusion", moves="I A J")
    jobs = [services.ask_computer(user=alice, analysis=analysis, node=n) for n in (0, 1, 2, 3)]
    statuses = [SearchJob.objects.get(pk=job.pk).status for job in jobs]
    assert statuses == ["cancelled", "cancelled", "queued", "queued"]
    browser = Client()
    browser.force_login(alice)
    answer = browser.post(
        f"/api/analysis/{analysis.key}/eval", json.dumps({"node": 9}), "application/json"
    )
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "no_such_node")
    answer = Client().post(
        f"/api/analysis/{analysis.key}/eval", json.dumps({"node": 0}), "application/json"
    )
    assert answer.json()["error"]["code"] == "not_logged_in"


def test_a_review_marks_the_move_that_threw_the_game_and_keeps_the_game_as_it_was(
    worker: Worker,
) -> None:
    game = thrown_game()
    assert game.status == Game.Status.FINISHED and game.winner == 1
    before = (game.state, game.ply, game.version)
    carol = make_user("carol")
    browser = Client()
    browser.force_login(carol)
    asked = browser.post(f"/api/games/{game.pk}/review", "{}", "application/json")
    assert asked.status_code == 202 and asked.json()["review"]["of"] == len(THROWN) + 1
    searched = SearchJob.objects.filter(purpose=reviews.purpose(game.pk))
    until(worker, lambda: not searched.exclude(status="done").exists())
    # The worker's next tick stores the review, before anyone asks for it.
    ticked.send(sender=Worker)
    assert Review.objects.get(game=game).status == Review.Status.DONE
    review = Client().get(f"/api/games/{game.pk}/review").json()["review"]
    plies = review["plies"]
    assert [p["ply"] for p in plies] == list(range(len(THROWN) + 1))
    thrown = plies[16]
    assert (thrown["move"], thrown["player"], thrown["mark"], thrown["best"]) == (
        "B",
        2,
        "blunder",
        "A",
    )
    assert thrown["drop"] >= 0.9 and plies[-1]["win"] == 1.0  # South won
    assert all(0.0 <= p["win"] <= 1.0 for p in plies)
    # Asked again: the same review, not another search.
    again = browser.post(f"/api/games/{game.pk}/review", "{}", "application/json")
    assert again.json()["review"]["status"] == "done"
    assert SearchJob.objects.filter(purpose=reviews.purpose(game.pk)).count() == len(plies)
    game.refresh_from_db()
    assert (game.state, game.ply, game.version) == before
    assert not Analysis.objects.exists()


def test_reviews_are_for_finished_games_one_at_a_time_per_user(worker: Worker) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    running = games.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
    with pytest.raises(Exception) as refused:
        reviews.request(user=alice, game_id=running.pk)
    assert getattr(refused.value, "code", None) == "game_not_over"
    first = thrown_game()
    second = games.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
    games.play_move(game_id=second.pk, user=alice, move="I", ply=0)
    games.resign(game_id=second.pk, user=bob)
    reviews.request(user=alice, game_id=first.pk)
    browser = Client()
    browser.force_login(alice)
    answer = browser.post(f"/api/games/{second.pk}/review", "{}", "application/json")
    assert (answer.status_code, answer.json()["error"]["code"]) == (409, "review_running")
    assert Client().get("/api/games/999999/review").json()["error"]["code"] == "no_such_game"
    assert Client().get(f"/api/games/{second.pk}/review").json() == {"review": None}
    # Read as the HTTP answer reads it while it runs: the reader stores it once its searches
    # are done (not over HTTP each round: the API's rate limit would answer instead).
    until(worker, lambda: getattr(reviews.of_game(first.pk), "status", None) == "done")
    assert Client().get(f"/api/games/{first.pk}/review").json()["review"]["status"] == "done"
    answer = browser.post(f"/api/games/{second.pk}/review", "{}", "application/json")
    assert answer.status_code == 202


def test_a_dead_workers_searches_go_back_to_the_queue(worker: Worker) -> None:
    alice = make_user("alice")
    analysis = services.start(user=alice, slug="diffusion")
    job = services.ask_computer(user=alice, analysis=analysis, node=0)
    SearchJob.objects.filter(pk=job.pk).update(status="running")
    from bots import searches

    assert searches.requeue_stale() == 0  # still fresh: another worker may be on it
    SearchJob.objects.filter(pk=job.pk).update(
        updated=job.updated - searches.STALE - searches.STALE
    )
    assert searches.requeue_stale() == 1
    until(worker, lambda: SearchJob.objects.get(pk=job.pk).status == SearchJob.Status.DONE)


def test_a_full_queue_refuses_more_with_computer_busy(
    worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bots import searches

    monkeypatch.setattr(searches, "MOST_QUEUED", 2)
    alice, bob = make_user("alice"), make_user("bob")
    analysis = services.start(user=alice, slug="diffusion", moves="I A J")
    services.ask_computer(user=alice, analysis=analysis, node=0)
    services.ask_computer(user=bob, analysis=analysis, node=1)
    browser = Client()
    browser.force_login(bob)
    answer = browser.post(
        f"/api/analysis/{analysis.key}/eval", json.dumps({"node": 2}), "application/json"
    )
    assert (answer.status_code, answer.json()["error"]["code"]) == (503, "computer_busy")
    assert SearchJob.objects.count() == 2
