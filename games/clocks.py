"""Time controls and game clocks: pure logic, times in integer milliseconds since the epoch.

The server is the only authority on time. A game's clock is a small JSON dict stored on
the game row and changed only inside the move transaction (games/transition.py, applied
under the row lock by games/services/):

    {"control": "5+3", "remaining": [ms, ms], "running": 1 | 2 | null, "since": ms,
     "moved": [bool, bool], "lag": [ms, ms]}

- "remaining" is each player's time at the moment "since" (the running side's time is
  counting down from there); "moved" says whether each player has made a first move:
  a real-time clock only runs once its player has moved (lichess), and until then the
  player must move within FIRST_MOVE_MS or the game is aborted.
- "lag" is each player's unused lag-compensation quota.
- Correspondence: each move must come within the control's days; "remaining" is reset to
  the full allowance at the start of every turn.
- Diffusion Chess: the clock belongs to the turn; it switches (and the increment is
  added) only when the turn passes.
- Vacation (correspondence): "paused_until" (ms, absent or null when none); no time runs
  on either side before it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from games.rules.base import Refusal, gettext_noop

FIRST_MOVE_MS = 30_000  # a real-time player's first move must come within this
ABANDON_MS = 60_000  # a real-time player away this long may be claimed against
LAG_QUOTA_MS = 5_000  # per player and game: network lag forgiven at most this much in all
LAG_PER_MOVE_MS = 1_000  # and at most this much on one move
CORRESPONDENCE_DAYS = (1, 2, 3, 5, 7, 14)
PRESETS = ("1+0", "3+2", "5+3", "10+5", "15+10", "30+20")
MAX_BASE_MINUTES = 180
MAX_INCREMENT_SECONDS = 180
DAY_MS = 86_400_000

_REALTIME = re.compile(r"(\d{1,3})\+(\d{1,3})")
_CORRESPONDENCE = re.compile(r"(\d{1,2})d")


def now_ms() -> int:
    """The server's time in ms since the epoch (time-machine moves it in tests)."""
    return int(time.time() * 1000)


class BadTimeControl(Refusal):
    """A time control that is not one we offer; the message says what is (a template and its
    params, as the engine's errors: games/messages.py translates it)."""


@dataclass(frozen=True)
class TimeControl:
    """Untimed, real-time `base+increment` (minutes + seconds) or correspondence (days)."""

    kind: Literal["untimed", "realtime", "correspondence"]
    base_ms: int = 0
    increment_ms: int = 0
    days: int = 0

    @property
    def code(self) -> str:
        """How it is stored and sent: "", "5+3" or "3d"."""
        if self.kind == "realtime":
            return f"{self.base_ms // 60_000}+{self.increment_ms // 1000}"
        if self.kind == "correspondence":
            return f"{self.days}d"
        return ""

    @property
    def label(self) -> str:
        if self.kind == "realtime":
            return f"{self.code} (real time)"
        if self.kind == "correspondence":
            return f"{self.days} day{'s' if self.days > 1 else ''} per move"
        return "untimed"

    @property
    def realtime(self) -> bool:
        return self.kind == "realtime"

    @property
    def correspondence(self) -> bool:
        return self.kind == "correspondence"

    def describe(self) -> dict[str, Any]:
        return {"code": self.code, "kind": self.kind, "label": self.label}


UNTIMED = TimeControl("untimed")


def parse(text: object) -> TimeControl:
    """The time control `text` names: "" or "untimed", "M+S" or "Nd"; BadTimeControl if none."""
    if text is None:
        return UNTIMED
    if not isinstance(text, str):
        raise BadTimeControl(gettext_noop("a time control is text such as 5+3, 3d or untimed"))
    value = text.strip().lower().replace(" ", "")
    if value in ("", "untimed", "none", "-"):
        return UNTIMED
    if match := _REALTIME.fullmatch(value):
        minutes, seconds = int(match[1]), int(match[2])
        if not 1 <= minutes <= MAX_BASE_MINUTES or seconds > MAX_INCREMENT_SECONDS:
            raise BadTimeControl(
                gettext_noop(
                    "real-time controls are 1 to %(minutes)s minutes plus 0 to %(seconds)s "
                    "seconds a move, not %(text)s"
                ),
                minutes=MAX_BASE_MINUTES,
                seconds=MAX_INCREMENT_SECONDS,
                text=text.strip()[:20],
            )
        return TimeControl("realtime", minutes * 60_000, seconds * 1000)
    if match := _CORRESPONDENCE.fullmatch(value.removesuffix("ays").removesuffix("ay")):
        days = int(match[1])
        if days not in CORRESPONDENCE_DAYS:
            allowed = ", ".join(map(str, CORRESPONDENCE_DAYS))
            raise BadTimeControl(
                gettext_noop("correspondence is %(allowed)s days per move, not %(days)s"),
                allowed=allowed,
                days=days,
            )
        return TimeControl("correspondence", days=days)
    raise BadTimeControl(
        gettext_noop(
            "unknown time control %(text)s: use minutes+seconds (5+3), days (3d) or untimed"
        ),
        text=repr(text.strip()[:20]),
    )


