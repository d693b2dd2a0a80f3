"""The opening explorer read (docs/API.md, "The opening explorer"): the moves played from one
position in the games counted, with how they went, for some rating bands and speeds.

    lookup = lookup_from(request.GET)   # ServiceError bad_message naming what is wrong
    explore(lookup)                     # the answer's JSON

A position is named by its text (docs/NOTATION.md; the start when none is given) or as a
finished game's position after `ply` moves: the analysis board names the one it shows, the
replay the one after the move shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Max, Sum
from django.utils.translation import gettext as _

from analysis import explorer
from analysis.models import ExplorerMove
from games.engine import rules_for
from games.messages import translated
from games.models import Game
from games.rules import IllegalMove, InvalidOptions
from games.rules.notation import BadNotation, parse_position, position_text
from games.selectors import played
from realtime.errors import ServiceError

PARAMETERS = ("game", "options", "position", "game_id", "ply", "ratings", "speeds")


@dataclass(frozen=True)
class Lookup:
    slug: str
    options: dict[str, int]
    variant: str
    state: Any
    bands: tuple[int, ...]  # () for every band
    speeds: tuple[int, ...]  # () for every speed


def _bad(message: str) -> ServiceError:
    return ServiceError("bad_message", message)


def lookup_from(params: Any) -> Lookup:
    """A Lookup from a request's parameters; ServiceError saying what is wrong."""
    given = {name: str(params.get(name, "")).strip() for name in PARAMETERS}
    given = {name: value for name, value in given.items() if value}
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise _bad(_("unknown parameter %(name)s") % {"name": unknown[0]})
    bands = _listed(given.get("ratings", ""), "ratings")
    if any(band not in explorer.BANDS for band in bands):
        raise _bad(
            _("ratings are bands named by their lowest rating: %(bands)s")
            % {"bands": ", ".join(map(str, explorer.BANDS))}
        )
    speed_names = [name for name in given.get("speeds", "").split(",") if name.strip()]
    if any(name.strip() not in explorer.SPEEDS for name in speed_names):
        raise _bad(_("speeds are some of %(speeds)s") % {"speeds": ", ".join(explorer.SPEEDS)})
    speeds = tuple(sorted({explorer.SPEEDS[name.strip()] for name in speed_names}))
    if "game_id" in given:
        slug, options, state = from_game(given)
    else:
        slug, options, state = _from_position(given)
    return Lookup(slug, options, explorer.variant(slug, options), state, bands, speeds)


def _listed(text: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise _bad(_("%(name)s must be numbers separated by commas") % {"name": name}) from None


def _from_position(given: dict[str, str]) -> tuple[str, dict[str, int], Any]:
    if "game" not in given:
        raise _bad(_("say which game: game=diffusion, for one"))
    if "game_id" in given or "ply" in given:
        raise _bad(_("ply goes with game_id"))
    slug = given["game"]
    try:
        options = explorer.options_of(given.get("options", "").replace(" ", ""))
    except ValueError:
        raise _bad(_("options are name=value pairs, separated by commas")) from None
    try:
        explorer.variant(slug, options)
        rules = rules_for(slug, options)
    except InvalidOptions as error:
        raise _bad(translated(error)) from None
    if "position" not in given:
        return slug, options, rules.initial_state()
    try:
        return slug, options, parse_position(rules, given["position"])
    except BadNotation as error:
        raise _bad(translated(error)) from None


def from_game(given: dict[str, str]) -> tuple[str, dict[str, int], Any]:
    """A finished game's position after `ply` moves (the explorer's and the endgame
    database's `game_id` and `ply`): nothing of a game in progress is looked up."""
    if {"game", "options", "position"} & set(given):
        raise _bad(_("game_id names the position alone: leave out game, options and position"))
    try:
        game_id, ply = int(given["game_id"]), int(given.get("ply", "0"))
    except ValueError:
        raise _bad(_("game_id and ply must be whole numbers")) from None
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(id)s.") % {"id": game_id})
    if game.status == Game.Status.ACTIVE:
        raise ServiceError(
            "game_not_over", _("The explorer opens on a game's positions once it is over.")
        )
    moves = [move for _player, move in played(game)]
    if not 0 <= ply <= len(moves):
        raise _bad(_("ply must be from 0 to %(moves)s") % {"moves": len(moves)})
    rules = rules_for(game.slug, game.options or {})
    state = rules.initial_state()
    try:
        for move in moves[:ply]:
            state = rules.play(state, move)
    except IllegalMove as error:  # a record the rules refuse: nothing to look up from
        raise _bad(translated(error)) from None
    return game.slug, dict(game.options or {}), state


def explore(lookup: Lookup) -> dict[str, Any]:
    """The moves played from the position, the most played first."""
    rules = rules_for(lookup.slug, lookup.options)
    position = explorer.position_hash(lookup.variant, rules.position_key(lookup.state))
    rows = ExplorerMove.objects.filter(position=position)
    if lookup.bands:
        rows = rows.filter(band__in=lookup.bands)
    if lookup.speeds:
        rows = rows.filter(speed__in=lookup.speeds)
    summed = (
        rows.values("move")
        .annotate(
            n=Sum("games"),
            w=Sum("wins"),
            d=Sum("draws"),
            l=Sum("losses"),
            r=Sum("rating_sum"),
            last=Max("last_game"),
        )
        .order_by("-n", "move")
    )
    moves = []
    for row in summed:
        try:
            after = rules.play(lookup.state, row["move"])
        except IllegalMove:  # a hash shared with another position (docs/EXPLORER.md)
            continue
        moves.append(
            {
                "move": row["move"],
                "games": row["n"],
                "wins": row["w"],
                "draws": row["d"],
                "losses": row["l"],
                "rating": round(row["r"] / row["n"]),
                "game": row["last"],
                "position": position_text(rules, after),
            }
        )
    return {
        "slug": lookup.slug,
        "options": lookup.options,
        "variant": lookup.variant,
        "position": position_text(rules, lookup.state),
        "to_move": rules.to_move(lookup.state),
        "ratings": list(lookup.bands),
        "speeds": [explorer.SPEED_NAMES[code] for code in lookup.speeds],
        "plies": explorer.PLIES,
        "games": sum(move["games"] for move in moves),
        "wins": sum(move["wins"] for move in moves),
        "draws": sum(move["draws"] for move in moves),
        "losses": sum(move["losses"] for move in moves),
        "moves": moves,
    }
