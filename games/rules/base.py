"""What every game's rules share: the errors, the outcome, option metadata and the registry.

A game module describes itself with a `GameInfo` (slug, display name, option specs and a
factory) and calls `register()` when it is imported; `get_rules()` validates the options
against the specs and builds (once per option set) the game's rules object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


def gettext_noop(message: str) -> str:
    """Mark `message` for translation and return it unchanged. The engine knows no Django:
    its texts for people are English templates with named placeholders ("pit %(pit)s is
    empty"), which the site translates when it shows them (games/messages.py); xgettext
    finds them by this name."""
    return message


class Message:
    """Text for people: an English `template` (marked with gettext_noop) and the values of
    its placeholders, `params` (which may be Messages or engine errors themselves). str() is
    the English text."""

    __slots__ = ("params", "template")

    def __init__(self, template: str, /, **params: Any) -> None:
        self.template = template
        self.params = params

    def __str__(self) -> str:
        return self.template % self.params if self.params else self.template

    def __repr__(self) -> str:
        return f"Message({str(self)!r})"


def as_typed(text: str) -> str | Message:
    """What a player typed, stripped and cut short, for a refusal to quote: "(nothing)" when
    it is blank."""
    return text.strip()[:20] or Message(gettext_noop("(nothing)"))


class Refusal(ValueError):
    """An engine error for people: str() is the English text; `template` and `params` (as a
    Message's) let the site say it in the reader's language."""

    def __init__(self, template: str, /, **params: Any) -> None:
        super().__init__(template % params if params else template)
        self.template = template
        self.params = params

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refusal, (type(self), self.template, self.params))


def _refusal(kind: type[Refusal], template: str, params: dict[str, Any]) -> Refusal:
    return kind(template, **params)


class IllegalMove(Refusal):
    """A move that is malformed or not allowed in this position; the message says why."""


class InvalidOptions(Refusal):
    """An unknown game, or options it does not accept; the message says why."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: `winner` is 1 or 2, or None for a draw; `reason` says why (in
    English; `template` and `params` as a Message's, for the site to translate)."""

    winner: int | None
    reason: str
    template: str = field(default="", compare=False, repr=False)
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.template:  # a reason without placeholders is its own template
            object.__setattr__(self, "template", self.reason)

    @classmethod
    def of(cls, winner: int | None, template: str, /, **params: Any) -> Outcome:
        """The outcome whose reason is `template` (marked with gettext_noop) filled in."""
        return cls(winner, template % params if params else template, template, params)


# pbmserv's "-pits=8" reaches us as text; only plain ASCII digits count as a number
# (str.isdigit() would let "²" through, which int() then refuses with a bare ValueError).
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")
_WANTED = {
    None: gettext_noop("a number from %(low)s to %(high)s"),
    "even": gettext_noop("an even number from %(low)s to %(high)s"),
    "odd": gettext_noop("an odd number from %(low)s to %(high)s"),
}


@dataclass(frozen=True, kw_only=True)
class OptionSpec:
    """One option of a game, described for forms: type, default, range and constraint."""

    name: str
    default: int
    minimum: int
    maximum: int
    constraint: Literal["even", "odd"] | None = None
    type: Literal["int"] = "int"  # the only kind any of our games needs so far
    help: str = ""

    def __post_init__(self) -> None:
        # A spec whose own default it would refuse is a programming error: fail at import.
        self.check(self.default)

    def check(self, value: Any) -> int:
        """The value as an int, or InvalidOptions saying what the option must be."""
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value.strip()):
            number = int(value.strip())
        else:
            raise InvalidOptions(
                gettext_noop("%(option)s must be a whole number, not %(value)s"),
                option=self.name,
                value=repr(value)[:40],
            )
        if (
            not self.minimum <= number <= self.maximum
            or (self.constraint == "even" and number % 2)
            or (self.constraint == "odd" and not number % 2)
        ):
            raise InvalidOptions(
                gettext_noop("%(option)s must be %(wanted)s, not %(number)s"),
                option=self.name,
                wanted=self.wanted_message(),
                number=number,
            )
        return number

    def wanted(self) -> str:
        """What a valid value is, in words: "an even number from 2 to 26"."""
        return str(self.wanted_message())

    def wanted_message(self) -> Message:
        """wanted() as a Message, for the site to translate."""
        return Message(_WANTED[self.constraint], low=self.minimum, high=self.maximum)

    def describe(self) -> dict[str, Any]:
        """JSON metadata a form is built from."""
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "min": self.minimum,
            "max": self.maximum,
            "constraint": self.constraint,
            "help": self.help or f"{self.wanted()} (default {self.default})",
        }


