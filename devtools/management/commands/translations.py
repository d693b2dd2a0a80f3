"""`python -m devtools translations`: how complete each shipped language is, in figures.

Per language: the catalogs' entries and how many are translated (pages, e-mails and server
messages; the client's strings), and the rules pages and the notation page translated. The
pages and e-mails rendered in each language are checked by tests/test_pages_translated.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polib  # type: ignore[import-untyped]  # (it ships no type information)
from django.conf import settings
from django.core.management.base import BaseCommand

from games.rules_pages import RULES_DIR, documented_games


class Command(BaseCommand):
    help = "Print how complete each shipped language is (catalogs, rules pages, notation)."

    def handle(self, *args: Any, **options: Any) -> None:
        locale = Path(settings.LOCALE_PATHS[0])
        docs = Path(settings.BASE_DIR) / "docs"
        slugs = [game["slug"] for game in documented_games()]
        for language, name in settings.LANGUAGES:
            if language == settings.LANGUAGE_CODE:
                continue
            parts = []
            for domain, what in (("django", "pages, e-mails, messages"), ("djangojs", "client")):
                po = polib.pofile(str(locale / language / "LC_MESSAGES" / f"{domain}.po"))
                entries = [entry for entry in po if not entry.obsolete]
                done = [entry for entry in entries if entry.translated()]
                parts.append(
                    f"{what}: {len(done)}/{len(entries)} ({100 * len(done) / len(entries):.1f}%)"
                )
            rules = sum((RULES_DIR / language / f"{slug}.md").is_file() for slug in slugs)
            notation = (docs / f"NOTATION.{language}.md").is_file()
            self.stdout.write(
                f"{language} ({name}): {'; '.join(parts)}; rules pages {rules}/{len(slugs)}; "
                f"notation page {'yes' if notation else 'no'}"
            )
