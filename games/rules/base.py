"""What every game's rules share: the errors, the outcome, option metadata and the registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class IllegalMove(ValueError):
    """A move that is malformed or not allowed in this position; the message says why."""


class InvalidOptions(ValueError):
    """An unknown game, or options it does not accept; the message says why."""


@dataclass(frozen=True)
class Outcome:
    """The end of a game: `winner` is 1 or 2, or None for a draw; `reason` says why."""

    winner: int | None
    reason: str


@dataclass(frozen=True)
class OptionSpec:
    """One option of a game, described for forms: type, default, range and constraint."""

    name: str
    type: str
    default: int
    minimum: int
    maximum: int
    constraint: str | None = None  # "even", "odd" or None
    help: str = ""

    def check(self, value: Any) -> int:
        """The value as an int, or InvalidOptions saying what the option must be."""
        number: int
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
            number = int(value.strip())  # pbmserv's -pits=8 arrives as text
        else:
            raise InvalidOptions(f"{self.name} must be a whole number, not {value!r}")
        article = {"even": "an even", "odd": "an odd"}.get(self.constraint or "", "a")
        wanted = f"{self.name} must be {article} number from {self.minimum} to {self.maximum}"
        if not self.minimum <= number <= self.maximum:
            raise InvalidOptions(wanted)
        if self.constraint == "even" and number % 2:
            raise InvalidOptions(wanted)
        if self.constraint == "odd" and not number % 2:
            raise InvalidOptions(wanted)
        return number

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "min": self.minimum,
            "max": self.maximum,
            "constraint": self.constraint,
            "help": self.help,
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


@dataclass(frozen=True)
class GameInfo:
    slug: str
    name: str
    factory: Callable[..., Rules]
    options: tuple[OptionSpec, ...] = ()
    summary: str = ""
    _cache: dict[tuple[tuple[str, int], ...], Rules] = field(default_factory=dict, compare=False)

    def describe(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "name": self.name,
            "summary": self.summary,
            "options": [option.describe() for option in self.options],
        }


REGISTRY: dict[str, GameInfo] = {}


def register(info: GameInfo) -> GameInfo:
    if info.slug in REGISTRY:
        raise ValueError(f"game {info.slug!r} is registered twice")
    REGISTRY[info.slug] = info
    return info


def get_rules(slug: str, **options: Any) -> Rules:
    """The rules of a registered game with these options; InvalidOptions if either is bad."""
    info = REGISTRY.get(slug) if isinstance(slug, str) else None
    if info is None:
        known = ", ".join(sorted(REGISTRY))
        raise InvalidOptions(f"unknown game {str(slug)[:40]!r}; the games are: {known}")
    specs = {option.name: option for option in info.options}
    unknown = sorted(set(options) - set(specs))
    if unknown:
        accepted = ", ".join(specs) if specs else "none"
        raise InvalidOptions(
            f"{info.name} has no option {', '.join(map(str, unknown))} (options: {accepted})"
        )
    values = {name: spec.check(options.get(name, spec.default)) for name, spec in specs.items()}
    key = tuple(sorted(values.items()))
    # Rules objects are immutable and precompute tables: build each variant once.
    rules = info._cache.get(key)
    if rules is None:
        rules = info._cache[key] = info.factory(**values)
    return rules


def available_games() -> list[dict[str, Any]]:
    """Metadata for every registered game: slug, display name and its options."""
    return [info.describe() for info in REGISTRY.values()]
