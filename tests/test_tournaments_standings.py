"""Scores, sheet marks and tie-breaks of whole tournaments played through the services,
against tables worked out by hand: a round robin of an odd field (a sit-out a round, no
points) and a Swiss of an odd field (a pairing-allocated bye a round, a win's points).
docs/TOURNAMENTS.md, "Points and standings", gives the rules checked here."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games import services as game_services
from tests.games_helpers import session_for
from tests.test_tournaments import in_play, players, started
from tournaments.models import Entry, Pairing, Tournament
from tournaments.services import creation, entries

pytestmark = pytest.mark.django_db(transaction=True)

# The result of each pair of pairing numbers (a, b), a < b: 1 a won, 0 b won, 0.5 a draw.
Results = dict[tuple[int, int], float]


def play_to_the_end(tournament: Tournament, results: Results) -> list[list[tuple[int, Any]]]:
    """Decide every game as `results` says until the tournament ends; the rounds' pairings
    as (pairing numbers) by round: (first, second) for a game, (player, None) for a bye."""
    seed = dict(Entry.objects.filter(tournament=tournament).values_list("user_id", "seed"))
    for _ in range(20):
        tournament.refresh_from_db()
        if tournament.status != Tournament.Status.RUNNING:
            break
        for pairing in in_play(tournament):
            a, b = seed[pairing.first_id], seed[pairing.second_id]
            outcome = results[(a, b)] if a < b else 1 - results[(b, a)]
            if outcome == 0.5:
                game_services.offer_draw(game_id=pairing.game_id, user=pairing.first)
                game_services.answer_draw(game_id=pairing.game_id, user=pairing.second, accept=True)
            else:
                loser = pairing.second if outcome == 1 else pairing.first
                game_services.resign(game_id=pairing.game_id, user=loser)
    assert tournament.status == Tournament.Status.FINISHED
    rounds: list[list[tuple[int, Any]]] = [[] for _ in range(tournament.round)]
    for pairing in Pairing.objects.filter(tournament=tournament).order_by("round", "id"):
        rounds[pairing.round - 1].append(
            (seed[pairing.first_id], seed[pairing.second_id] if pairing.second_id else None)
        )
    return rounds


def standings(tournament: Tournament, viewer: User) -> list[dict[str, Any]]:
    """The standings as the HTTP API sends them (the socket's snapshot)."""
    client = Client()
    client.cookies["sessionid"] = session_for(viewer)
    snapshot = client.get(f"/api/tournaments/{tournament.pk}").json()
    return list(snapshot["standings"])


def by_seed(tournament: Tournament, field: list[User]) -> dict[int, str]:
    """Pairing number -> username."""
    names = {user.pk: user.username for user in field}
    return {
        seed: names[user_id]
        for user_id, seed in Entry.objects.filter(tournament=tournament).values_list(
            "user_id", "seed"
        )
    }


# A round robin of five (pairing numbers 1-5): the Berger table of six, whoever meets 6 sits
# out. Rounds: R1 2-5 3-4 (1 out), R2 5-3 1-2 (4 out), R3 3-1 4-5 (2 out), R4 1-4 2-3 (5 out),
# R5 4-2 5-1 (3 out).
ROUND_ROBIN_RESULTS: Results = {
    (1, 2): 1,
    (1, 3): 0.5,
    (1, 4): 0,
    (1, 5): 1,
    (2, 3): 1,
    (2, 4): 0.5,
    (2, 5): 1,
    (3, 4): 1,
    (3, 5): 0.5,
    (4, 5): 0,
}
# Scores: 1 2.5, 2 2.5, 3 2, 4 1.5, 5 1.5 (a sit-out scores nothing). Sonneborn-Berger, the
# classical one (the sit-out is no game): the scores of those beaten plus half those drawn:
# 1: 2 (2.5) + 5 (1.5) + half of 3 (2) = 5.0;  2: 3 (2) + 5 (1.5) + half of 4 (1.5) = 4.25;
# 3: 4 (1.5) + half of 1 (2.5) and 5 (1.5) = 3.5;  4: 1 (2.5) + half of 2 (2.5) = 3.75;
# 5: 4 (1.5) + half of 3 (2) = 2.5. So 1 before 2, and 4 before 5, by Sonneborn-Berger.
# (number, half points, sheet, Sonneborn-Berger), best first:
ROUND_ROBIN_TABLE = [
    (1, 5, "-1=01", 5.0),
    (2, 5, "10-1=", 4.25),
    (3, 4, "1==0-", 3.5),
    (4, 3, "0-01=", 3.75),
    (5, 3, "0=1-0", 2.5),
]


def test_an_odd_round_robin_scores_each_sit_out_nothing_marks_it_and_breaks_ties_by_sb() -> None:
    creator, *field = players(6, "rr")
    tournament = creation.create_tournament(
        creator=creator, kind="round_robin", slug="zigzag", time_control="1d"
    )
    for player in field:  # joined in this order: pairing numbers 1-5 (equal ratings)
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    assert tournament.rounds == 5
    rounds = play_to_the_end(tournament, ROUND_ROBIN_RESULTS)
    assert rounds == [
        [(2, 5), (3, 4), (1, None)],
        [(5, 3), (1, 2), (4, None)],
        [(3, 1), (4, 5), (2, None)],
        [(1, 4), (2, 3), (5, None)],
        [(4, 2), (5, 1), (3, None)],
    ]
    # Each sit-out is a `bye` row of no points.
    byes = Pairing.objects.filter(tournament=tournament, result="bye")
    assert sorted(byes.values_list("round", "first_points")) == [(r, 0) for r in range(1, 6)]
    names = by_seed(tournament, field)
    table = standings(tournament, creator)
    assert [(row["rank"], row["name"]) for row in table] == [
        (rank, names[number]) for rank, (number, *_) in enumerate(ROUND_ROBIN_TABLE, 1)
    ]
    for row, (_, points, sheet, sonneborn_berger) in zip(table, ROUND_ROBIN_TABLE, strict=True):
        # `tiebreak` carries a round robin's Sonneborn-Berger.
        assert (row["points"], row["sheet"], row["tiebreak"]) == (
            points,
            sheet,
            sonneborn_berger,
        ), row["name"]
        assert row["games"] == 4
    tournament.refresh_from_db()
    assert tournament.winner is not None and tournament.winner.username == names[1]


# A Swiss of five, three rounds (pairing numbers 1-5, by the Dutch system; the pairs do not
# depend on the colour drawn for round 1): R1 1-3 (1 won), 2-4 drawn, 5 the bye;
# R2 1-5 drawn, 3-4 (3 won), 2 the bye; R3 1-2 (1 won), 3-5 drawn, 4 the bye.
SWISS_RESULTS: Results = {(1, 3): 1, (2, 4): 0.5, (1, 5): 0.5, (3, 4): 1, (1, 2): 1, (3, 5): 0.5}
# Scores (a bye a win's point): 1 2.5, 2 1.5, 3 1.5, 4 1.5, 5 2. As opponents, byes count as
# draws: 1 2.5, 2 1, 3 1.5, 4 1, 5 1.5. A bye is a game against a virtual opponent of
# SPR + (1 - SfPR) + (n - R)/2: 5's in R1 0 + 0 + 1 = 1, 2's in R2 0.5 + 0 + 0.5 = 1, 4's in
# R3 0.5 + 0 + 0 = 0.5. Buchholz: 1: 1.5 + 1.5 + 1 = 4; 2: 1 + 1 + 2.5 = 4.5;
# 3: 2.5 + 1 + 1.5 = 5; 4: 1 + 1.5 + 0.5 = 3; 5: 1 + 2.5 + 1.5 = 5. Sonneborn-Berger:
# 1: 1.5 + 0.75 + 1 = 3.25; 2: 0.5 + 1 = 1.5; 3: 1 + 0.75 = 1.75; 4: 0.5 + 0.5 = 1;
# 5: 1 + 1.25 + 0.75 = 3. So 3, 2, 4 on 1.5 points rank by Buchholz.
# (number, half points, sheet, Buchholz), best first:
SWISS_TABLE = [
    (1, 5, "1=1", 4.0),
    (5, 4, "+==", 5.0),
    (3, 3, "01=", 5.0),
    (2, 3, "=+0", 4.5),
    (4, 3, "=0+", 3.0),
]
SWISS_SONNEBORN_BERGER = {1: 3.25, 2: 1.5, 3: 1.75, 4: 1.0, 5: 3.0}


def test_an_odd_swiss_gives_each_bye_a_wins_points_and_a_plus_and_ranks_by_buchholz() -> None:
    creator, *field = players(6, "sw")
    tournament = creation.create_tournament(
        creator=creator, kind="swiss", slug="zigzag", time_control="1d", rounds=3
    )
    for player in field:  # joined in this order: pairing numbers 1-5 (equal ratings)
        entries.join(user=player, tournament_id=tournament.pk)
    tournament = started(tournament)
    rounds = play_to_the_end(tournament, SWISS_RESULTS)
    assert [{frozenset(pair) for pair in one} for one in rounds] == [
        {frozenset((1, 3)), frozenset((2, 4)), frozenset((5, None))},
        {frozenset((1, 5)), frozenset((3, 4)), frozenset((2, None))},
        {frozenset((1, 2)), frozenset((3, 5)), frozenset((4, None))},
    ]
    byes = Pairing.objects.filter(tournament=tournament, result="bye")
    assert sorted(byes.values_list("round", "first_points")) == [(r, 2) for r in range(1, 4)]
    names = by_seed(tournament, field)
    table = standings(tournament, creator)
    assert [row["name"] for row in table] == [names[number] for number, *_ in SWISS_TABLE]
    for row, (_, points, sheet, buchholz) in zip(table, SWISS_TABLE, strict=True):
        # `tiebreak` carries a Swiss's Buchholz.
        assert (row["points"], row["sheet"], row["tiebreak"]) == (points, sheet, buchholz)
    second = {
        seed: tiebreak2
        for seed, tiebreak2 in Entry.objects.filter(tournament=tournament).values_list(
            "seed", "tiebreak2"
        )
    }
    assert second == pytest.approx(SWISS_SONNEBORN_BERGER)
