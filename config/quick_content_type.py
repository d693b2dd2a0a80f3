"""Twisted's reading of a POST's Content-Type without the email package for plain values.

Before handing a request on, Twisted's HTTP server reads the Content-Type of every POST with a
body (to decode a form itself) through `email.message.EmailMessage`, whose header registry
builds a parsed header object for it: 7% of a server's busy time while bots POSTed their moves
(JSON, a request a move; docs/PERFORMANCE.md, "The Bot API"). For a plain `type/subtype`,
with or without parameters, the email package's answer is that pair, lower-cased (what
`Message.get_content_type` returns); any other value still goes to Twisted's own function.
"""

from __future__ import annotations

import re

from twisted.web import http

_twisted_parse = http._parseContentType
# A token, a slash, a token (RFC 9110's characters), then nothing or parameters.
_TOKEN = rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_PLAIN = re.compile(rb"[ \t]*(" + _TOKEN + rb"/" + _TOKEN + rb")[ \t]*(?:;.*)?", re.DOTALL)


def parse_content_type(line: bytes) -> bytes:
    """What Twisted's `_parseContentType` answers for `line`: the media type, lower-cased."""
    found = _PLAIN.fullmatch(line)
    if found is None:
        return bytes(_twisted_parse(line))
    return found.group(1).lower()


def install() -> None:
    """Read the Content-Type of this process's HTTP requests with `parse_content_type`."""
    http._parseContentType = parse_content_type
