"""A received mail's body as text, for the commands that read it (`multiple`, `message`,
`chat`, a reply to a "your move" mail).

The plain part is the body. Many mail programs write HTML only, or send an empty plain part
beside the HTML one (multipart/alternative): then the HTML is read as text, laid out as a
browser shows it, so that `<div>zigzag show 12</div><div>list</div>` is two lines and
`<b>zigzag</b>&nbsp;show 12` one. inscriptis does this (see pyproject.toml for why it).
"""

from __future__ import annotations

from email.message import EmailMessage, MIMEPart

from inscriptis import get_text
from inscriptis.css_profiles import STRICT_CSS_PROFILE
from inscriptis.html_properties import Display
from inscriptis.model.config import ParserConfig
from inscriptis.model.html_element import HtmlElement
from lxml import etree

# Firefox's default layout (block elements and <br> end lines, inline markup does not; no
# <head>, <style> or <script>), but without a reply's quoted text: a <blockquote> is the mail
# answered, not the sender's words, as the "> " lines of a plain reply are.
_CONFIG = ParserConfig(
    css={**STRICT_CSS_PROFILE, "blockquote": HtmlElement(display=Display.none)},
)


def html_as_text(html: str) -> str:
    """HTML as the text a reader sees; "" for what cannot be read as HTML."""
    try:
        return str(get_text(html, _CONFIG))
    except (ValueError, etree.LxmlError, RecursionError):
        return ""


def _content(part: MIMEPart | None) -> str:
    if part is None:
        return ""
    try:
        return str(part.get_content())
    except (LookupError, ValueError):  # an unknown or broken charset
        return ""


def body_text(message: EmailMessage) -> str:
    """The mail's text: its plain part, else (missing or blank) its HTML part read as text."""
    plain = _content(message.get_body(preferencelist=("plain",)))
    if plain.strip():
        return plain
    html = message.get_body(preferencelist=("html",))
    return html_as_text(_content(html)) if html is not None else plain
