"""python -m devtools browsercost: what a browser context and a navigation cost the machine's
CPU in each of Debian's Chromium builds the browser tests can drive.

The browser tests open hundreds of contexts (a player, a visitor, a phone) and navigate
hundreds of times; what each costs decides most of `make test`'s time (docs/PERFORMANCE.md,
"make test"). The CPU is read from /proc/stat (every process on the machine, Chromium's
many included), so run it on a quiet machine.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

BUILDS = {
    "headless shell": Path("/usr/bin/chromium-headless-shell"),
    "whole browser": Path("/usr/bin/chromium"),
}
PAGE = "data:text/html,<!doctype html><title>t</title><p>{n}</p>"


def busy_seconds() -> float:
    """CPU seconds every process on the machine has used so far (not idle, not waiting)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    ticks = sum(fields) - fields[3] - fields[4]
    return ticks / 100  # USER_HZ


class Command(BaseCommand):
    help = "CPU per browser context and per navigation, for each Chromium build installed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--contexts", type=int, default=30)
        parser.add_argument("--navigations", type=int, default=30)

    def handle(self, *args: Any, **options: Any) -> None:
        from playwright.sync_api import sync_playwright

        found = {name: path for name, path in BUILDS.items() if path.exists()}
        if not found:
            raise CommandError("no Chromium here: `make chromium` installs Debian's")
        contexts, navigations = options["contexts"], options["navigations"]
        with sync_playwright() as playwright:
            for name, path in found.items():
                browser = playwright.chromium.launch(
                    executable_path=str(path),
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                started, cpu = time.monotonic(), busy_seconds()
                for n in range(contexts):
                    context = browser.new_context()
                    context.new_page().goto(PAGE.format(n=n))
                    context.close()
                per_context = (busy_seconds() - cpu) / contexts
                wall = (time.monotonic() - started) / contexts
                page = browser.new_context().new_page()
                cpu = busy_seconds()
                for n in range(navigations):
                    page.goto(PAGE.format(n=n))
                per_navigation = (busy_seconds() - cpu) / navigations
                browser.close()
                self.stdout.write(
                    f"{name} ({path}): a new context with a page {per_context * 1000:.0f} ms "
                    f"of CPU ({wall * 1000:.0f} ms wall, {contexts} of them); a navigation "
                    f"{per_navigation * 1000:.0f} ms of CPU ({navigations} of them)"
                )
