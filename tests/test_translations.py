"""The shipped languages are complete: every string the source marks is in each language's
catalogs, translated (no empty or fuzzy entry), with the same placeholders, compiled; and every
rules page has its translation, with the same diagrams.

A new string in the source fails `test_the_catalogs_hold_every_marked_string` until
`make messages` is run, and then `test_every_string_is_translated` until it is translated
(docs/TRANSLATING.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

from games.rules import available_games
from games.rules_pages import DIAGRAM_FENCE, RULES_DIR, documented_games, rules_page_for
from games.selectors import title_for

ROOT = Path(settings.BASE_DIR)
LOCALE = ROOT / "locale"
TRANSLATED = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
DOMAINS = ["django", "djangojs"]
CATALOGS = [(language, domain) for language in TRANSLATED for domain in DOMAINS]

# %(name)s, %s, %d, %%: what Python and interpolate() fill in. Django templates' blocktranslate
# writes its variables as %(name)s too.
PLACEHOLDER = re.compile(r"%(?:\([a-zA-Z_][a-zA-Z0-9_]*\))?[sdif%]")
# Markup a translation must keep: tags (by name) and entities.
TAG = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")


def catalog(language: str, domain: str) -> polib.POFile:
    path = LOCALE / language / "LC_MESSAGES" / f"{domain}.po"
    assert path.is_file(), f"{path} is missing: run `make messages`"
    return polib.pofile(str(path))


def texts(entry: polib.POEntry) -> list[tuple[str, str]]:
    """(source, translation) pairs of an entry: one, or one per plural form."""
    if entry.msgid_plural:
        return [
            (entry.msgid if int(index) == 0 else entry.msgid_plural, text)
            for index, text in sorted(entry.msgstr_plural.items())
        ]
    return [(entry.msgid, entry.msgstr)]


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_string_is_translated(language: str, domain: str) -> None:
    po = catalog(language, domain)
    untranslated = [entry.msgid for entry in po if not entry.obsolete and not entry.translated()]
    fuzzy = [entry.msgid for entry in po if "fuzzy" in entry.flags]
    assert not untranslated, (
        f"{language}/{domain}: {len(untranslated)} untranslated: {untranslated[:20]}"
    )
    assert not fuzzy, f"{language}/{domain}: {len(fuzzy)} fuzzy: {fuzzy[:20]}"
    assert po.percent_translated() == 100


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_translations_keep_the_placeholders_and_markup(language: str, domain: str) -> None:
    wrong = []
    for entry in catalog(language, domain):
        for source, text in texts(entry):
            if not text:
                continue
            # A plural's singular may say "one" instead of %(n)s (French "un coup").
            source_holders = sorted(set(PLACEHOLDER.findall(source)))
            holders = sorted(set(PLACEHOLDER.findall(text)))
            if holders != source_holders and not (
                entry.msgid_plural and set(holders) < set(source_holders)
            ):
                wrong.append((source, text, "placeholders"))
            if sorted(TAG.findall(source)) != sorted(TAG.findall(text)):
                wrong.append((source, text, "tags"))
            # Templates put some translations inside attributes, unescaped: a straight double
            # quote of the translator's own would end the attribute.
            if text.count('"') > source.count('"'):
                wrong.append((source, text, "straight double quote"))
    assert not wrong, f"{language}/{domain}: {wrong[:10]}"


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_compiled_catalogs_are_those_of_the_sources(language: str, domain: str) -> None:
    po = catalog(language, domain)
    mo_path = LOCALE / language / "LC_MESSAGES" / f"{domain}.mo"
    assert mo_path.is_file(), f"{mo_path} is missing: run `make messages`"
    compiled = {(entry.msgctxt, entry.msgid): entry for entry in polib.mofile(str(mo_path))}
    for entry in po.translated_entries():
        found = compiled.get((entry.msgctxt, entry.msgid))
        assert found is not None, f"{mo_path.name} lacks {entry.msgid!r}: run `make messages`"
        assert (found.msgstr, found.msgstr_plural) == (entry.msgstr, entry.msgstr_plural), (
            f"{mo_path.name} is older than its .po for {entry.msgid!r}: run `make messages`"
        )


def _msgids(po: polib.POFile) -> set[tuple[str | None, str]]:
    return {(entry.msgctxt, entry.msgid) for entry in po if not entry.obsolete}


def test_the_catalogs_hold_every_marked_string() -> None:
    if shutil.which("xgettext") is None:
        pytest.fail(
            "GNU gettext is needed: `make gettext` (apt-get install gettext)", pytrace=False
        )
    # makemessages into a copy of the catalogs: what it would add or drop is what the source
    # marks and the committed catalogs do not hold (or no longer need). makemessages writes a
    # source's strings to the first locale directory whose parent holds the source, putting
    # first every directory called locale it walks past: the copy sits at the top of the tree
    # and locale/ is not walked (else the run went into locale/ itself, the copy unchanged).
    copy = ROOT / f".catalog-check-{uuid.uuid4().hex[:12]}"
    shutil.copytree(LOCALE, copy)
    try:
        _compare_with_makemessages(copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _compare_with_makemessages(copy: Path) -> None:
    makefile = (ROOT / "Makefile").read_text()
    ignores = re.search(r"MESSAGE_IGNORES := (.*?)\n(?!\t)", makefile, re.DOTALL)
    assert ignores, "the Makefile names what makemessages ignores"
    ignore = ignores.group(1).replace("\\\n", " ").replace("'", "").split()
    env = {
        **os.environ,
        "DJANGO_LOCALE_DIR": str(copy),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.setdefault("DJANGO_SECRET_KEY", "catalog-check-only-secret-key-not-for-production-000")
    for domain in DOMAINS:
        subprocess.run(
            [
                sys.executable,
                "manage.py",
                "makemessages",
                "-l",
                TRANSLATED[0],
                "-d",
                domain,
                "--no-obsolete",
                "--add-location=file",
                *ignore,
                "--ignore=locale",
            ],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
        wanted = _msgids(polib.pofile(str(copy / TRANSLATED[0] / "LC_MESSAGES" / f"{domain}.po")))
        for language in TRANSLATED:
            held = _msgids(catalog(language, domain))
            missing, stale = sorted(wanted - held, key=str), sorted(held - wanted, key=str)
            assert not missing, f"{language}/{domain} lacks {missing[:20]}: run `make messages`"
            assert not stale, f"{language}/{domain} holds unused {stale[:20]}: run `make messages`"


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_games_name_with_its_options_is_built_from_translated_pieces(language: str) -> None:
    # "ZigZag (pits 6, seeds 5)" stayed English in every language: the name was an f-string
    # of the engine's option names, which no catalog holds. Every option of every game is
    # labelled by a marked string, and the words around them are marked too.
    po = catalog(language, "django")
    pattern = po.find(
        "%(option)s %(value)s",
        msgctxt="a game's option and its value, as in its name: pits 6",
    )
    assert pattern is not None and pattern.msgstr, "the option's pattern is not in the catalog"
    wrong = []
    for game in available_games():
        options = {option["name"]: option["default"] for option in game["options"]}
        with translation.override(language):
            title = title_for(game["slug"], options)
        for name in options:
            label = po.find(name, msgctxt="game option")
            if label is None or not label.msgstr:
                wrong.append(f"{game['slug']}: option {name!r} has no label in the catalog")
                continue
            shown = pattern.msgstr % {"option": label.msgstr, "value": options[name]}
            if shown not in title:
                wrong.append(f"{game['slug']}: {title!r} does not say {shown!r}")
            if label.msgstr != name and re.search(rf"\b{re.escape(name)}\b", title):
                wrong.append(f"{game['slug']}: {title!r} says {name!r} in English")
    assert not wrong, f"{language}: {wrong}"


def _diagrams(text: str) -> list[dict[str, object]]:
    found = []
    for match in DIAGRAM_FENCE.finditer(text):
        spec = json.loads(match.group("body"))
        spec.pop("caption")
        found.append(spec)
    return found


def _headings(text: str) -> list[int]:
    lines = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL).splitlines()
    return [len(line) - len(line.lstrip("#")) for line in lines if line.startswith("#")]


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("slug", [game["slug"] for game in documented_games()])
def test_every_rules_page_is_translated_with_the_same_diagrams(language: str, slug: str) -> None:
    english = (RULES_DIR / f"{slug}.md").read_text(encoding="utf-8")
    path = RULES_DIR / language / f"{slug}.md"
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    translated = path.read_text(encoding="utf-8")
    assert _diagrams(translated) == _diagrams(english)
    assert _headings(translated) == _headings(english)
    page = rules_page_for(slug, language)
    assert page is not None
    english_page = rules_page_for(slug, settings.LANGUAGE_CODE)
    assert english_page is not None
    assert page.title != english_page.title
    assert len(page.diagrams) == len(english_page.diagrams)


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("document", ["NOTATION", "PBMSERV"])
def test_the_documents_pages_are_translated_with_the_same_examples(
    document: str, language: str
) -> None:
    # docs/NOTATION.md (/analysis/notation/) and docs/PBMSERV.md (/help/mail/): the prose is
    # translated, the examples (code: positions, commands, mails) are the protocol's.
    english = (ROOT / "docs" / f"{document}.md").read_text(encoding="utf-8")
    path = ROOT / "docs" / f"{document}.{language}.md"
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    translated = path.read_text(encoding="utf-8")
    fences = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
    spans = re.compile(r"`[^`]+`")
    assert fences.findall(translated) == fences.findall(english)
    assert spans.findall(fences.sub("", translated)) == spans.findall(fences.sub("", english))
    assert _headings(translated) == _headings(english)
    assert translated != english
