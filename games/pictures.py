"""Pictures of positions drawn on the server: a PNG of one position, an animated GIF of a game.

Drawn from the same description the pages draw from (`rules.board()` and `rules.to_json()`,
static/js/boards/mancala.js and chess.js): a pit board's pits with their counts and seeds, the
stores, the blocks with their labels and owners, ZigZag's captured seeds; Diffusion Chess's
19x19 grid with its white and black stones and the two kings (diamonds). The last move is
marked as the pages mark it: a corner triangle and a stronger edge on its pit or cells.

Pure drawing with Pillow (no Django): every picture is a palette ("P") image on one fixed
palette of a few colours, so that a PNG is small and quick to encode, and a GIF's frames share
one colour table and need no quantizing. The GIF is written a frame at a time, each frame only
the rectangle that changed since the one before: memory holds two frames and the bytes
written, however long the game.
"""

from __future__ import annotations

import functools
import io
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import GifImagePlugin, Image, ImageChops, ImageDraw, ImageFont

logger = logging.getLogger(__name__)

# The pages' colours (static/css/game.css); index = place in the palette.
COLOURS: dict[str, tuple[int, int, int]] = {
    "paper": (0xFF, 0xFF, 0xFF),
    "ink": (0x1D, 0x24, 0x30),
    "muted": (0x5B, 0x64, 0x73),
    "hole": (0xE9, 0xDF, 0xC9),
    "hole-edge": (0xB9, 0xA7, 0x7F),
    "seed": (0xA6, 0x95, 0x76),  # #6f5b3e at the page's 55% over the hole, made solid
    "pit-name": (0x6B, 0x5E, 0x45),
    "owner-1": (0x2F, 0x6F, 0x4F),
    "owner-2": (0x8A, 0x3B, 0x3B),
    "played": (0xC2, 0x41, 0x0C),
    "wood": (0xE8, 0xCF, 0x95),
    "grid": (0x8D, 0x74, 0x42),
    "white": (0xFB, 0xFB, 0xF7),
    "white-edge": (0x55, 0x55, 0x55),
    "black": (0x22, 0x22, 0x22),
    "king": (0xC5, 0x8B, 0x1C),
    "last-cell": (0xDD, 0xBB, 0x6F),  # the page's 28% wash of #c58b1c over the wood, solid
}
INK = {name: index for index, name in enumerate(COLOURS)}
# 32 entries: a GIF's colour table is a power of two; the unused ones are black.
PALETTE = [channel for rgb in COLOURS.values() for channel in rgb] + [0] * (3 * (32 - len(COLOURS)))

# The pages' units (mancala.js): a pit's cell, a store's width, the room above and below.
CELL = 64
STORE = 72
TOP = 46
BOTTOM = 28
CAPTURED = 22
HOLE = 24
# chess.js: the grid's cell and the margin that holds the coordinates; a caption below.
GRID_CELL = 30
GRID_MARGIN = 28
CAPTION = 26


def _moves_left(count: int) -> str:
    return f"({count} {'move' if count == 1 else 'moves'} left this turn)"


@dataclass(frozen=True)
class Words:
    """What a picture says, in one language: English here; games/picture_cache.py gives the
    reader's (the strings are %-formats, as Django's translations are)."""

    sides: tuple[str, str] = ("South", "North")  # players 1 and 2 of the mancalas
    colours: tuple[str, str] = ("White", "Black")  # players 1 and 2 of Diffusion Chess
    side_to_move: str = "%(side)s (to move)"
    store: str = "store"
    captured: str = "captured: %(south)s %(south_count)s · %(north)s %(north_count)s"
    game_over: str = "Game over"
    colour_to_move: str = "%(colour)s to move"
    moves_left: Callable[[int], str] = _moves_left
    last: str = "last: %(move)s"


ENGLISH = Words()

# Pictures wider than this are not drawn (the views refuse them): memory and time stay bounded.
MAX_WIDTH = 1600
MIN_WIDTH = 160


# The pictures' letters: Debian's DejaVu Sans (fonts-dejavu-core, installed by `make` and the
# image), which has every letter of the site's languages; Pillow's own font has ASCII only.
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


@functools.lru_cache(maxsize=64)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Loading a font costs about a millisecond: once per size, for the process.
    try:
        return ImageFont.truetype(FONT, max(size, 8))
    except OSError:
        logger.warning("%s is missing: pictures show ASCII letters only", FONT)
        return ImageFont.load_default(size=max(size, 8))


