"""The engine's words in the reader's language, and the services' reasons for a game's end.

The rules engine (games/rules) knows no Django: its refusals (IllegalMove, InvalidOptions,
BadNotation, and the shell's BadTimeControl and analysis TreeError built the same way) and its
outcomes carry an English `template`, marked with gettext_noop, and its `params`; str() and
Outcome.reason stay the English text. `translated` says one in the language active now (the
request's, or the socket's).

How a game ended is stored in English (Game.reason: an outcome's reason, or one of the
services' below); games/reasons.py says a stored reason in the reader's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, pgettext, pgettext_lazy

from games.rules import available_games
from games.rules.base import Message, Outcome, Refusal

# The services' reasons for the end of a game, as Game.reason stores them (in English).
RESIGNED = gettext_noop("%(user)s resigned")
ABORTED_BY = gettext_noop("aborted by %(user)s")
ABORTED_BY_MODERATOR = gettext_noop("aborted by a moderator")
NO_FIRST_MOVE = gettext_noop("%(user)s did not make a first move within %(seconds)s seconds")
OUT_OF_TIME = gettext_noop("%(user)s ran out of time")
LEFT_THE_GAME = gettext_noop("%(user)s left the game")
DID_NOT_MOVE = gettext_noop("%(user)s did not move for %(days)s days")
DRAWN_BY_AGREEMENT = gettext_noop("drawn by agreement")
Translatable = Message | Refusal | Outcome


def translated(message: Translatable | str) -> str:
    """`message` (an engine error, an outcome, a Message, or a template without placeholders)
    in the language active now."""
    if isinstance(message, str):
        return _(message) if message else message
    return fill(message.template, message.params)


def fill(template: str, params: Any) -> str:
    """`template` translated, with its placeholders filled (engine words among the values
    translated too). A translation that does not fit its values falls back to English."""
    text = _(template) if template else template
    if not params:
        return text
    values = {name: _value(value) for name, value in params.items()}
    try:
        return text % values
    except (KeyError, ValueError, TypeError):
        return template % values


def _value(value: Any) -> Any:
    return translated(value) if isinstance(value, Message | Refusal | Outcome) else value


# The games' options as forms and games' names label them (the engine names them in English,
# as the protocol and pbmserv's -OPTION=VALUE do). Every option of every game has its label
# here, a marked string (tests/test_translations.py holds it).
OPTION_LABELS = {
    "pits": pgettext_lazy("game option", "pits"),
    "seeds": pgettext_lazy("game option", "seeds"),
}


def option_label(name: str) -> str:
    """An option's name as people read it, in the active language."""
    label = OPTION_LABELS.get(name)
    return str(label) if label is not None else name


def game_title(name: str, options: Mapping[str, Any]) -> str:
    """A game's name with its options, in the active language: "ZigZag (pits 6, seeds 5)",
    "ZigZag (6 trous, 5 graines)". Every piece is a marked string, so a language orders and
    words them its own way (static/js/game_title.js builds the same from the client's
    catalog)."""
    if not options:
        return name
    parts = [
        pgettext("a game's option and its value, as in its name: pits 6", "%(option)s %(value)s")
        % {"option": option_label(option), "value": value}
        for option, value in sorted(options.items())
    ]
    return _("%(game)s (%(options)s)") % {"game": name, "options": ", ".join(parts)}


def described_games() -> list[dict[str, Any]]:
    """available_games() for people, in the active language: each game's summary and its
    options' help translated, and each option's `label` (its name as forms show it)."""
    games = []
    for game in available_games():
        options = [
            {
                **option,
                "label": option_label(option["name"]),
                "help": _(option["help"]) if option.get("help") else "",
            }
            for option in game["options"]
        ]
        games.append({**game, "summary": _(game["summary"]), "options": options})
    return games
