"""Positions and games as short text, for people to copy, paste and share (docs/NOTATION.md).

    text = position_text(rules, state)     # one line, fields separated by spaces
    state = parse_position(rules, text)    # the same state back, or BadNotation saying why
    game_text(moves)                       # "1. I 2. b 3. echo": the moves, numbered
    parse_game(rules, text, start)         # the moves checked by the rules, or BadNotation
    editor_fields(rules)                   # how a position editor sets each field up

A position's text holds everything its JSON holds (`rules.to_json`), so the round trip is exact;
fields that have their usual value at the end of a line may be left out. Whether a position
could happen is the engine's `from_json` check: the notation only spells it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from games.rules.base import IllegalMove, Message, Refusal, Rules, gettext_noop
from games.rules.chess import FILES, SIDE, DiffusionChessRules, count_groups, group_sizes
from games.rules.diffusion import DiffusionRules
from games.rules.zigzag import ZigZagRules

# A position's text is short; anything much longer is not one (and is not worth parsing).
LONGEST_POSITION = 200_000
LONGEST_GAME = 400_000
_NUMBER = re.compile(r"[0-9]{1,6}")


class BadNotation(Refusal):
    """Text that does not spell a position (or game) of this game; the message says why."""


def position_text(rules: Rules, state: Any) -> str:
    """The position as one line of text."""
    return _family(rules)[0](rules, rules.to_json(state))


def parse_position(rules: Rules, text: object) -> Any:
    """The state a position's text spells; BadNotation when it spells none."""
    if not isinstance(text, str):
        raise BadNotation(gettext_noop("a position is a line of text"))
    if len(text) > LONGEST_POSITION:
        raise BadNotation(
            gettext_noop("a position is at most %(most)s characters"), most=LONGEST_POSITION
        )
    fields = text.split()
    if not fields:
        raise BadNotation(gettext_noop("the position is empty"))
    data = _family(rules)[1](rules, fields)
    try:
        return rules.from_json(data)
    except ValueError as error:
        raise BadNotation(
            gettext_noop("not a position of this game: %(error)s"), error=error
        ) from None


def editor_fields(rules: Rules) -> list[dict[str, Any]]:
    """The fields of a position's text as a position editor sets them up (the analysis
    board's, static/js/editor.js; docs/PROTOCOL.md, "Analysis"), in the text's order, so that
    the editor knows no game: `kind` says how a field is set (`pits`: a count per pit of the
    board; `numbers`: counts joined by commas, one per `labels`; `choice`: one of `choices`;
    `number`: a whole number from `min` (to `max`); `grid`: a man per cell of a grid board,
    from `men`; `fixed`: `value`, not set by hand). A field with `usual` is left off the end
    of the text when it has that value, as position_text does; the fields after the last one
    described take their usual values. The words (`label`, `labels`, `hint`) are English,
    marked for the site to translate."""
    return _family(rules)[2](rules)


def game_text(moves: Sequence[str]) -> str:
    """The moves numbered from 1, as pbmserv listed them: "1. I 2. b"."""
    return " ".join(f"{number}. {move}" for number, move in enumerate(moves, 1))


def parse_game(rules: Rules, text: object, start: Any = None) -> list[str]:
    """The moves of a game's text, each checked against the rules from `start` (the initial
    position by default) and written canonically. Numbers ("12." or "12.") and the player
    markers of the site's text view ("(1)") are skipped. BadNotation names the first move
    that is not legal."""
    if not isinstance(text, str):
        raise BadNotation(gettext_noop("a game is text: its moves, separated by spaces"))
    if len(text) > LONGEST_GAME:
        raise BadNotation(gettext_noop("a game is at most %(most)s characters"), most=LONGEST_GAME)
    state = rules.initial_state() if start is None else start
    moves: list[str] = []
    for token in text.split():
        if re.fullmatch(r"[0-9]+\.|\([12]\)", token):
            continue
        if rules.outcome(state) is not None:
            raise BadNotation(
                gettext_noop("move %(number)s (%(move)s) comes after the game ended"),
                number=len(moves) + 1,
                move=token[:40],
            )
        try:
            move = rules.canonical_move(state, token)
            state = rules.play(state, move)
        except IllegalMove as error:
            raise BadNotation(
                gettext_noop("move %(number)s (%(move)s): %(error)s"),
                number=len(moves) + 1,
                move=token[:40],
                error=error,
            ) from None
        moves.append(move)
    return moves


