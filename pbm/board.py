"""A game as pbmserv's mails showed it: fixed-width text, whose move, the last moves, and the
moves the player to move may make, in pbmserv's notation."""

from __future__ import annotations

import re
from typing import Any

from games.engine import client_moves, rules_for
from games.models import Game
from games.selectors import game_text, played, positions

# The last moves a board shows (the site's text view lists every move).
LAST_MOVES = 10
# A Diffusion Chess turn can be any of thousands of paths: the mail lists the stones instead.
MAX_LISTED_MOVES = 60
_SEAT_TO_MOVE = re.compile(r"^Player [12] to move\.$")


def legal_moves_line(rules: Any, state: Any) -> str:
    moves = client_moves(rules, state)
    if isinstance(moves, dict):  # Diffusion Chess: the stones that can move, and echo
        stones = sorted(moves["destinations"])
        text = f"stones that can move: {' '.join(stones)}"
        if moves.get("echo"):
            text += "; or echo"
        return text + " (a move is the stone's path, as d4-d5-e5)"
    listed = list(moves)
    if len(listed) > MAX_LISTED_MOVES:
        return f"{len(listed)} moves, among them {' '.join(listed[:MAX_LISTED_MOVES])} ..."
    return " ".join(listed) if listed else "none"


def board(game: Game, *, at: int | None = None) -> str:
    """The game now, or as it stood after move `at` (0: before the first move)."""
    rules = rules_for(game.slug, game.options)
    if at is not None:
        states = positions(game)
        at = max(0, min(at, len(states) - 1))
        state = rules.from_json(states[at])
        moves = played(game)[:at]
        players = f"{game.player1.username} (1) vs {game.player2.username} (2)"
        lines = [
            f"{game.slug} game {game.pk}: {players}",
            f"as it stood after move {at} of {game.ply}",
            "",
            rules.render_text(state).rstrip("\n"),
            "",
        ]
        lines += [f"{n:4d}. ({p}) {m}" for n, (p, m) in enumerate(moves, start=1)][-LAST_MOVES:]
        return "\n".join(lines) + "\n"
    text = game_text(game)
    lines = text.rstrip("\n").split("\n")
    numbered = [line for line in lines if line[:5].strip().rstrip(".").isdigit()]
    # The site's text says "Player 1 to move."; a mail names the player and the move's number.
    body = [line for line in lines if line not in numbered and not _SEAT_TO_MOVE.match(line)]
    out = body + numbered[-LAST_MOVES:]
    if game.status == Game.Status.ACTIVE:
        state = rules.from_json(game.state)
        mover = game.player1 if rules.to_move(state) == 1 else game.player2
        out += [
            "",
            f"{mover.username} to move; this move is #{game.ply + 1}.",
            f"Legal moves: {legal_moves_line(rules, state)}",
        ]
    return "\n".join(out) + "\n"
