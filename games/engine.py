"""The server's view of the rule engines: one place that turns rows into engine objects."""

from __future__ import annotations

import random
from typing import Any

from games.rules import available_games, get_rules

# Longest notation a client may send: a Diffusion Chess path of 8 steps is 9 cells.
MAX_MOVE_LENGTH = 100


def rules_for(slug: str, options: dict[str, Any]) -> Any:
    return get_rules(slug, **options)


def canonical_move(rules: Any, state: Any, move: str) -> str:
    """The canonical spelling of a move the engine accepted ("i" -> "I")."""
    canonical = getattr(rules, "canonical_move", None)
    if canonical is not None:
        return str(canonical(state, move))
    return move.strip()


def client_moves(rules: Any, state: Any) -> Any:
    """What a client may play: the engine's legal moves, or its own summary for huge sets."""
    summary = getattr(rules, "client_moves", None)
    if summary is not None:
        return summary(state)
    return list(rules.legal_moves(state))


def sowing_path(rules: Any, state: Any, move: str) -> list[list[str | int]] | None:
    """A pit game's move seed by seed, for clients to animate (None for other games)."""
    sowing = getattr(rules, "sowing", None)
    return None if sowing is None else list(sowing(state, move))


def pick_client_move(legal: Any, rng: random.Random) -> str:
    """A random move from what client_moves() listed (bots, load tests and tests use it)."""
    if isinstance(legal, dict):  # Diffusion Chess: {"destinations": {stone: {cell: path}}, "echo"}
        moves = [path for targets in legal["destinations"].values() for path in targets.values()]
        moves += ["echo"] if legal["echo"] else []
    else:
        moves = list(legal)
    if not moves:
        raise ValueError("no legal move to pick")
    return str(rng.choice(moves))


def normalized_options(slug: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options with the engine's defaults filled in; InvalidOptions when they are bad."""
    rules_for(slug, options)  # validates
    full = dict(options)
    for game in available_games():
        if game["slug"] == slug:
            for option in game.get("options", []):
                full.setdefault(option["name"], option["default"])
    return full