# --- Diffusion and Four-rank Diffusion: "4,4,4,4,4,4/4,4,4,4,4,4 0,0 1" -------------------


def _pits_text(rules: Any, data: dict[str, Any]) -> str:
    rows = "/".join(",".join(map(str, row)) for row in data["rows"])
    stores = ",".join(map(str, data["stores"]))
    return f"{rows} {stores} {data['to_move']}"


def _pits_data(rules: Any, fields: list[str]) -> dict[str, Any]:
    _count(fields, 3, 3, gettext_noop("rows, stores and the player to move"))
    return {
        "rows": _rows(fields[0]),
        "stores": _numbers(fields[1], gettext_noop("stores")),
        "to_move": _player(fields[2]),
    }


_TO_MOVE = {
    "name": "side",
    "kind": "choice",
    "label": gettext_noop("To move"),
    "choices": [
        {"value": "1", "label": gettext_noop("South (player 1)")},
        {"value": "2", "label": gettext_noop("North (player 2)")},
    ],
}


def _pits_fields(rules: Any) -> list[dict[str, Any]]:
    return [
        {"name": "pit", "kind": "pits"},
        {
            "name": "store",
            "kind": "numbers",
            "labels": [gettext_noop("Left store"), gettext_noop("Right store")],
        },
        _TO_MOVE,
    ]


# --- ZigZag: "5,5,5,5,5,5/5,5,5,5,5,5 0,0 1" and, where not usual, more ---------------------

_ZIGZAG_USUAL = ("-", "0", "-", "-")


def _zigzag_text(rules: Any, data: dict[str, Any]) -> str:
    rows = "/".join(",".join(map(str, row)) for row in data["rows"])
    captured = ",".join(map(str, data["captured"]))
    history = ";".join(entry.replace(" ", ",") for entry in data["repetition"]) or "-"
    extra = [data["no_return"] or "-", str(data["last_capturer"]), data["end"] or "-", history]
    while extra and extra[-1] == _ZIGZAG_USUAL[len(extra) - 1]:
        extra.pop()
    return " ".join([rows, captured, str(data["to_move"]), *extra])


def _zigzag_data(rules: Any, fields: list[str]) -> dict[str, Any]:
    _count(
        fields,
        3,
        7,
        gettext_noop("rows, captured, player to move, no-return pit, last capturer, end, history"),
    )
    fields = fields + list(_ZIGZAG_USUAL[len(fields) - 3 :])
    captured = _numbers(fields[1], gettext_noop("captured"))
    if len(captured) != 2:
        raise BadNotation(
            gettext_noop("captured is South's and North's seeds: two numbers, 'south,north'")
        )
    history = (
        [] if fields[6] == "-" else [entry.replace(",", " ") for entry in fields[6].split(";")]
    )
    return {
        "rows": _rows(fields[0]),
        "stores": [captured[1], captured[0]],
        "captured": captured,
        "to_move": _player(fields[2]),
        "no_return": None if fields[3] == "-" else fields[3],
        "last_capturer": _number(fields[4], gettext_noop("the last capturer")),
        "end": None if fields[5] == "-" else fields[5],
        "repetition": history,
    }


def _zigzag_fields(rules: Any) -> list[dict[str, Any]]:
    return [
        {"name": "pit", "kind": "pits"},
        {
            "name": "store",
            "kind": "numbers",
            "labels": [gettext_noop("South has captured"), gettext_noop("North has captured")],
        },
        _TO_MOVE,
        # The pit the player to move may not lift comes of a move played, not of a position
        # set up by hand: the editor leaves it at its usual "-".
        {"name": "no-return", "kind": "fixed", "value": "-", "usual": "-"},
        {
            "name": "last",
            "kind": "choice",
            "label": gettext_noop("Last to capture"),
            "choices": [
                {"value": "0", "label": gettext_noop("nobody yet")},
                {"value": "1", "label": gettext_noop("South")},
                {"value": "2", "label": gettext_noop("North")},
            ],
            "usual": "0",
        },
    ]


# --- Diffusion Chess: "2OO2OO2OOO2OO2OO/... w 1 4" ----------------------------------------
#
# The board row by row from 19 down to 1, '/' between rows; in a row, from file a: O a white
# stone, X a black one, K White's king, k Black's, a number for that many empty cells. Then
# w or b, the turn and the moves left. Mid-turn, and only then, more fields follow: the
# mover's groups at the start of the turn, the stones moved this turn, the stones whose
# turn-start group size is not their group's size now (cell=size), the last move, the result.

