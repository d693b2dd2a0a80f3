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


class IllegalMove(ValueError):
    """A move that is malformed or not allowed in this position; the message says why."""


class InvalidOptions(ValueError):
    """An unknown game, or options it does not accept; the message says why."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: `winner` is 1 or 2, or None for a draw; `reason` says why."""

    winner: int | None
    reason: str


# pbmserv's "-pits=8" reaches us as text; only plain ASCII digits count as a number
# (str.isdigit() would let "²" through, which int() then refuses with a bare ValueError).
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")
_ARTICLES = {"even": "an even", "odd": "an odd"}


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
            raise InvalidOptions(f"{self.name} must be a whole number, not {value!r:.40}")
        if (
            not self.minimum <= number <= self.maximum
            or (self.constraint == "even" and number % 2)
            or (self.constraint == "odd" and not number % 2)
        ):
            raise InvalidOptions(f"{self.name} must be {self.wanted()}, not {number}")
        return number

    def wanted(self) -> str:
        """What a valid value is, in words: "an even number from 2 to 26"."""
        article = _ARTICLES.get(self.constraint or "", "a")
        return f"{article} number from {self.minimum} to {self.maximum}"

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
            accepted = ", ".join(specs) if specs else "none"
            raise InvalidOptions(
                f"{self.name} has no option {', '.join(unknown)} (options: {accepted})"
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
        raise InvalidOptions(f"unknown game {str(slug)[:40]!r}; the games are: {known}")
    return info.rules(options)


def game_info(slug: str) -> GameInfo:
    """A registered game's metadata; InvalidOptions for an unknown slug."""
    info = REGISTRY.get(slug) if isinstance(slug, str) else None
    if info is None:
        raise InvalidOptions(f"unknown game {str(slug)[:40]!r}")
    return info


def available_games() -> list[dict[str, Any]]:
    """Metadata for every registered game: slug, display name, summary and options."""
    return [info.describe() for info in REGISTRY.values()]
