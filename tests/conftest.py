"""Shared fixtures: the real-service tiers fail loudly, never skip."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import types
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlparse

import pytest
from django.test import override_settings

from realtime.channel_layers import build_channel_layers
from tests import run_shared

# Every frame a test receives is checked against docs/PROTOCOL.md.
pytest_plugins = ["tests.protocol_check", "tests.browsers"]

# The server processes the tests start and stop (they inherit this environment) drain for a
# second, not production's minute: the tests of the drain itself set their own grace.
os.environ.setdefault("SHUTDOWN_GRACE_SECONDS", "1")

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
REDIS_HELP = (
    "Redis is needed for this test and is not answering at {url}. Install and start it: "
    "`apt-get install redis-server && redis-server --daemonize yes --bind 127.0.0.1 "
    '--port 6379 --save "" --appendonly no`, or set REDIS_URL.'
)
POSTGRES_HELP = (
    "PostgreSQL is needed for this pass and is not answering at {host}:{port}. "
    "Install and start it (`apt-get install postgresql && pg_ctlcluster "
    "--skip-systemctl-redirect $(ls /etc/postgresql) main start`), or set DATABASE_URL."
)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def require_redis() -> str:
    parsed = urlparse(REDIS_URL)
    if not _port_open(parsed.hostname or "127.0.0.1", parsed.port or 6379):
        pytest.fail(REDIS_HELP.format(url=REDIS_URL), pytrace=False)
    return REDIS_URL


def pytest_sessionstart(session: pytest.Session) -> None:
    # Without this, a stopped PostgreSQL shows up as a connection traceback in every test.
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith(".postgresql"):
        host, port = database.get("HOST") or "127.0.0.1", int(database.get("PORT") or 5432)
        if not _port_open(host, port):
            pytest.exit(POSTGRES_HELP.format(host=host, port=port), returncode=1)


def pytest_configure(config: pytest.Config) -> None:
    run_shared.name_the_run()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, once its workers are done
        run_shared.clean_up()


@pytest.fixture(scope="session")
def django_db_setup(
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker: Any,
    django_db_modify_db_settings: None,
) -> Iterator[None]:
    """pytest-django's, except that each worker's test database is a copy of the run's
    migrated one (tests/run_shared.py) instead of one it migrates itself: Django's keepdb
    finds it there, migrated."""
    from django.conf import settings
    from django.test.utils import setup_databases, teardown_databases

    from tests.servers import migrated_database

    database = settings.DATABASES["default"]
    seed = migrated_database()
    if on_postgresql_pass():
        import psycopg

        name = database.get("TEST", {}).get("NAME") or f"test_{database['NAME']}"
        host, port = database.get("HOST") or "127.0.0.1", database.get("PORT") or 5432
        admin = f"postgresql://{database['USER']}@{host}:{port}/postgres"
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{seed}"')
    else:
        shutil.copyfile(seed, database["TEST"]["NAME"])
    with django_db_blocker.unblock():
        created = setup_databases(
            verbosity=request.config.option.verbose,
            interactive=False,
            keepdb=True,
            serialized_aliases=set(),
        )
    yield
    with django_db_blocker.unblock():
        teardown_databases(created, verbosity=request.config.option.verbose)


def on_postgresql_pass() -> bool:
    from django.conf import settings

    return bool(settings.DATABASES["default"]["ENGINE"].endswith(".postgresql"))


def depends_on_the_database(item: pytest.Item) -> bool:
    """Whether a test can tell SQLite from PostgreSQL: it is bound to PostgreSQL, uses the test
    database (pytest-django refuses database access to any other test), or starts server
    processes on this pass's database (its module uses tests/servers.py), browsers aside."""
    if item.get_closest_marker("postgres"):
        return True
    if item.get_closest_marker("browser"):
        # What a page shows cannot tell the databases apart: the browser tests not bound to
        # PostgreSQL drive the first pass's servers only.
        return False
    if item.get_closest_marker("django_db"):
        return True
    if {"db", "transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())):
        return True
    return starts_servers(item)


def runs_on_this_pass(item: pytest.Item, postgresql: bool) -> bool:
    """Whether `make test`'s pass on PostgreSQL (or on SQLite) runs the test (the `-m`
    options of the Makefile leave out the ones bound to the other database)."""
    if item.get_closest_marker("both_databases"):
        return True
    if postgresql:
        return depends_on_the_database(item)
    if item.get_closest_marker("sqlite") or item.get_closest_marker("browser"):
        return True
    return not depends_on_the_database(item)


def starts_servers(item: pytest.Item) -> bool:
    """Whether the test's module starts server processes (it uses tests/servers.py, or
    tests/mail.py's mail door)."""
    module = getattr(item, "module", None)
    return module is not None and _uses_servers(module)


@functools.cache
def _uses_servers(module: types.ModuleType) -> bool:
    return any(
        getattr(value, "__module__", None) in {"tests.servers", "tests.mail"}
        for value in vars(module).values()
        if callable(value)
    )


# Test files whose tests share one started stack (a module-scoped fixture starting server
# processes): one worker runs each file whole, instead of every worker starting its own.
SHARED_SERVER_FILES = (
    "tests/test_compose.py",
    "tests/test_metrics.py",
    "tests/test_server.py",
    "tests/test_tournaments_servers.py",
    "tests/test_browser_access.py",
    "tests/test_browser_keyboard.py",
    "tests/test_browser_lobby_phone.py",
    "tests/test_browser_game_phone.py",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n N --dist loadscope`: every test is handed out on its own (as with `--dist load`),
    longest first, except that the files sharing a started stack go whole to one worker.
    (pytest-xdist's own `loadgroup` does not group on pytest 9: its node-id suffix is lost.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedStacks(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in SHARED_SERVER_FILES else nodeid

    return SharedStacks(config, log)


def long_first(item: pytest.Item) -> int:
    """The order the workers take tests in: the long ones (browsers, server processes) first,
    so that no worker is still playing a whole game in a browser after the others are done."""
    return 0 if item.get_closest_marker("browser") or starts_servers(item) else 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Every test runs once, on the database it is about: the first pass (SQLite, the
    # embedded default) runs what touches no database, the browsers (what a page shows cannot
    # tell the databases apart, and they drive the embedded default's servers end to end) and
    # what is marked `sqlite`; the second (PostgreSQL, production's) runs every other test that
    # touches the database or starts servers. A test marked `both_databases` runs in both: what
    # it checks differs between them (`make run`'s two shapes, SQLite's locking).
    kept = [item for item in items if runs_on_this_pass(item, on_postgresql_pass())]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
    for item in items:
        for name in ("postgres", "sqlite", "both_databases"):
            marker = item.get_closest_marker(name)
            # One suite runs on both databases: a test bound to one must say why.
            if marker is not None and not marker.kwargs.get("reason"):
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.{name} needs reason=... (why it cannot run "
                    "on both)"
                )
        # A postgres-marked test on another database would pass without proving anything.
        if item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.usefixtures("require_postgres"))
    # Stable: within each kind the files' order stays (the scheduler above hands the tests out
    # in this order, the files sharing a started stack first).
    items.sort(key=long_first)


@pytest.fixture
def require_postgres(settings: Any) -> None:
    database = settings.DATABASES["default"]
    if not database["ENGINE"].endswith(".postgresql"):
        pytest.fail(
            "This test runs only on PostgreSQL: run it with DATABASE_URL pointing at "
            "PostgreSQL (`make test` does this in its second pass).",
            pytrace=False,
        )
    host, port = database.get("HOST") or "127.0.0.1", int(database.get("PORT") or 5432)
    if not _port_open(host, port):
        pytest.fail(POSTGRES_HELP.format(host=host, port=port), pytrace=False)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    """Context managers a test enters as it goes, all left when it ends."""
    with ExitStack() as contexts:
        yield contexts


def redis_layers(kind: str = "pubsub", **options: Any) -> dict[str, Any]:
    """CHANNEL_LAYERS for the real Redis, built the way settings build them."""
    layers = build_channel_layers(require_redis(), kind=kind, **options)
    # A prefix per test run keeps parallel runs and leftovers apart.
    layers["default"]["CONFIG"]["prefix"] = f"test{os.getpid()}"
    return layers


@pytest.fixture(params=["pubsub", "core"])
def redis_channel_layer(request: pytest.FixtureRequest) -> Iterator[str]:
    """The real Redis channel layer, once per kind the settings can choose."""
    with override_settings(CHANNEL_LAYERS=redis_layers(request.param)):
        yield request.param


@pytest.fixture
def in_memory_channel_layer() -> Iterator[str]:
    with override_settings(CHANNEL_LAYERS=build_channel_layers(None)):
        yield "memory"


@pytest.fixture(scope="session", autouse=True)
def _close_the_connection_pool(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """Return pooled connections before the test database is dropped."""
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        connection = connections["default"]
        if connection.vendor == "postgresql":
            # Threads that served websocket consumers may still hold pooled connections.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            connection.close_pool()


@pytest.fixture(autouse=True)
def _forget_the_lobby_snapshot() -> None:
    """Each test's database starts again from feed version 0: a public snapshot a server
    process kept from an earlier test would carry that test's seeks and games."""
    from lobby import selectors

    selectors._public = None


@pytest.fixture(autouse=True)
def _no_flood_cooldowns() -> None:
    """Each test starts with nobody refused for flooding (user ids come back from test to
    test)."""
    from realtime.ws import COOLDOWN

    COOLDOWN.until.clear()


@pytest.fixture(autouse=True)
def _fresh_limits() -> None:
    """Each test starts with no failed log-ins, new accounts or API requests counted, and
    every token bucket full."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    from realtime.limits import forget_buckets

    forget_buckets()
    # The backend, not django.core.cache.cache: that proxy is never a RedisCache, and its
    # clear() empties the whole Redis database.
    cache = caches["default"]

    if isinstance(cache, RedisCache):  # only this site's keys: Redis may be shared
        client = cache._cache.get_client(write=True)
        for key in client.scan_iter(f"{cache.key_prefix}:*"):
            client.delete(key)
    else:
        cache.clear()