_STONE_LETTERS = {"O": (1, False), "X": (2, False), "K": (1, True), "k": (2, True)}
_TWO_KINGS = {
    "white": gettext_noop("white has two kings"),
    "black": gettext_noop("black has two kings"),
}
_CHESS_USUAL_MID_TURN = 5


def _chess_text(rules: Any, data: dict[str, Any]) -> str:
    board = {name: 1 for name in data["white"]} | {name: 2 for name in data["black"]}
    kings = {data["kings"]["white"]: "K", data["kings"]["black"]: "k"}
    rows = []
    for row in range(SIDE, 0, -1):
        text, empty = "", 0
        for file in FILES:
            name = f"{file}{row}"
            if name not in board:
                empty += 1
                continue
            text += (str(empty) if empty else "") + (kings.get(name) or ".OX"[board[name]])
            empty = 0
        rows.append(text + (str(empty) if empty else ""))
    fields = ["/".join(rows), "wb"[data["to_move"] - 1], str(data["turn"]), str(data["moves_left"])]
    now = _chess_sizes(data)
    odd = [f"{name}={size}" for name, size in data["sizes"].items() if now[name] != size]
    extra = [
        str(data["start_groups"]),
        ",".join(data["moved"]) or "-",
        ",".join(odd) or "-",
        data["last_move"] or "-",
        data["result"] or "-",
    ]
    if extra[1:] != ["-"] * 4 or data["start_groups"] != _chess_groups(data):
        fields += extra
    return " ".join(fields)


def _chess_data(rules: Any, fields: list[str]) -> dict[str, Any]:
    _count(
        fields,
        4,
        4 + _CHESS_USUAL_MID_TURN,
        gettext_noop("board, side, turn, moves left and turn fields"),
    )
    rows = fields[0].split("/")
    if len(rows) != SIDE:
        raise BadNotation(
            gettext_noop("the board has %(rows)s rows, from 19 down to 1, separated by '/'"),
            rows=SIDE,
        )
    white: list[str] = []
    black: list[str] = []
    kings: dict[str, str] = {}
    for row, text in zip(range(SIDE, 0, -1), rows, strict=True):
        file = 0
        for token in re.findall(r"[0-9]+|.", text):
            if token.isdigit():
                file += int(token)
                continue
            if token not in _STONE_LETTERS or file >= SIDE:
                if file >= SIDE:
                    raise BadNotation(gettext_noop("row %(row)s: too long"), row=row)
                raise BadNotation(
                    gettext_noop("row %(row)s: %(token)s is not O, X, K, k or a number"),
                    row=row,
                    token=repr(token),
                )
            colour, king = _STONE_LETTERS[token]
            name = f"{FILES[file]}{row}"
            (white if colour == 1 else black).append(name)
            if king:
                side = "white" if colour == 1 else "black"
                if side in kings:
                    raise BadNotation(_TWO_KINGS[side])
                kings[side] = name
            file += 1
        if file != SIDE:
            raise BadNotation(
                gettext_noop("row %(row)s has %(cells)s cells, not %(side)s"),
                row=row,
                cells=file,
                side=SIDE,
            )
    if set(kings) != {"white", "black"}:
        raise BadNotation(gettext_noop("each side needs its king: K for White's, k for Black's"))
    if fields[1] not in ("w", "b"):
        raise BadNotation(gettext_noop("the side to move is w or b"))
    data: dict[str, Any] = {
        "white": sorted(white),
        "black": sorted(black),
        "kings": kings,
        "to_move": 1 if fields[1] == "w" else 2,
        "turn": _number(fields[2], gettext_noop("the turn")),
        "moves_left": _number(fields[3], gettext_noop("the moves left")),
    }
    now = _chess_sizes(data)
    extra = fields[4:] or [str(_chess_groups(data)), "-", "-", "-", "-"]
    if len(extra) != _CHESS_USUAL_MID_TURN:
        raise BadNotation(
            gettext_noop("mid-turn, five fields follow: start groups, moved, sizes, last, result")
        )
    sizes = dict(now)
    for item in [] if extra[2] == "-" else extra[2].split(","):
        name, _, size = item.partition("=")
        if name not in sizes:
            raise BadNotation(
                gettext_noop("sizes: %(item)s is not cell=size for a stone"), item=repr(item[:20])
            )
        sizes[name] = _number(size, Message(gettext_noop("the size of %(cell)s"), cell=name))
    data |= {
        "moved": [] if extra[1] == "-" else sorted(extra[1].split(",")),
        "sizes": dict(sorted(sizes.items())),
        "start_groups": _number(extra[0], gettext_noop("the start groups")),
        "last_move": None if extra[3] == "-" else extra[3],
        "result": None if extra[4] == "-" else extra[4],
    }
    return data