def _canvas(size: tuple[int, int], background: str = "paper") -> Image.Image:
    image = Image.new("P", size, INK[background])
    image.putpalette(PALETTE)
    return image


class _Pen:
    """Draws in the page's units, scaled to the picture's pixels."""

    def __init__(self, image: Image.Image, scale: float) -> None:
        self.draw = ImageDraw.Draw(image)
        self.s = scale

    def _xy(self, *points: float) -> list[float]:
        return [p * self.s for p in points]

    def _width(self, width: float) -> int:
        return max(1, round(width * self.s))

    def rect(
        self,
        box: tuple[float, float, float, float],
        *,
        fill: str | None = None,
        outline: str | None = None,
        width: float = 1,
        radius: float = 0,
    ) -> None:
        x, y, w, h = box
        self.draw.rounded_rectangle(
            self._xy(x, y, x + w, y + h),
            radius=radius * self.s,
            fill=INK[fill] if fill else None,
            outline=INK[outline] if outline else None,
            width=self._width(width),
        )

    def circle(
        self,
        cx: float,
        cy: float,
        r: float,
        *,
        fill: str | None = None,
        outline: str | None = None,
        width: float = 1,
    ) -> None:
        self.draw.ellipse(
            self._xy(cx - r, cy - r, cx + r, cy + r),
            fill=INK[fill] if fill else None,
            outline=INK[outline] if outline else None,
            width=self._width(width),
        )

    def polygon(
        self, points: Sequence[float], *, fill: str, outline: str | None = None, width: float = 1
    ) -> None:
        self.draw.polygon(
            self._xy(*points),
            fill=INK[fill],
            outline=INK[outline] if outline else None,
            width=self._width(width),
        )

    def line(self, points: Sequence[float], *, fill: str, width: float = 1) -> None:
        self.draw.line(self._xy(*points), fill=INK[fill], width=self._width(width))

    def text(
        self, x: float, y: float, words: str, *, size: float, fill: str = "ink", anchor: str = "mm"
    ) -> None:
        self.draw.text(
            (x * self.s, y * self.s),
            words,
            fill=INK[fill],
            font=_font(round(size * self.s)),
            anchor=anchor,
        )


# --- pit boards (Diffusion, Four-rank Diffusion, ZigZag) ---------------------------------------


def _pits_size(board: Mapping[str, Any], state: Mapping[str, Any]) -> tuple[float, float]:
    columns = len(board["names"][0])
    length = STORE * 2 + columns * CELL + 16
    depth = len(board["names"]) * CELL
    return length, depth + TOP + BOTTOM + (CAPTURED if "captured" in state else 0)


def _draw_pits(
    pen: _Pen,
    board: Mapping[str, Any],
    state: Mapping[str, Any],
    last_move: str | None,
    over: bool,
    words: Words,
) -> None:
    names: list[list[str]] = board["names"]
    rows: list[list[int]] = state["rows"]
    length, height = _pits_size(board, state)
    depth = len(rows) * CELL

    # North sits at the top, South at the bottom, as the page shows it to South.
    to_move = int(state.get("to_move", 1))
    for player, y in ((2, 17), (1, depth + TOP + 19)):
        side = words.sides[player - 1]
        said = side if over or player != to_move else words.side_to_move % {"side": side}
        pen.text(length / 2, y, said, size=14, anchor="ms")

    for block in board["blocks"]:
        first, last = block["columns"]
        x = STORE + 8 + first * CELL - 3
        w = (last - first + 1) * CELL + 6
        owner = int(block["owner"])
        pen.rect((x, TOP - 3, w, depth + 6), outline=f"owner-{owner}", width=2, radius=10)
        label = f"{block['label']} · {words.sides[owner - 1]}"
        pen.text(x + w / 2, TOP - 9, label, size=12, anchor="ms")

    for index, count in enumerate(state["stores"]):
        x = 6 if index == 0 else length - STORE - 2
        pen.rect((x, TOP, STORE - 8, depth), fill="hole", outline="hole-edge", width=2, radius=28)
        middle_x, middle_y = x + (STORE - 8) / 2, TOP + depth / 2
        pen.text(middle_x, middle_y - 18, words.store, size=11, fill="pit-name")
        pen.text(middle_x, middle_y + 4, str(count), size=18)

    for r, row in enumerate(rows):
        for c, count in enumerate(row):
            x, y = STORE + 8 + c * CELL, TOP + r * CELL
            cx, cy = x + CELL / 2, y + CELL / 2
            name = names[r][c]
            played = last_move is not None and last_move == name
            pen.circle(
                cx,
                cy,
                HOLE,
                fill="hole",
                outline="played" if played else "hole-edge",
                width=4 if played else 2,
            )
            if played:
                corner = (x + CELL - 2, y + CELL - 2)
                pen.polygon(
                    [*corner, corner[0] - 12, corner[1], corner[0], corner[1] - 12], fill="played"
                )
            _seeds(pen, cx, cy, count)
            pen.text(x + 4, y + 3, name, size=10, fill="pit-name", anchor="lt")
            pen.text(cx, cy, str(count), size=18)

    captured = state.get("captured")
    if captured is not None:
        south, north = captured
        said = words.captured % {
            "south": words.sides[0],
            "south_count": south,
            "north": words.sides[1],
            "north_count": north,
        }
        pen.text(length / 2, height - 6, said, size=14, anchor="ms")