class Rules(Protocol):
    """The engine API every game offers (see games/rules/__init__.py)."""

    slug: str

    def initial_state(self) -> Any: ...
    def to_move(self, state: Any) -> int: ...
    def legal_moves(self, state: Any) -> Iterable[str]: ...
    def play(self, state: Any, move: str) -> Any: ...
    def outcome(self, state: Any) -> Outcome | None: ...
    def to_json(self, state: Any) -> dict[str, Any]: ...
    def from_json(self, data: Mapping[str, Any]) -> Any: ...
    def render_text(self, state: Any) -> str: ...
    def canonical_move(self, state: Any, move: str) -> str: ...
    def position_key(self, state: Any) -> bytes: ...
    def board(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class GameInfo:
    """A registered game: its metadata and a factory taking the validated options."""

    slug: str
    name: str
    factory: Callable[..., Rules]
    options: tuple[OptionSpec, ...] = ()
    summary: str = ""
    # Whether a game can end in a draw; where it cannot, `no_draws` says why (for people).
    draws: bool = True
    no_draws: str = ""
    # Rules objects are immutable and precompute their tables: build each option set once.
    _cache: dict[tuple[tuple[str, int], ...], Rules] = field(
        default_factory=dict, compare=False, repr=False
    )

    def describe(self) -> dict[str, Any]:
        """JSON metadata for the lobby and the web client."""
        return {
            "slug": self.slug,
            "name": self.name,
            "summary": self.summary,
            "options": [option.describe() for option in self.options],
            "draws": self.draws,
        }

    def rules(self, options: Mapping[str, Any]) -> Rules:
        """The rules for these options (defaults filled in); InvalidOptions when they are bad."""
        specs = {option.name: option for option in self.options}
        unknown = sorted(map(str, set(options) - set(specs)))
        if unknown:
            accepted = ", ".join(specs) if specs else Message(gettext_noop("none"))
            raise InvalidOptions(
                gettext_noop("%(game)s has no option %(unknown)s (options: %(options)s)"),
                game=self.name,
                unknown=", ".join(unknown),
                options=accepted,
            )
        values = {name: spec.check(options.get(name, spec.default)) for name, spec in specs.items()}
        key = tuple(sorted(values.items()))
        rules = self._cache.get(key)
        if rules is None:
            rules = self._cache[key] = self.factory(**values)
        return rules


REGISTRY: dict[str, GameInfo] = {}


def register(info: GameInfo) -> GameInfo:
    """Add a game to the registry (game modules call this when imported)."""
    if info.slug in REGISTRY:
        raise ValueError(f"game {info.slug!r} is registered twice")
    REGISTRY[info.slug] = info
    return info


def get_rules(slug: str, /, **options: Any) -> Rules:
    """The rules of a registered game with these options; InvalidOptions if either is bad."""
    info = REGISTRY.get(slug) if isinstance(slug, str) else None
    if info is None:
        known = ", ".join(sorted(REGISTRY))
        raise InvalidOptions(
            gettext_noop("unknown game %(game)s; the games are: %(games)s"),
            game=repr(str(slug)[:40]),
            games=known,
        )
    return info.rules(options)


def game_info(slug: str) -> GameInfo:
    """A registered game's metadata; InvalidOptions for an unknown slug."""
    info = REGISTRY.get(slug) if isinstance(slug, str) else None
    if info is None:
        raise InvalidOptions(gettext_noop("unknown game %(game)s"), game=repr(str(slug)[:40]))
    return info


def available_games() -> list[dict[str, Any]]:
    """Metadata for every registered game: slug, display name, summary and options."""
    return [info.describe() for info in REGISTRY.values()]
