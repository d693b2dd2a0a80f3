"""The FIDE (Dutch) system: FIDE Handbook C.04.3 as approved in 2016-2017 (with C.04.1).

The round is paired bracket by bracket from the top score down (A.3). A bracket is its
scoregroup plus the players moved down from above (MDPs). Its candidate pairings are made in
the order of section D: S1 (the MDPs to pair, or the top half) against S2, first every
transposition of S2 in lexicographic order (D.1), then exchanges between S1 and S2 (D.2), or
between the MDPs paired and those left in limbo (D.3); a heterogeneous bracket pairs its MDPs
first and its remainder as a homogeneous bracket (B.3). The first candidate meeting every
criterion is taken; failing that, the best one met, the criteria compared in order:

  absolute  C.1 no rematch; C.2 no second bye (or bye after a forfeit win); C.3 no two
            non-topscorers with the same absolute colour preference; C.4 the players left
            below can still all be paired (checked exactly, with a blossom matching);
  quality   C.5 most pairs; C.6 smallest pairing score differences (PSD, A.8); C.7 the most
            downfloaters the next scoregroup can take; C.8-C.9 topscorers' colour
            difference beyond 2 or three colours in a row; C.10-C.11 colour preferences and
            strong ones not granted; C.12-C.15 repeated down- and upfloats (one and two
            rounds ago); C.16-C.19 the score differences of those repeated floats.

Colours follow section E (tournaments.pairing.swiss.colours). The pairing-allocated bye goes
to whoever the last bracket leaves unpaired, which is a player without a bye so far (C.2),
found the same way: the lowest in the order, unless that costs a criterion above.

Where this is simpler than the rules (docs/TOURNAMENTS.md says the same):
- a bracket tries at most CANDIDATE_LIMIT candidates (and exchanges of at most
  EXCHANGE_LIMIT players a side); then it takes the best seen. Brackets almost always meet a
  perfect candidate far sooner, but a big bracket whose best is imperfect may not get the
  very best the rules would find;
- C.7 counts how many downfloaters the next scoregroup can pair, not the next bracket's PSD;
- the FIDE "perfect" candidate is recognised by lower bounds on C.6 and C.10-C.11; where the
  bounds are not tight the search runs to its limit and keeps the first best.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from tournaments.pairing.errors import PairingError
from tournaments.pairing.swiss.colours import white_is_higher
from tournaments.pairing.swiss.matching import bipartite_matching, maximum_matching
from tournaments.pairing.swiss.players import (
    ABSOLUTE,
    STRONG,
    Colour,
    Float,
    Preference,
    SwissPlayer,
    SwissRound,
    preference,
)

CANDIDATE_LIMIT = 1000
EXCHANGE_LIMIT = 1
# Up to this product of the sides' sizes, every exchange is tried (a bracket of up to 12).
SMALL_EXCHANGE = 36
# The node budget of one level's search: it bounds the dead ends as CANDIDATE_LIMIT the leaves.
NODE_LIMIT = 40 * CANDIDATE_LIMIT
# The candidates of a remainder tried for one pairing of the MDPs (see _Search._candidates).
REMAINDER_LEAVES = 50
# The nodes the last resort (any candidate, colours aside) may still spend.
LAST_RESORT = 5000

Pair = tuple[int, int]


def pair_round(
    players: Sequence[SwissPlayer], *, rounds: int, initial_colour: Colour = "W"
) -> SwissRound:
    """Pair the next round of a Swiss of `rounds` rounds by the Dutch system.

    `initial_colour` is the colour drawn for the top seed in round 1 (E.5). Raises
    PairingError on bad input, or when no pairing meets the absolute criteria (a small field
    late in a long tournament).
    """
    _validate(players, rounds, initial_colour)
    return _Round(players, rounds, initial_colour).pair()


def _validate(players: Sequence[SwissPlayer], rounds: int, initial_colour: str) -> None:
    if initial_colour not in ("W", "B"):
        raise PairingError(f"the initial colour is 'W' or 'B', not {initial_colour!r:.10}")
    if len({p.id for p in players}) != len(players):
        raise PairingError("a player is listed twice")
    if len({p.pairing_number for p in players}) != len(players):
        raise PairingError("two players share a pairing number")
    played = max((len(p.colours) for p in players), default=0)
    if played >= rounds:
        raise PairingError(f"all {rounds} rounds are paired already")


@dataclass(frozen=True, slots=True)
class _Player:
    """A player as the pairing works with him: his index is his rank (A.2)."""

    id: Hashable
    pairing_number: int
    points: int  # the score in half points, exact
    preference: Preference
    played: tuple[Colour, ...]
    opponents: frozenset[Hashable]
    can_have_bye: bool
    float_last: Float | None
    float_before: Float | None
    topscorer: bool


@dataclass(frozen=True, slots=True)
class _PairCost:
    white_is_first: bool
    topscorer_difference: int  # C.8
    topscorer_three: int  # C.9
    preference: int  # C.10
    strong: int  # C.11


class _Round:
    def __init__(self, players: Sequence[SwissPlayer], rounds: int, initial_colour: Colour):
        number = max((len(p.colours) for p in players), default=0) + 1
        final = number == rounds
        ranked = sorted(players, key=lambda p: (-p.score, p.pairing_number))
        self.players = [
            _Player(
                id=p.id,
                pairing_number=p.pairing_number,
                points=round(p.score * 2),
                preference=preference(p.colours),
                played=tuple(c for c in p.colours if c is not None),
                opponents=p.opponents,
                can_have_bye=not p.had_bye,
                float_last=p.floats[-1] if len(p.floats) >= number - 1 >= 1 else None,
                float_before=p.floats[-2] if len(p.floats) >= number - 1 >= 2 else None,
                # A.7: over half the points possible before the final round.
                topscorer=final and p.score * 2 > rounds - 1,
            )
            for p in ranked
        ]
        self.initial_colour = initial_colour
        self.compatible = self._compatibility()
        self.pair_costs: dict[Pair, _PairCost] = {}

    def _compatibility(self) -> list[list[bool]]:
        """Who may meet whom: C.1 (no rematch) and C.3 (no two non-topscorers with the same
        absolute colour preference). Built row by row, as a round compares every pair."""
        players = self.players
        size = len(players)
        index = {p.id: i for i, p in enumerate(players)}
        stuck: dict[Colour, list[int]] = {"W": [], "B": []}
        for i, p in enumerate(players):
            wanted = p.preference
            if wanted.strength == ABSOLUTE and wanted.colour is not None and not p.topscorer:
                stuck[wanted.colour].append(i)
        rows = []
        for i, p in enumerate(players):
            row = [True] * size
            row[i] = False
            for opponent in p.opponents:
                if opponent in index:
                    row[index[opponent]] = False
            wanted = p.preference
            if wanted.strength == ABSOLUTE and wanted.colour is not None and not p.topscorer:
                for j in stuck[wanted.colour]:
                    row[j] = False
            rows.append(row)
        # An opponent listed on one side only still counts on both.
        for i, p in enumerate(players):
            for opponent in p.opponents:
                if opponent in index:
                    rows[index[opponent]][i] = False
        return rows

    def allowed(self, a: int, b: int) -> bool:
        return self.compatible[a][b]

    def completable(self, players: Sequence[int]) -> bool:
        """C.4: can these players all be paired, one of them (if odd) taking the bye?"""
        compatible = self.compatible
        adjacency = [[j for j, b in enumerate(players) if compatible[a][b]] for a in players]
        if len(players) % 2:
            bye = len(players)
            takers = [i for i, a in enumerate(players) if self.players[a].can_have_bye]
            for i in takers:
                adjacency[i].append(bye)
            adjacency.append(takers)
        pairs = maximum_matching(adjacency, stop_short=True)
        return 2 * pairs == len(adjacency)

    def pair(self) -> SwissRound:
        everyone = list(range(len(self.players)))
        if not self.completable(everyone):
            raise PairingError("no pairing of this round meets the absolute criteria")
        groups: list[list[int]] = []
        for index in everyone:
            if groups and self.players[groups[-1][0]].points == self.players[index].points:
                groups[-1].append(index)
            else:
                groups.append([index])
        pairs: list[Pair] = []
        moved_down: list[int] = []
        for number, group in enumerate(groups):
            lower = [i for later in groups[number + 1 :] for i in later]
            following = groups[number + 1] if number + 1 < len(groups) else []
            bracket = _Bracket(self, moved_down, group, lower, following)
            made, moved_down = bracket.pair()
            pairs.extend(made)
        bye = moved_down[0] if moved_down else None
        return self._answer(pairs, bye)

    def cost(self, a: int, b: int) -> _PairCost:
        """The colours of the pair (a ranked above b) and what they cost in C.8-C.11."""
        cost = self.pair_costs.get((a, b))
        if cost is None:
            cost = self.pair_costs[(a, b)] = self._cost(a, b)
        return cost

    def _cost(self, a: int, b: int) -> _PairCost:
        x, y = self.players[a], self.players[b]
        first_white = white_is_higher(
            x.preference, y.preference, x.played, y.played, x.pairing_number, self.initial_colour
        )
        difference = three = missed = missed_strong = 0
        for player, colour in ((x, "W" if first_white else "B"), (y, "B" if first_white else "W")):
            wanted = player.preference
            if wanted.colour is not None and wanted.colour != colour:
                missed += 1
                missed_strong += wanted.strength >= STRONG
            if x.topscorer or y.topscorer:
                after = wanted.difference + (1 if colour == "W" else -1)
                difference += abs(after) > 2
                three += player.played[-2:] == (colour, colour)
        return _PairCost(first_white, difference, three, missed, missed_strong)

    def _answer(self, pairs: list[Pair], bye: int | None) -> SwissRound:
        players = self.players
        # Boards: the highest score first, then the highest sum, then the best ranked.
        pairs.sort(
            key=lambda p: (
                -players[p[0]].points,
                -players[p[0]].points - players[p[1]].points,
                p[0],
            )
        )
        boards = []
        floats: list[tuple[Hashable, Float]] = []
        for a, b in pairs:
            white, black = (a, b) if self.cost(a, b).white_is_first else (b, a)
            boards.append((players[white].id, players[black].id))
            if players[a].points != players[b].points:
                floats += [(players[a].id, "down"), (players[b].id, "up")]
        if bye is not None:
            floats.append((players[bye].id, "down"))
        return SwissRound(
            tuple(boards), players[bye].id if bye is not None else None, tuple(floats)
        )


Quality = tuple[object, ...]


class _Bracket:
    """One pairing bracket: the MDPs from above and the residents of one scoregroup."""

    def __init__(
        self,
        context: _Round,
        moved_down: list[int],
        residents: list[int],
        lower: list[int],
        following: list[int],
    ):
        self.round = context
        self.mdps = moved_down
        self.residents = residents
        self.lower = lower
        self.following = following
        self.players = moved_down + residents
        self.lowest = min(context.players[i].points for i in self.players)
        self.completion: dict[frozenset[int], bool] = {}
        self.absorbed: dict[frozenset[int], int] = {}

    def pair(self) -> tuple[list[Pair], list[int]]:
        """The pairs made here and the players moved down (in rank order)."""
        mdps = set(self.mdps)
        compatible = self.round.compatible
        most_pairs = maximum_matching(
            [
                [
                    j
                    for j, b in enumerate(self.players)
                    if compatible[a][b] and not (a in mdps and b in mdps)
                ]
                for a in self.players
            ]
        )
        most_mdps = bipartite_matching(self.mdps, self.residents, self.round.allowed)
        for total in range(most_pairs, 0, -1):  # C.5
            for paired_mdps in range(min(most_mdps, total), -1, -1):  # C.6, mostly
                remainder = total - paired_mdps
                if 2 * remainder > len(self.residents) - paired_mdps:
                    continue
                best = _Search(self, paired_mdps, remainder).run()
                if best is not None:
                    return best
        # Nobody can be paired here (C.4 holds: the bracket above checked it): all move down.
        return [], sorted(self.players)

    def completable(self, floaters: list[int]) -> bool:
        key = frozenset(floaters)
        known = self.completion.get(key)
        if known is None:
            known = self.completion[key] = self.round.completable(floaters + self.lower)
        return known

    def absorbable(self, floaters: list[int]) -> int:
        """C.7 (simplified): how many of these downfloaters the next scoregroup can pair."""
        key = frozenset(floaters)
        known = self.absorbed.get(key)
        if known is None:
            known = self.absorbed[key] = bipartite_matching(
                floaters, self.following, self.round.allowed
            )
        return known


class _Search:
    """The candidates of one bracket with a given number of pairs and of MDPs paired, in the
    order of section D, until a perfect one (or the limit)."""

    def __init__(self, bracket: _Bracket, paired_mdps: int, remainder_pairs: int):
        self.bracket = bracket
        self.round = bracket.round
        self.paired_mdps = paired_mdps
        self.remainder_pairs = remainder_pairs
        self.leaves = 0
        self.nodes = 0
        self.best: tuple[Quality, list[Pair], list[int]] | None = None
        self.colour_bound = 0
        self.perfect = self._perfect()
        self.allowance = 0

    def run(self) -> tuple[list[Pair], list[int]] | None:
        """Pass after pass, allowing one more pair of players wanting the same colour (C.10)
        each time from the least possible, each pass in the order of section D and cut where
        the colours cannot fit the allowance: the first pass that finds candidates has the
        best, unless its PSD or downfloaters (C.6-C.7, before the colours) fall short of
        the bound, when the passes go on. (The topscorers' criteria C.8-C.9, which come
        before C.10 too, are compared only among the candidates of the passes made.)"""
        allowance = self.colour_bound
        while allowance <= len(self.bracket.players):
            self.allowance = allowance
            for _ in self._candidates():
                if self._spent() or (self.best is not None and self.best[0] == self.perfect):
                    break
            if self._spent():
                break
            # Done, unless what comes before C.10 (the PSD, C.7's downfloaters) could still
            # be bettered by a candidate with worse colours.
            if self.best is not None and self.best[0][:2] == self.perfect[:2]:
                break
            allowance += 1
        if self.best is None and self._spent():
            # Out of budget before any candidate: take the first that comes, colours aside.
            self.allowance = len(self.bracket.players)
            self.leaves, self.nodes = CANDIDATE_LIMIT - 1, NODE_LIMIT - LAST_RESORT
            for _ in self._candidates():
                if self.best is not None or self.nodes >= NODE_LIMIT:
                    break
        if self.best is None:
            return None
        return self.best[1], sorted(self.best[2])

    def _candidates(self) -> Iterator[None]:
        bracket = self.bracket
        mdps, residents = bracket.mdps, bracket.residents
        for s1, limbo in _exchanges(mdps[: self.paired_mdps], mdps[self.paired_mdps :], None):
            for mdp_pairs, left, spent in self._transpositions(s1, residents, 0):
                top, bottom = left[: self.remainder_pairs], left[self.remainder_pairs :]
                # The remainder's own candidates rarely differ beyond the first few (they
                # come colour-optimal from the cut): after REMAINDER_LEAVES, the next MDP
                # pairing is tried, which is where a repeated float is usually avoided.
                first = self.leaves
                for s1r, s2r in _exchanges(top, bottom, self._fits(top, bottom, spent)):
                    for pairs, rest, _ in self._transpositions(s1r, s2r, spent):
                        self._consider(mdp_pairs + pairs, limbo + rest)
                        yield None
                        if s1 and self.leaves - first >= REMAINDER_LEAVES:
                            break
                    if self._spent():
                        return
                    if s1 and self.leaves - first >= REMAINDER_LEAVES:
                        break

    def _fits(self, s1: list[int], s2: list[int], spent: int) -> Callable[[Move], bool]:
        """Whether an exchange between S1 and S2 leaves the colours a chance within the
        allowance: tells, from counts alone, the exchanges not worth a search."""
        wants = [self.round.players[i].preference.colour for i in range(len(self.round.players))]

        def counts(group: Sequence[int]) -> list[int]:
            return [sum(1 for i in group if wants[i] == c) for c in ("W", "B")]

        in_s1, in_s2, others = counts(s1), counts(s2), len(s2) - len(s1)

        def fits(move: Move) -> bool:
            out, into = counts(move[0]), counts(move[1])
            unavoidable = 0
            for c in (0, 1):
                first = in_s1[c] - out[c] + into[c]
                second = in_s2[c] + out[c] - into[c]
                unavoidable += max(0, first - (len(s1) + others - second))
            return spent + unavoidable <= self.allowance

        return fits

    def _spent(self) -> bool:
        return self.leaves >= CANDIDATE_LIMIT or self.nodes >= NODE_LIMIT

    def _transpositions(
        self, s1: list[int], s2: list[int], spent: int
    ) -> Iterator[tuple[list[Pair], list[int], int]]:
        """D.1: S1[i] against S2 in lexicographic order of S2's first |S1| players, pruned
        by the absolute criteria and by the colour allowance (`spent` of it used already);
        yields the pairs, the S2 players left in order, and the allowance used."""
        compatible = self.round.compatible
        wants = [self.round.players[i].preference.colour for i in range(len(self.round.players))]
        cost = self.round.cost
        count = len(s1)
        chosen: list[int] = []
        used = [False] * len(s2)
        # What is left to pair of S1 (a suffix) and of S2 (the unused), by colour wanted.
        s1_left = [[0, 0] for _ in range(count + 1)]
        for i in range(count - 1, -1, -1):
            s1_left[i] = list(s1_left[i + 1])
            if wants[s1[i]] is not None:
                s1_left[i][wants[s1[i]] == "B"] += 1
        s2_left = [0, 0]
        for b in s2:
            if wants[b] is not None:
                s2_left[wants[b] == "B"] += 1
        allowance = self.allowance

        def unavoidable(i: int) -> int:
            # Each S1 player left needs his own S2 partner: those wanting white beyond the S2
            # players not wanting white meet one who does (and the same for black).
            others = len(s2) - (i)
            return max(0, s1_left[i][0] - (others - s2_left[0])) + max(
                0, s1_left[i][1] - (others - s2_left[1])
            )

        def extend(i: int, spent: int) -> Iterator[tuple[list[Pair], list[int], int]]:
            self.nodes += 1
            if i == count:
                yield (
                    list(zip(s1, chosen, strict=True)),
                    [b for b, taken in zip(s2, used, strict=True) if not taken],
                    spent,
                )
                return
            a = s1[i]
            row = compatible[a]
            for j, b in enumerate(s2):
                if used[j] or not row[b]:
                    continue
                high, low = (a, b) if a < b else (b, a)
                after = spent + cost(high, low).preference
                wanted = wants[b]
                if wanted is not None:
                    s2_left[wanted == "B"] -= 1
                if after + unavoidable(i + 1) <= allowance:
                    used[j] = True
                    chosen.append(b)
                    yield from extend(i + 1, after)
                    chosen.pop()
                    used[j] = False
                if wanted is not None:
                    s2_left[wanted == "B"] += 1
                if self.nodes >= NODE_LIMIT:
                    return

        if spent + unavoidable(0) > allowance:
            return iter(())
        return extend(0, spent)

    def _consider(self, pairs: list[Pair], floaters: list[int]) -> None:
        self.leaves += 1
        quality = self._quality(pairs, floaters)
        if (self.best is None or quality < self.best[0]) and self.bracket.completable(floaters):
            self.best = (quality, pairs, floaters)

    def _quality(self, pairs: list[Pair], floaters: list[int]) -> Quality:
        players = self.round.players
        mdps = self.bracket.mdps
        psd = [abs(players[a].points - players[b].points) for a, b in pairs]
        psd += [players[f].points - self.bracket.lowest + 2 for f in floaters]
        c8 = c9 = c10 = c11 = 0
        c13 = c15 = 0
        c16: list[int] = []
        c17: list[int] = []
        c18: list[int] = []
        c19: list[int] = []
        for a, b in pairs:
            high, low = min(a, b), max(a, b)
            cost = self.round.cost(high, low)
            c8 += cost.topscorer_difference
            c9 += cost.topscorer_three
            c10 += cost.preference
            c11 += cost.strong
            if high in mdps:
                gap = players[high].points - players[low].points
                if players[low].float_last == "up":
                    c13 += 1
                    c17.append(gap)
                if players[low].float_before == "up":
                    c15 += 1
                    c19.append(gap)
                if players[high].float_last == "down":
                    c16.append(gap)
                if players[high].float_before == "down":
                    c18.append(gap)
        c12 = sum(1 for f in floaters if players[f].float_last == "down")
        c14 = sum(1 for f in floaters if players[f].float_before == "down")
        c7 = -self.bracket.absorbable(floaters) if self.bracket.following else 0
        return (
            tuple(sorted(psd, reverse=True)),
            c7,
            c8,
            c9,
            c10,
            c11,
            c12,
            c13,
            c14,
            c15,
            tuple(sorted(c16, reverse=True)),
            tuple(sorted(c17, reverse=True)),
            tuple(sorted(c18, reverse=True)),
            tuple(sorted(c19, reverse=True)),
        )

    def _perfect(self) -> Quality:
        """A lower bound of the quality any candidate of this level can have; a candidate
        reaching it is the perfect one that ends the search (B.4)."""
        players = self.round.players
        bracket = self.bracket
        pairs = self.paired_mdps + self.remainder_pairs
        paired_mdps = bracket.mdps[: self.paired_mdps]
        limbo = bracket.mdps[self.paired_mdps :]
        resident_points = players[bracket.residents[0]].points if bracket.residents else 0
        psd = [players[m].points - resident_points for m in paired_mdps]
        psd += [0] * self.remainder_pairs
        floating_residents = len(bracket.residents) - self.paired_mdps - 2 * self.remainder_pairs
        psd += [players[m].points - bracket.lowest + 2 for m in limbo]
        psd += [resident_points - bracket.lowest + 2] * floating_residents
        floaters = len(bracket.players) - 2 * pairs
        c7 = -min(floaters, len(bracket.following)) if bracket.following else 0

        def unavoidable(strength: int) -> int:
            # Pigeonhole: of the players wanting one colour, all but the floaters are paired,
            # and beyond one a pair, two of them meet and one is refused.
            counts = {"W": 0, "B": 0}
            for i in bracket.players:
                wanted = players[i].preference
                if wanted.colour is not None and wanted.strength >= strength:
                    counts[wanted.colour] += 1
            return max(0, *(count - floaters - pairs for count in counts.values()))

        self.colour_bound = unavoidable(1)
        return (
            tuple(sorted(psd, reverse=True)),
            c7,
            0,
            0,
            self.colour_bound,
            unavoidable(STRONG),
            0,
            0,
            0,
            0,
            (),
            (),
            (),
            (),
        )


Move = tuple[tuple[int, ...], tuple[int, ...]]


def _exchanges(
    s1: list[int], s2: list[int], fits: Callable[[Move], bool] | None
) -> Iterator[tuple[list[int], list[int]]]:
    """D.2/D.3: the original S1 and S2, then each exchange of equally many players between
    them in the order of the rules: fewest players; smallest difference of the rank sums
    moved; the highest moved out of S1; the lowest moved out of S2. In a big bracket, only
    exchanges of up to EXCHANGE_LIMIT players a side (the number to sort grows too fast)."""
    yield s1, s2
    most = min(len(s1), len(s2))
    if len(s1) * len(s2) > SMALL_EXCHANGE:
        most = min(most, EXCHANGE_LIMIT)
    for k in range(1, most + 1):
        moves = sorted(
            ((out, into) for out in combinations(s1, k) for into in combinations(s2, k)),
            key=_exchange_order,
        )
        for out, into in moves:
            if fits is not None and not fits((out, into)):
                continue
            yield (
                sorted(set(s1) - set(out) | set(into)),
                sorted(set(s2) - set(into) | set(out)),
            )


def _exchange_order(move: Move) -> tuple[object, ...]:
    out, into = move
    return (sum(into) - sum(out), [-i for i in sorted(out, reverse=True)], sorted(into))
