"""The registry and option machinery, with a stand-in game that takes ZigZag-like options.

RULES.md section 3: pits is an even number 2..26 (default 6), seeds an odd number 1..49
(default 5). The stand-in is registered only for each test (monkeypatch), so the
conformance tests never see it.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.rules import InvalidOptions, OptionSpec, available_games, get_rules
from games.rules.base import REGISTRY, GameInfo

PITS = OptionSpec(name="pits", default=6, minimum=2, maximum=26, constraint="even")
SEEDS = OptionSpec(name="seeds", default=5, minimum=1, maximum=49, constraint="odd")


class StandIn:
    """Just enough of a rules object to show which options it was built with."""

    slug = "stand-in"

    def __init__(self, pits: int, seeds: int) -> None:
        self.pits, self.seeds = pits, seeds


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> GameInfo:
    info = GameInfo(slug="stand-in", name="Stand-in", factory=StandIn, options=(PITS, SEEDS))
    monkeypatch.setitem(REGISTRY, "stand-in", info)
    return info


def test_it_fills_in_default_options(stand_in: GameInfo) -> None:
    rules: Any = get_rules("stand-in")
    assert (rules.pits, rules.seeds) == (6, 5)


def test_it_accepts_options_as_numbers_or_as_pbmserv_text(stand_in: GameInfo) -> None:
    rules: Any = get_rules("stand-in", pits=26, seeds="49")
    assert (rules.pits, rules.seeds) == (26, 49)
    rules = get_rules("stand-in", pits=" 2 ", seeds=1)
    assert (rules.pits, rules.seeds) == (2, 1)


def test_it_builds_each_option_set_once(stand_in: GameInfo) -> None:
    assert get_rules("stand-in", pits=8) is get_rules("stand-in", pits="8", seeds=5)
    assert get_rules("stand-in", pits=8) is not get_rules("stand-in", pits=10)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pits": 7}, "pits must be an even number from 2 to 26, not 7"),
        ({"pits": 28}, "pits must be an even number from 2 to 26, not 28"),
        ({"pits": 0}, "pits must be an even number from 2 to 26, not 0"),
        ({"pits": -4}, "pits must be an even number from 2 to 26, not -4"),
        ({"seeds": 4}, "seeds must be an odd number from 1 to 49, not 4"),
        ({"seeds": 51}, "seeds must be an odd number from 1 to 49, not 51"),
        ({"pits": "six"}, "pits must be a whole number, not 'six'"),
        ({"pits": "²"}, "pits must be a whole number"),
        ({"pits": "--4"}, "pits must be a whole number"),
        ({"pits": 6.0}, "pits must be a whole number, not 6.0"),
        ({"pits": True}, "pits must be a whole number, not True"),
        ({"pits": None}, "pits must be a whole number, not None"),
        ({"pits": "9" * 500}, "pits must be a whole number"),
        ({"holes": 6}, r"Stand-in has no option holes \(options: pits, seeds\)"),
    ],
)
def test_it_rejects_bad_options_saying_what_they_must_be(
    stand_in: GameInfo, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidOptions, match=message):
        get_rules("stand-in", **options)


def test_it_describes_every_option_for_forms(stand_in: GameInfo) -> None:
    (game,) = [g for g in available_games() if g["slug"] == "stand-in"]
    assert game["name"] == "Stand-in"
    assert game["options"] == [
        {
            "name": "pits",
            "type": "int",
            "default": 6,
            "min": 2,
            "max": 26,
            "constraint": "even",
            "help": "an even number from 2 to 26 (default 6)",
        },
        {
            "name": "seeds",
            "type": "int",
            "default": 5,
            "min": 1,
            "max": 49,
            "constraint": "odd",
            "help": "an odd number from 1 to 49 (default 5)",
        },
    ]


def test_it_refuses_an_option_spec_whose_default_breaks_its_own_rule() -> None:
    with pytest.raises(InvalidOptions, match="pits must be an even number"):
        OptionSpec(name="pits", default=5, minimum=2, maximum=26, constraint="even")


def test_it_refuses_to_register_a_slug_twice(stand_in: GameInfo) -> None:
    from games.rules.base import register

    with pytest.raises(ValueError, match="registered twice"):
        register(stand_in)


def test_the_diffusion_games_take_no_options() -> None:
    described = {g["slug"]: g for g in available_games()}
    assert described["diffusion"]["name"] == "Diffusion"
    assert described["diffusion"]["options"] == []
    assert described["four-rank-diffusion"]["name"] == "Four-rank Diffusion"
    assert described["four-rank-diffusion"]["options"] == []