def _seeds(pen: _Pen, cx: float, cy: float, count: int) -> None:
    # Up to 12 seeds in a ring round the count, as the page draws them.
    shown = min(count, 12)
    for i in range(shown):
        angle = i / shown * 6.283185307179586 - 1.5707963267948966
        pen.circle(cx + _cos(angle) * 17, cy + _sin(angle) * 17, 4, fill="seed")


@functools.cache
def _cos(angle: float) -> float:
    import math

    return math.cos(angle)


@functools.cache
def _sin(angle: float) -> float:
    import math

    return math.sin(angle)


# --- the grid (Diffusion Chess) --------------------------------------------------------------


def _grid_size(board: Mapping[str, Any]) -> tuple[float, float]:
    side = GRID_MARGIN * 2 + int(board["size"]) * GRID_CELL
    return side, side + CAPTION


def _draw_grid(
    pen: _Pen,
    board: Mapping[str, Any],
    state: Mapping[str, Any],
    last_move: str | None,
    over: bool,
    words: Words,
) -> None:
    files: str = board["files"]
    size = int(board["size"])
    side = GRID_MARGIN * 2 + size * GRID_CELL

    def at(cell: str) -> tuple[float, float]:
        # White at the bottom, as the page shows it to White.
        file, rank = files.index(cell[0]), int(cell[1:]) - 1
        return (
            GRID_MARGIN + file * GRID_CELL + GRID_CELL / 2,
            GRID_MARGIN + (size - 1 - rank) * GRID_CELL + GRID_CELL / 2,
        )

    pen.rect((GRID_MARGIN, GRID_MARGIN, size * GRID_CELL, size * GRID_CELL), fill="wood")
    last = last_move if last_move is not None else state.get("last_move")
    path = last.split("-") if last and last != "echo" else []
    for cell in path:
        x, y = at(cell)
        half = GRID_CELL / 2
        pen.rect((x - half, y - half, GRID_CELL, GRID_CELL), fill="last-cell")
    first, far = GRID_MARGIN + GRID_CELL / 2, side - GRID_MARGIN - GRID_CELL / 2
    for i in range(size):
        offset = GRID_MARGIN + i * GRID_CELL + GRID_CELL / 2
        pen.line([first, offset, far, offset], fill="grid")
        pen.line([offset, first, offset, far], fill="grid")
        pen.text(offset, side - GRID_MARGIN / 2, files[i], size=11, fill="muted")
        pen.text(offset, GRID_MARGIN / 2, files[i], size=11, fill="muted")
        rank = str(size - i)
        pen.text(GRID_MARGIN / 2, offset, rank, size=11, fill="muted")
        pen.text(side - GRID_MARGIN / 2, offset, rank, size=11, fill="muted")
    for cell in path:
        x, y = at(cell)
        left, top = x - GRID_CELL / 2 + 1, y - GRID_CELL / 2 + 1
        pen.polygon([left, top, left + 9, top, left, top + 9], fill="last-cell")
        pen.polygon([left, top, left + 8, top, left, top + 8], fill="played")

    kings = set(state.get("kings", {}).values())
    r = GRID_CELL / 2 - 3
    for colour, edge in (("white", "white-edge"), ("black", "black")):
        for cell in state[colour]:
            x, y = at(cell)
            if cell in kings:
                pen.polygon(
                    [x, y - r - 1, x + r + 1, y, x, y + r + 1, x - r - 1, y],
                    fill=colour,
                    outline="king",
                    width=2.5,
                )
            else:
                pen.circle(x, y, r, fill=colour, outline=edge, width=1.2)

    to_move = int(state.get("to_move", 1))
    if over:
        caption = words.game_over
    else:
        caption = words.colour_to_move % {"colour": words.colours[to_move - 1]}
        moves_left = state.get("moves_left")
        if moves_left:
            caption += f" {words.moves_left(int(moves_left))}"
    if last:
        caption += f" · {words.last % {'move': last}}"
    pen.text(side / 2, side + CAPTION / 2 - 2, caption, size=13)


