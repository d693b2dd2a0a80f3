"""The browser tests' fixtures (a pytest plugin of tests/conftest.py): Debian's Chromium driven
by Playwright, and the servers its pages talk to.

Each test process starts one shared server, whichever browser tests it is given, and one
Chromium per file: a browser test's own work (pages, moves) is what it should pay for, not a
Django process started for it. A test gets fresh browser contexts (fresh guests, fresh games)
and leaves none open behind it. A test that stops its server or needs its own accounts or
settings asks for `own_site` or builds a `Site`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from config import serve
from tests.conftest import require_redis
from tests.servers import (
    ROOT,
    Server,
    background,
    collected_static,
    free_port,
    migrated_scratch_database,
    running,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

# Debian's build of Chromium's headless shell (package chromium-headless-shell), the browser
# Playwright itself runs for headless tests: the same Blink as /usr/bin/chromium without the
# whole browser around it. A new browser context costs it about a quarter of the CPU, a
# navigation a fifth (docs/PERFORMANCE.md), and the tests open hundreds of both.
CHROMIUM = Path("/usr/bin/chromium-headless-shell")
# The whole browser (package chromium), for what only it does: showing a service worker's
# notifications.
WHOLE_CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
TIMEOUT_MS = 15_000
# Screenshots of the pages the tests walk through, to be looked at (`make screenshots`): a
# picture asserts nothing, and taking them in every run costs the suite its time.
SCREENSHOTS = bool(os.environ.get("SCREENSHOTS"))


def keep_screenshot(what: Page | Locator, name: str, full_page: bool = False) -> None:
    """Save a picture of the page (or an element) as test-artifacts/<name>.png when asked."""
    if not SCREENSHOTS:
        return
    path = ARTIFACTS / f"{name}.png"
    if full_page:
        what.screenshot(path=path, full_page=True)  # type: ignore[call-arg]
    else:
        what.screenshot(path=path)


def expect_game_live(page: Page) -> None:
    """The game page's socket is open and the page has drawn the server's snapshot: from
    here on every event of the game reaches it (before the snapshot, an opponent's move is
    shown in it but not announced)."""
    from playwright.sync_api import expect

    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    expect(page.locator("#game")).to_have_attribute("data-ready", "true")


class Site:
    """Daphne on a migrated scratch database of this pass's backend and the real Redis layer;
    restartable."""

    def __init__(
        self,
        scratch: Path,
        database_url: str,
        settings: str = "config.settings",
        **env: str,
    ) -> None:
        self.scratch = scratch
        self.port = free_port()
        self.env: dict[str, str | None] = {
            "DJANGO_SETTINGS_MODULE": settings,
            "DJANGO_SECRET_KEY": "browser-test-secret-key-not-for-production-0123456789",
            "DJANGO_DEBUG": None,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": database_url,
            "DJANGO_STATIC_ROOT": str(collected_static()),
            "REDIS_URL": require_redis(),
            "CHANNEL_LAYER_PREFIX": f"browser-{uuid.uuid4().hex[:8]}",
            **env,
        }
        self.runs = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serve(self, stop_signal: int = signal.SIGTERM) -> AbstractContextManager[Server]:
        """The server, stopped at the end with `stop_signal` (SIGKILL: as if it crashed)."""
        self.runs += 1
        command = serve.command("127.0.0.1", self.port)
        log = self.scratch / f"daphne-{self.runs}.log"
        return running(command, self.env, log, self.port, stop_signal)


def manage_on_site(site: Site, *command: str) -> None:
    """`manage.py COMMAND…` on the site's database and settings, as an operator runs it."""
    environment = {**os.environ, **site.env}
    subprocess.run(
        [sys.executable, "manage.py", *command],
        env={key: value for key, value in environment.items() if value is not None},
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )


def make_moderator(site: Site, name: str) -> None:
    """As docs/MODERATION.md says: `manage.py moderators --add NAME` on the site's database."""
    manage_on_site(site, "moderators", "--add", name)


def mark_bot_account(site: Site, name: str) -> None:
    """The account counts as a bot account from now on, on the site's database (the Bot API's
    upgrade refuses an account with games; this is for what a page shows of one)."""
    code = (
        "from django.utils import timezone; from accounts.models import User; "
        f"assert User.objects.filter(username={name!r}).update(bot_since=timezone.now()) == 1"
    )
    manage_on_site(site, "shell", "-c", code)