def _chess_fields(rules: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": "board",
            "kind": "grid",
            "hint": gettext_noop(
                "Click a cell to change it: empty, white stone, black stone, White's king, "
                "Black's king."
            ),
            # A click steps a cell through the men in this order. A side has one king: a king
            # set on a cell turns the side's other one, if any, into its `single` man.
            "men": [
                {"value": ".", "label": gettext_noop("empty")},
                {"value": "O", "label": gettext_noop("a white stone")},
                {"value": "X", "label": gettext_noop("a black stone")},
                {"value": "K", "label": gettext_noop("White's king"), "single": "O"},
                {"value": "k", "label": gettext_noop("Black's king"), "single": "X"},
            ],
        },
        {
            "name": "side",
            "kind": "choice",
            "label": gettext_noop("To move"),
            "choices": [
                {"value": "w", "label": gettext_noop("White")},
                {"value": "b", "label": gettext_noop("Black")},
            ],
        },
        {"name": "turn", "kind": "number", "label": gettext_noop("Turn"), "min": 1},
        {"name": "left", "kind": "number", "label": gettext_noop("Moves left"), "min": 0, "max": 5},
    ]


def _chess_board(data: dict[str, Any]) -> list[int]:
    board = [0] * (SIDE * SIDE)
    for colour, key in ((1, "white"), (2, "black")):
        for name in data[key]:
            board[(int(name[1:]) - 1) * SIDE + FILES.index(name[0])] = colour
    return board


def _chess_sizes(data: dict[str, Any]) -> dict[str, int]:
    """Each stone's group size on the board as it is."""
    sizes = group_sizes(_chess_board(data))
    return {
        name: sizes[(int(name[1:]) - 1) * SIDE + FILES.index(name[0])]
        for name in (*data["white"], *data["black"])
    }


def _chess_groups(data: dict[str, Any]) -> int:
    return count_groups(_chess_board(data), data["to_move"])


# --- shared --------------------------------------------------------------------------------

_Family = tuple[
    Callable[[Any, dict[str, Any]], str],
    Callable[[Any, list[str]], dict[str, Any]],
    Callable[[Any], list[dict[str, Any]]],
]


def _family(rules: Rules) -> _Family:
    if isinstance(rules, DiffusionRules):
        return _pits_text, _pits_data, _pits_fields
    if isinstance(rules, ZigZagRules):
        return _zigzag_text, _zigzag_data, _zigzag_fields
    if isinstance(rules, DiffusionChessRules):
        return _chess_text, _chess_data, _chess_fields
    raise TypeError(f"no notation for {rules.slug}")


def _count(fields: list[str], least: int, most: int, what: str) -> None:
    """`what` (marked with gettext_noop) names the fields."""
    if not least <= len(fields) <= most:
        if least == most:
            template = gettext_noop(
                "%(least)s fields separated by spaces (%(what)s), not %(count)s"
            )
        else:
            template = gettext_noop(
                "%(least)s to %(most)s fields separated by spaces (%(what)s), not %(count)s"
            )
        raise BadNotation(template, least=least, most=most, what=Message(what), count=len(fields))


def _number(text: str, what: str | Message) -> int:
    """`what` (marked with gettext_noop) names the number."""
    if not _NUMBER.fullmatch(text):
        raise BadNotation(
            gettext_noop("%(what)s must be a whole number, not %(text)s"),
            what=what if isinstance(what, Message) else Message(what),
            text=repr(text[:20]),
        )
    return int(text)


def _numbers(text: str, what: str) -> list[int]:
    return [_number(part, what) for part in text.split(",")]


def _rows(text: str) -> list[list[int]]:
    return [_numbers(row, gettext_noop("a pit's count")) for row in text.split("/")]


def _player(text: str) -> int:
    if text not in ("1", "2"):
        raise BadNotation(
            gettext_noop("the player to move is 1 or 2, not %(text)s"), text=repr(text[:20])
        )
    return int(text)