def offered() -> dict[str, Any]:
    """What the lobby's forms offer."""
    return {
        "presets": list(PRESETS),
        "correspondence_days": list(CORRESPONDENCE_DAYS),
        "max_base_minutes": MAX_BASE_MINUTES,
        "max_increment_seconds": MAX_INCREMENT_SECONDS,
    }


# --- the clock of a game --------------------------------------------------------------------


def start(control: TimeControl, now: int) -> dict[str, Any] | None:
    """A new game's clock (None when untimed): player 1's turn starts now."""
    if control.kind == "untimed":
        return None
    full = control.base_ms if control.realtime else control.days * DAY_MS
    return {
        "control": control.code,
        "remaining": [full, full],
        "running": 1,
        "since": now,
        "moved": [False, False],
        "lag": [LAG_QUOTA_MS, LAG_QUOTA_MS],
    }


@dataclass(frozen=True)
class Due:
    """What happens at a deadline: the running player loses on time, or (no first move
    yet in a real-time game) the game is aborted."""

    at: int
    player: int
    abort: bool


def counting_from(clock: dict[str, Any]) -> int:
    """When the running side's time (re)started counting: a vacation holds it back."""
    return max(clock["since"], clock.get("paused_until") or 0)


def paused(clock: dict[str, Any] | None, now: int, until: int) -> dict[str, Any] | None:
    """The clock stood still from `now` until `until` (a vacation): the time the running
    side has used so far is charged first, so the pause forgives nothing before it."""
    if not clock:
        return clock
    clock = {**clock, "remaining": list(clock["remaining"])}
    running = clock.get("running")
    if running:
        seat = running - 1
        used = max(0, now - counting_from(clock))
        clock["remaining"][seat] = max(0, clock["remaining"][seat] - used)
    clock["since"] = now
    clock["paused_until"] = until
    return clock


def due(clock: dict[str, Any] | None) -> Due | None:
    """When the running side runs out (or must have made a first move), if anything runs."""
    if not clock or not clock.get("running"):
        return None
    player = clock["running"]
    control = parse(clock["control"])
    if control.realtime and not clock["moved"][player - 1]:
        return Due(clock["since"] + FIRST_MOVE_MS, player, abort=True)
    return Due(counting_from(clock) + clock["remaining"][player - 1], player, abort=False)


def after_move(
    clock: dict[str, Any],
    *,
    player: int,
    turn_over: bool,
    game_over: bool,
    now: int,
    lag: int = 0,
    excused: int = 0,
) -> dict[str, Any]:
    """The clock after `player` moved at `now` (the caller has checked `due` first).

    `lag` is the mover's measured one-way network delay: forgiven up to LAG_PER_MOVE_MS a
    move and the player's remaining quota, so a fast move on a slow line is not punished.
    `excused` is time that does not count at all (the opponent was away: abandonment).
    """
    control = parse(clock["control"])
    clock = {**clock, "remaining": list(clock["remaining"]), "lag": list(clock["lag"])}
    seat = player - 1
    elapsed = max(0, now - clock["since"] - max(0, excused))
    if control.realtime:
        if clock["moved"][seat]:
            forgiven = min(max(0, lag), LAG_PER_MOVE_MS, clock["lag"][seat], elapsed)
            clock["lag"][seat] -= forgiven
            clock["remaining"][seat] = max(0, clock["remaining"][seat] - (elapsed - forgiven))
            if turn_over:
                clock["remaining"][seat] += control.increment_ms
        clock["moved"] = [*clock["moved"]]
        clock["moved"][seat] = True
    elif turn_over:  # correspondence: the next turn gets the whole allowance again
        clock["remaining"][seat] = control.days * DAY_MS
    clock["since"] = now
    if game_over:
        clock["running"] = None
    elif turn_over:
        clock["running"] = 3 - player
    return clock


def stopped(clock: dict[str, Any] | None, now: int) -> dict[str, Any] | None:
    """The clock at the end of the game: the running side's time used up to now."""
    if not clock or not clock.get("running"):
        return clock
    clock = {**clock, "remaining": list(clock["remaining"])}
    seat = clock["running"] - 1
    if not parse(clock["control"]).realtime or clock["moved"][seat]:
        used = max(0, now - counting_from(clock))
        clock["remaining"][seat] = max(0, clock["remaining"][seat] - used)
    clock["since"] = now
    clock["running"] = None
    return clock


def view(clock: dict[str, Any] | None, now: int) -> dict[str, Any] | None:
    """The clock as clients see it: both times as of `now`, who runs, the server's time."""
    if not clock:
        return None
    control = parse(clock["control"])
    remaining = list(clock["remaining"])
    running = clock.get("running")
    first_move_by = None
    if running:
        seat = running - 1
        if control.realtime and not clock["moved"][seat]:
            first_move_by = clock["since"] + FIRST_MOVE_MS
        else:
            remaining[seat] = max(0, remaining[seat] - max(0, now - counting_from(clock)))
    paused_until = clock.get("paused_until")
    return {
        **control.describe(),
        "remaining": remaining,
        "running": running,
        "first_move_by": first_move_by,
        "server_time": now,
        "paused_until": paused_until if paused_until and paused_until > now else None,
    }