# --- pictures ---------------------------------------------------------------------------------


def _size(board: Mapping[str, Any], state: Mapping[str, Any]) -> tuple[float, float]:
    if board["renderer"] == "grid":
        return _grid_size(board)
    return _pits_size(board, state)


def draw(
    board: Mapping[str, Any],
    state: Mapping[str, Any],
    *,
    last_move: str | None = None,
    over: bool = False,
    width: int = 600,
    words: Words = ENGLISH,
) -> Image.Image:
    """The position `state` (the engine's JSON) on the board `board` (rules.board()), `width`
    pixels wide, as a palette image."""
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"width must be from {MIN_WIDTH} to {MAX_WIDTH} pixels")
    units_wide, units_high = _size(board, state)
    scale = width / units_wide
    image = _canvas((width, round(units_high * scale)))
    pen = _Pen(image, scale)
    if board["renderer"] == "grid":
        _draw_grid(pen, board, state, last_move, over, words)
    elif board["renderer"] == "pits":
        _draw_pits(pen, board, state, last_move, over, words)
    else:
        raise ValueError(f"no drawing for the renderer {board['renderer']!r}")
    return image


def picture(
    rules: Any,
    state: Any,
    *,
    last_move: str | None = None,
    width: int = 600,
    words: Words = ENGLISH,
) -> Any:
    """The position as a palette image (Pillow's Image)."""
    return draw(
        rules.board(),
        rules.to_json(state),
        last_move=last_move,
        over=rules.outcome(state) is not None,
        width=width,
        words=words,
    )


def position_png(
    rules: Any,
    state: Any,
    *,
    last_move: str | None = None,
    width: int = 600,
    words: Words = ENGLISH,
) -> bytes:
    """The position `state` of the game `rules` plays as PNG bytes, its last move marked."""
    out = io.BytesIO()
    # compress_level 6 (zlib's default) is ~4x smaller than 1 for these flat pictures and
    # costs a millisecond or two at 600 pixels.
    drawn = picture(rules, state, last_move=last_move, width=width, words=words)
    drawn.save(out, "PNG", compress_level=6)
    return out.getvalue()


def positions(rules: Any, moves: Iterable[str]) -> Iterator[tuple[Any, str | None]]:
    """(state, the move that led to it) for the start and after each move."""
    state = rules.initial_state()
    yield state, None
    for move in moves:
        state = rules.play(state, move)
        yield state, move


def replay(rules: Any, moves: Sequence[str], ply: int) -> Any:
    """The state after the first `ply` moves."""
    state = rules.initial_state()
    for move in moves[:ply]:
        state = rules.play(state, move)
    return state


def game_gif(
    rules: Any,
    moves: Sequence[str],
    *,
    width: int = 480,
    delay_ms: int = 700,
    last_delay_ms: int = 3000,
    words: Words = ENGLISH,
) -> bytes:
    """The game from its start as an animated GIF, one frame per position (len(moves) + 1),
    looping; the last position stays `last_delay_ms`.

    Written frame by frame (Pillow's getheader and getdata): each frame after the first is
    only the rectangle that changed, on the first frame's colour table; memory holds the
    previous frame and the bytes so far, not every frame.
    """
    board = rules.board()
    out = io.BytesIO()
    previous: Image.Image | None = None
    total = len(moves) + 1
    for index, (state, move) in enumerate(positions(rules, moves)):
        frame = draw(
            board,
            rules.to_json(state),
            last_move=move,
            over=rules.outcome(state) is not None,
            width=width,
            words=words,
        )
        delay = last_delay_ms if index == total - 1 else delay_ms
        if previous is None:
            header, _ = GifImagePlugin.getheader(frame, info={"loop": 0})
            for chunk in header:
                out.write(chunk)
            chunks = GifImagePlugin.getdata(frame, duration=delay)
        else:
            if frame.size != previous.size:
                raise ValueError("a game's positions are all drawn the same size")
            # Palette indexes compare as grey levels: the box of pixels that changed.
            box = ImageChops.difference(previous, frame).getbbox() or (0, 0, 1, 1)
            chunks = GifImagePlugin.getdata(frame.crop(box), offset=box[:2], duration=delay)
        for chunk in chunks:
            out.write(chunk)
        previous = frame
    out.write(b";")  # the GIF's trailer
    return out.getvalue()