def sweep_once(site: Site) -> None:
    """One pass of the site's sweeper (`manage.py sweeper --once`), as `make run`'s would make
    it: tournaments whose time has come start and pair their players."""
    manage_on_site(site, "sweeper", "--once")


@contextmanager
def sweeper(site: Site) -> Iterator[subprocess.Popen[bytes]]:
    """The site's sweeper, as `make run` starts it beside the server (on the same database and
    channel layer), for as long as the test needs it: it starts, pairs and ends tournaments and
    ends games on time. The sites the tests share run none, so that no other test's games end
    or start behind its back."""
    command = [sys.executable, "manage.py", "sweeper", "--max-sleep", "0.2"]
    log = site.scratch / f"sweeper-{uuid.uuid4().hex[:8]}.log"
    with background(command, site.env, log) as process:
        yield process


class SharedSite(Site):
    """A Site started on first use and kept up until the test process ends: `serve()` hands
    out the running server and stopping it is left to the session."""

    def __init__(self, scratch: Path, database_url: str, contexts: ExitStack) -> None:
        # Every browser test of a process comes from 127.0.0.1: the per-address limits on new
        # accounts and sockets (tested on their own) would be reached by the tests together.
        super().__init__(
            scratch,
            database_url,
            NEW_ACCOUNTS_PER_ADDRESS="10000/h",
            MAX_SOCKETS_PER_ADDRESS="10000",
        )
        self.contexts = contexts
        self.server: Server | None = None

    def serve(self, stop_signal: int = signal.SIGTERM) -> AbstractContextManager[Server]:
        if self.server is None:
            self.server = self.contexts.enter_context(super().serve())
        return nullcontext(self.server)


@contextmanager
def launched(executable: Path) -> Iterator[Browser]:
    """Debian's Chromium (`executable`), driven by Playwright."""
    if not executable.exists():
        package = "chromium-headless-shell" if executable == CHROMIUM else "chromium"
        pytest.fail(
            f"Debian's {package} is missing at {executable}: `apt-get install {package}` "
            "(make test installs it when it can)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.fail(
            "Playwright is missing: run `make dev` (it installs the dev extra, playwright "
            "included)",
            pytrace=False,
        )
    ARTIFACTS.mkdir(exist_ok=True)
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(executable),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


# Per module, not per process: Playwright's sync API keeps an event loop running in the thread
# while it is started, and the tests of other modules that call async code from sync code
# (Django's async_to_sync) must not run beside it.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched(CHROMIUM) as chromium:
        yield chromium


@pytest.fixture(scope="session")
def shared_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedSite]:
    scratch = tmp_path_factory.mktemp("site")
    with ExitStack() as contexts:
        database_url = contexts.enter_context(migrated_scratch_database(scratch))
        yield SharedSite(scratch, database_url, contexts)


@pytest.fixture
def site(shared_site: SharedSite, browser: Browser) -> Iterator[Site]:
    """This process's shared server; the browser contexts the test opened are closed after it
    (their sockets would otherwise stay open on the server for the rest of the run)."""
    before = set(browser.contexts)
    yield shared_site
    for context in browser.contexts:
        if context not in before:
            context.close()


@pytest.fixture
def own_site(tmp_path: Path) -> Iterator[Site]:
    """A server of the test's own, on its own database: for a test that stops and restarts it,
    or that needs names no other test may take."""
    with migrated_scratch_database(tmp_path) as database_url:
        yield Site(tmp_path, database_url)


class Problems:
    """Every page's JavaScript errors: a test fails if any page threw."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, name: str, page: Page) -> Page:
        page.on("pageerror", lambda error: self.errors.append(f"{name}: {error}"))
        # Whatever the Content-Security-Policy blocks shows up as a console error.
        page.on(
            "console",
            lambda message: (
                self.errors.append(f"{name}: {message.text}")
                if message.type == "error" and "Content Security Policy" in message.text
                else None
            ),
        )
        return page


@pytest.fixture
def problems() -> Iterator[Problems]:
    seen = Problems()
    yield seen
    assert not seen.errors, f"JavaScript errors: {seen.errors}"
