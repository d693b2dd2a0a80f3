"""Who has white in a pair: FIDE C.04.3 section E, applied in order until one rule decides."""

from __future__ import annotations

from tournaments.pairing.swiss.players import ABSOLUTE, Colour, Preference


def white_is_higher(
    higher: Preference,
    lower: Preference,
    higher_colours: tuple[Colour, ...],
    lower_colours: tuple[Colour, ...],
    higher_pairing_number: int,
    initial_colour: Colour,
) -> bool:
    """Whether the higher-ranked player (A.2: score, then pairing number) gets white.

    The colour histories are the games played, unplayed rounds left out, oldest first.
    """
    want_high, want_low = higher.colour, lower.colour
    # E.1: both preferences can be granted (opposite, or one player has none).
    if want_high is not None and want_high != want_low:
        return want_high == "W"
    if want_high is None and want_low is not None:
        return want_low == "B"
    if want_high is not None:
        # E.2: the same colour wanted: the stronger preference wins; two absolute ones (only
        # topscorers meet so) go to the wider colour difference.
        if higher.strength != lower.strength:
            winner_is_high = higher.strength > lower.strength
            return (want_high == "W") == winner_is_high
        if higher.strength == ABSOLUTE and abs(higher.difference) != abs(lower.difference):
            winner_is_high = abs(higher.difference) > abs(lower.difference)
            return (want_high == "W") == winner_is_high
    # E.3: alternate from the latest game in which the two had different colours.
    for mine, theirs in zip(reversed(higher_colours), reversed(lower_colours), strict=False):
        if mine != theirs:
            return mine == "B"
    # E.4: the higher-ranked player's preference.
    if want_high is not None:
        return want_high == "W"
    # E.5: by the initial colour drawn, given to odd pairing numbers.
    return (higher_pairing_number % 2 == 1) == (initial_colour == "W")
