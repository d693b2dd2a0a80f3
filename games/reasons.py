"""A game's stored reason ("alice resigned", "block A is empty") in the reader's language.

A result's reason is stored and sent once for everybody on the game, in English: the event
rows, the broadcast and the game row hold one text (docs/TRANSLATING.md). Each reader's side
(a page, a socket's frames) says it in the reader's language: the English text is read back
into the catalog template it was made from ("%(name)s resigned" with name=alice) and that
template's translation is filled in with the same values. A text no template makes is shown
as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import msgspec
from django.conf import settings
from django.utils import translation
from django.utils.translation import trans_real

_PLACEHOLDER = re.compile(r"%\((?P<name>[a-zA-Z_][a-zA-Z0-9_]*)\)s")
# Templates worth trying: some words of their own besides the placeholders (a bare
# "%(name)s" would read anything).
_WORDS = re.compile(r"[^\W\d_]{3,}")


def translate(text: str) -> str:
    """The reason in the active language (the text as it is in English or when unknown)."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    if not text or language == settings.LANGUAGE_CODE:
        return text
    return _translated(text, language)


def translate_result(result: Any) -> Any:
    """A result mapping ({"winner", "termination", "reason"}) with its reason translated."""
    if isinstance(result, dict) and isinstance(result.get("reason"), str):
        return {**result, "reason": translate(result["reason"])}
    return result


def localize_state(state: Any) -> Any:
    """A game's view ({"result": ...} among the rest) with its result's reason translated."""
    if isinstance(state, dict) and isinstance(state.get("result"), dict):
        return {**state, "result": translate_result(state["result"])}
    return state


def localize_frame(text: str) -> str:
    """A frame's JSON text with the result reasons it carries (its own `result`, or its
    game's) in the active language; the same text when there is nothing to translate."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    if language == settings.LANGUAGE_CODE or '"reason":' not in text:
        return text
    frame = msgspec.json.decode(text)
    if not isinstance(frame, dict):
        return text
    changed = False
    for holder in (frame, frame.get("game")):
        if isinstance(holder, dict) and isinstance(holder.get("result"), dict):
            translated = translate_result(holder["result"])
            if translated != holder["result"]:
                holder["result"] = translated
                changed = True
    return msgspec.json.encode(frame).decode() if changed else text


@lru_cache(maxsize=4096)
def _translated(text: str, language: str) -> str:
    with translation.override(language):
        direct = translation.gettext(text)
        if direct != text:
            return direct
        for template, pattern in _patterns(language):
            found = pattern.fullmatch(text)
            if found is None:
                continue
            values = {
                name: _translated(value, language) if " " in value else value
                for name, value in found.groupdict().items()
            }
            return translation.gettext(template) % values
    return text


@lru_cache(maxsize=16)
def _patterns(language: str) -> list[tuple[str, re.Pattern[str]]]:
    """Every template of the language's catalog, most specific (most words of its own) first."""
    catalog = trans_real.translation(language)._catalog
    templates = []
    for key in catalog.keys():  # noqa: SIM118 (a TranslationCatalog, not iterable)
        if not isinstance(key, str) or "\x04" in key or "%(" not in key:
            continue
        literal = _PLACEHOLDER.sub("", key)
        if "%" in literal or not _WORDS.search(literal):
            continue  # positional placeholders, or nothing of its own to match on
        templates.append((len(literal), key))
    templates.sort(reverse=True)
    return [(key, _pattern(key)) for _length, key in templates]


def _pattern(template: str) -> re.Pattern[str]:
    parts, seen, at = [], set(), 0
    for found in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[at : found.start()]))
        name = found.group("name")
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        at = found.end()
    parts.append(re.escape(template[at:]))
    return re.compile("".join(parts), re.DOTALL)
