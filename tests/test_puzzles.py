"""Puzzles as players meet them (puzzles/services.py, selectors.py, views.py): an answer is
judged by the rules, the first answer rates the player and the puzzle (Glicko-2, each the
other's opponent), later ones rate nothing, the next puzzle is one not answered near the
player's rating, the daily one is the same all day, and bad requests get documented errors."""

from __future__ import annotations

import json
import random
from datetime import date
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games.rules import get_rules
from games.rules.notation import position_text
from puzzles import selectors, services
from puzzles.models import Attempt, Puzzle, PuzzleRating
from ratings.glicko import Glicko, after_game
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def puzzle_after(moves: list[str], solution: str, *, themes: list[str] | None = None) -> Puzzle:
    """A Diffusion puzzle at the position after `moves` (the service checks it is legal)."""
    rules = get_rules("diffusion")
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    made = services.add_verified(
        slug="diffusion",
        options={},
        position=position_text(rules, state),
        solution=solution,
        goal="win",
        line=[solution, "A"],
        verified="proved: wins in 2 moves",
        themes=themes or [],
    )
    assert made is not None
    return made


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def answer(client: Client, puzzle: Puzzle, move: str) -> tuple[int, dict[str, Any]]:
    response = client.post(
        f"/api/puzzles/{puzzle.pk}/answer",
        json.dumps({"move": move}),
        content_type="application/json",
    )
    return response.status_code, response.json()


def test_a_solved_puzzle_rates_the_player_up_and_the_puzzle_down_as_glicko_2_says() -> None:
    puzzle = puzzle_after([], "I")
    alice = make_user("alice")
    status, said = answer(signed_in(alice), puzzle, " i ")  # the rules read it: "I"
    assert status == 200 and said["correct"] and said["move"] == "I" and said["rated"]
    player = after_game(Glicko(), Glicko(), 1.0)
    problem = after_game(Glicko(), Glicko(), 0.0)
    mine = PuzzleRating.objects.get(user=alice, slug="diffusion")
    puzzle.refresh_from_db()
    assert (round(mine.rating, 6), round(puzzle.rating, 6)) == (
        round(player.rating, 6),
        round(problem.rating, 6),
    )
    assert said["you"]["rating"] == round(player.rating) and said["solution"] == "I"
    assert (puzzle.plays, puzzle.solved, mine.attempts, mine.solved) == (1, 1, 1, 1)


def test_a_wrong_answer_rates_the_other_way_and_a_second_answer_is_not_rated() -> None:
    puzzle = puzzle_after([], "I")
    bob = make_user("bob")
    client = signed_in(bob)
    _, wrong = answer(client, puzzle, "A")
    assert not wrong["correct"] and wrong["rated"] and wrong["change"] < 0
    _, again = answer(client, puzzle, "I")
    assert again["correct"] and not again["rated"] and again["change"] == 0
    assert Attempt.objects.filter(user=bob).count() == 1
    assert PuzzleRating.objects.get(user=bob).attempts == 1


def test_anyone_not_signed_in_is_told_the_answer_and_rates_nothing() -> None:
    puzzle = puzzle_after([], "I")
    status, said = answer(Client(), puzzle, "I")
    assert status == 200 and said["correct"] and not said["rated"] and said["you"] is None
    puzzle.refresh_from_db()
    assert puzzle.plays == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"move": "Z"}, 422, "illegal_move"),
        ({"move": ""}, 400, "bad_message"),
        ({}, 400, "bad_message"),
        ({"move": 3}, 400, "bad_message"),
    ],
)
def test_a_bad_answer_is_refused_and_rates_nothing(
    body: dict[str, Any], status: int, code: str
) -> None:
    puzzle = puzzle_after([], "I")
    response = signed_in(make_user("carol")).post(
        f"/api/puzzles/{puzzle.pk}/answer", json.dumps(body), content_type="application/json"
    )
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert not Attempt.objects.exists()


