"""The site's settings with one fast clock for the browser tests: "1+0" is five seconds, so a
flag falls within a test. Everything else is the site as it is."""

from config.settings import *  # noqa: F403
from games import clocks

_parse = clocks.parse
FAST = clocks.TimeControl("realtime", 5_000, 0)  # stored as "0+0"


def _fast(text: object) -> clocks.TimeControl:
    if isinstance(text, str) and text.strip() in ("1+0", "0+0"):
        return FAST
    return _parse(text)


clocks.parse = _fast
