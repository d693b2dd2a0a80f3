"""Swiss pairing by the FIDE (Dutch) system: `pair_round` and its types."""

from tournaments.pairing.swiss.dutch import pair_round
from tournaments.pairing.swiss.players import Colour, Float, SwissPlayer, SwissRound

__all__ = ["Colour", "Float", "SwissPlayer", "SwissRound", "pair_round"]