def test_the_next_puzzle_is_one_not_answered_near_the_players_rating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    easy, middle, hard = (puzzle_after([first], "I") for first in ("A", "B", "C"))
    Puzzle.objects.filter(pk=easy.pk).update(rating=1100)
    Puzzle.objects.filter(pk=middle.pk).update(rating=1520)
    Puzzle.objects.filter(pk=hard.pk).update(rating=2300)
    dave = make_user("dave")
    rng = random.Random(1)
    monkeypatch.setattr(selectors, "NEAREST", 1)  # the nearest alone: the test sees which
    assert selectors.next_for(dave, "diffusion", None, rng) == middle
    answer(signed_in(dave), middle, "I")  # solved: about 1,670 now
    mine = PuzzleRating.objects.get(user=dave).rating
    left = {p: abs(Puzzle.objects.get(pk=p.pk).rating - mine) for p in (easy, hard)}
    assert selectors.next_for(dave, "diffusion", None, rng) == min(left, key=left.__getitem__)
    anyone = Client().get("/api/puzzles/next", {"game": "diffusion"}).json()
    assert anyone["puzzle"]["id"] == middle.pk and anyone["you"] is None  # near 1500


def test_themes_narrow_the_next_puzzle_and_every_puzzle_answered_is_said() -> None:
    capture = puzzle_after(["A"], "I", themes=["short", "endgame"])
    puzzle_after(["B"], "I")
    client = signed_in(make_user("erin"))
    said = client.get("/api/puzzles/next", {"game": "diffusion", "theme": "endgame"}).json()
    assert said["puzzle"]["id"] == capture.pk and said["puzzle"]["themes"] == ["endgame", "short"]
    assert "solution" not in said["puzzle"]  # the answer is given once answered
    answer(client, capture, "I")
    none_left = client.get("/api/puzzles/next", {"game": "diffusion", "theme": "endgame"})
    assert (none_left.status_code, none_left.json()["error"]["code"]) == (404, "no_puzzle_left")


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"game": "chess"}, "game"),
        ({"game": "diffusion", "theme": "forks"}, "theme"),
        ({"game": "diffusion", "colour": "white"}, "colour"),
    ],
)
def test_a_bad_request_for_a_puzzle_says_what_is_wrong(params: dict[str, str], names: str) -> None:
    response = Client().get("/api/puzzles/next", params)
    assert response.status_code == 400 and names in response.json()["error"]["message"]


def test_the_daily_puzzle_is_the_same_all_day_and_another_the_next() -> None:
    made = [puzzle_after([first], "I") for first in ("A", "B", "C", "D")]
    day = date(2026, 11, 29)
    assert selectors.daily(day) == selectors.daily(day)
    days = {selectors.daily(date.fromordinal(day.toordinal() + n)) for n in range(4)}
    assert days == set(made)
    said = Client().get("/api/puzzles/daily").json()
    assert said["puzzle"]["id"] in {puzzle.pk for puzzle in made}


def test_no_puzzle_is_a_null_daily_and_missing_ones_are_404() -> None:
    assert Client().get("/api/puzzles/daily").json() == {"puzzle": None}
    response = Client().get("/api/puzzles/999")
    assert (response.status_code, response.json()["error"]["code"]) == (404, "no_such_puzzle")
    assert Client().get("/puzzles/999/").status_code == 404


def test_the_same_position_is_one_puzzle_and_a_bad_solution_is_no_puzzle() -> None:
    puzzle_after([], "I")
    rules = get_rules("diffusion")
    again = services.add_verified(
        slug="diffusion",
        options={},
        position=position_text(rules, rules.initial_state()),
        solution="I",
        goal="win",
        line=["I"],
        verified="-",
        themes=[],
    )
    assert again is None
    from games.rules import IllegalMove

    with pytest.raises(IllegalMove):
        puzzle_after(["A"], "Z")


def test_the_pages_list_the_games_show_a_puzzle_and_the_home_page_has_the_daily_card() -> None:
    puzzle = puzzle_after([], "I", themes=["short"])
    index = Client().get("/puzzles/")
    assert index.status_code == 200 and b'data-game="diffusion"' in index.content
    assert f"/puzzles/{puzzle.pk}/".encode() in index.content
    page = Client().get(f"/puzzles/{puzzle.pk}/")
    assert page.status_code == 200 and f'data-puzzle="{puzzle.pk}"'.encode() in page.content
    assert Client().get("/puzzles/diffusion/?theme=short").status_code == 200
    assert Client().get("/puzzles/diffusion/?theme=nope").status_code == 404
    assert b'id="daily-puzzle"' in Client().get("/").content
