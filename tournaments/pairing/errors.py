"""The one error the pairing library raises: input it cannot pair, with a message saying why."""

from __future__ import annotations


class PairingError(ValueError):
    """Players or results the pairing cannot work from (duplicated ids, an impossible round...).

    A ValueError, as the rule engines' errors are: the caller passed bad data.
    """
