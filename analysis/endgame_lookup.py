"""The endgame database's answer for a position (games/endgames.py): GET /api/endgame.

The position is named as the opening explorer names one (a game, its options, the position's
text: docs/NOTATION.md). A covered position gets its exact result for the player to move and
each move's, lichess's tablebase answer for our games (docs/API.md, "Endgames"). ZigZag's
answers add the final margin in seeds (`margin`), which the browser only draws.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from analysis import explorer, explorer_lookup
from games import endgames
from games.engine import rules_for
from games.messages import translated
from games.rules import IllegalMove, InvalidOptions
from games.rules.notation import BadNotation, parse_position, position_text
from realtime.errors import ServiceError

PARAMETERS = ("game", "options", "position", "game_id", "ply")


def _bad(message: str) -> ServiceError:
    return ServiceError("bad_message", message)


def _options(text: str) -> dict[str, int]:
    try:  # as the explorer reads them: "pits=6,seeds=5"
        return explorer.options_of(text.replace(" ", ""))
    except ValueError:
        raise _bad(_("options are name=value pairs, separated by commas")) from None


def answer(params: Any) -> dict[str, Any]:
    """The database's answer for the position the parameters name; ServiceError saying what
    is wrong with them."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise _bad(_("unknown parameter %(name)s") % {"name": unknown[0]})
    given = {name: str(params.get(name, "")).strip() for name in PARAMETERS}
    if given["game_id"]:
        # A finished game's position (its replay asks so), as the explorer reads it.
        slug, options, state = explorer_lookup.from_game({k: v for k, v in given.items() if v})
        rules = rules_for(slug, options)
    else:
        if given["ply"]:
            raise _bad(_("ply goes with game_id"))
        if not given["game"]:
            raise _bad(_("say which game: game=diffusion, for one"))
        slug, options = given["game"], _options(given["options"])
        try:
            rules = rules_for(slug, options)
        except InvalidOptions as error:
            raise _bad(translated(error)) from None
        try:
            state = (
                parse_position(rules, given["position"])
                if given["position"]
                else rules.initial_state()
            )
        except BadNotation as error:
            raise _bad(translated(error)) from None
    if slug == "zigzag":
        zigzag = endgames.zigzag_table(options)
        most = zigzag.most if zigzag is not None else None
    else:
        table = endgames.table(slug) if not options else None
        most = table.most if table is not None else None
    verdict = endgames.probe(slug, options, state)
    found: dict[str, Any] = {
        "game": slug,
        "position": position_text(rules, state),
        "to_move": rules.to_move(state),
        # The most stones on the board the database covers; null when there is none for it.
        "most": most,
        "covered": verdict is not None,
        "result": verdict.result if verdict else None,
        "distance": verdict.moves if verdict else None,
        # ZigZag: the final captured seeds of the player to move minus the opponent's.
        "margin": verdict.margin if verdict else None,
        "moves": [],
    }
    if verdict is None:
        return found
    if slug == "zigzag":
        assert zigzag is not None  # it covered the position
        return _zigzag_moves(found, zigzag, rules, state)
    for move in rules.legal_moves(state):
        try:
            after = rules.play(state, move)
        except IllegalMove:  # pragma: no cover - the move was listed as legal
            continue
        ended = rules.outcome(after)
        distance: int | None
        if ended is not None:
            mover = rules.to_move(state)
            result, distance = ("win" if ended.winner == mover else "loss"), 1
        else:
            reply = endgames.probe(slug, options, after)
            assert reply is not None  # a move never adds stones: covered too
            result = {"win": "loss", "loss": "win", "draw": "draw"}[reply.result]
            distance = None if reply.moves is None else reply.moves + 1
        found["moves"].append(
            {"move": move, "result": result, "distance": distance, "margin": None}
        )
    # The best first: wins nearest first, then draws, then losses held out longest.
    order = {"win": 0, "draw": 1, "loss": 2}
    found["moves"].sort(
        key=lambda m: (
            order[m["result"]],
            (m["distance"] or 0) * (1 if m["result"] == "win" else -1),
        )
    )
    return found


def _zigzag_moves(
    found: dict[str, Any], zigzag: endgames.ZigZagTable, rules: Any, state: Any
) -> dict[str, Any]:
    """Each legal move's final margin for the player who makes it, the best first (the
    largest margin, then the last capture nearest)."""
    for move in rules.legal_moves(state):
        verdict = endgames.zigzag_move(zigzag, rules, state, move)
        assert verdict is not None  # a move never adds seeds: covered too
        found["moves"].append(
            {
                "move": move,
                "result": verdict.result,
                "distance": verdict.moves,
                "margin": verdict.margin,
            }
        )
    found["moves"].sort(key=lambda m: (-m["margin"], m["distance"]))
    return found
