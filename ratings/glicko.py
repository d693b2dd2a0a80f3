"""One rated game through Glicko-2 (the glicko2-py library does the mathematics).

Each game is its own rating period, as on lichess: ratings move after every game.
"""

from __future__ import annotations

from dataclasses import dataclass

from glicko2.math import mu_to_rating, phi_to_rd, rating_to_mu, rd_to_phi, update_rating

INITIAL_RATING = 1500.0
INITIAL_DEVIATION = 350.0
INITIAL_VOLATILITY = 0.06
TAU = 0.5
# A rating is provisional (shown with "?") while its deviation is above this (lichess).
PROVISIONAL_DEVIATION = 110.0


@dataclass(frozen=True)
class Glicko:
    rating: float = INITIAL_RATING
    deviation: float = INITIAL_DEVIATION
    volatility: float = INITIAL_VOLATILITY

    @property
    def provisional(self) -> bool:
        return self.deviation > PROVISIONAL_DEVIATION


def after_game(player: Glicko, opponent: Glicko, score: float) -> Glicko:
    """`player`'s rating after scoring `score` (1 win, 0.5 draw, 0 loss) against
    `opponent`, both as they were before the game."""
    new = update_rating(
        rating_to_mu(player.rating),
        rd_to_phi(player.deviation),
        player.volatility,
        [(rating_to_mu(opponent.rating), rd_to_phi(opponent.deviation), score)],
        tau=TAU,
    )
    return Glicko(rating=mu_to_rating(new.mu), deviation=phi_to_rd(new.phi), volatility=new.sigma)
