"""Test settings: the project's settings with a fixed key and test-friendly static files.

Everything else (database, channel layer) comes from the environment exactly as in
production, so the PostgreSQL pass of `make test` sets DATABASE_URL and nothing more.
"""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-for-production-use-0123456789")
# A push key pair of this test process, which the servers and sweepers it starts inherit.
if not (os.environ.get("VAPID_PUBLIC_KEY") and os.environ.get("VAPID_PRIVATE_KEY")):
    from push.keys import generate

    os.environ["VAPID_PUBLIC_KEY"], os.environ["VAPID_PRIVATE_KEY"] = generate()
os.environ.setdefault("VAPID_SUBJECT", "mailto:tests@localhost")

from config.settings import *  # noqa: F403

# The tooling app (benchmarks, fault injection) is tested with the product.
INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]  # noqa: F405

# Templates render {% static %} without a collectstatic manifest.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Hashing passwords slowly is a production feature; tests create many accounts.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Serve static files straight from static/ (no collectstatic in tests).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not shared-cache memory: in memory, SQLite fails a second thread at once with
    # "table is locked" instead of waiting its turn as the embedded default's file does.
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"diffusion-test-{os.getpid()}.sqlite3")
    }

if DATABASES["default"]["ENGINE"] == "realtime.postgresql":  # noqa: F405
    # The product's backend, whose flush between transactional tests deletes rows rather than
    # truncating tables (tests/postgresql/base.py says why).
    DATABASES["default"]["ENGINE"] = "tests.postgresql"  # noqa: F405

# Game sockets probe the round trip this often; tests that want probes lower it.
LAG_PROBE_SECONDS = 3600.0

# Each test worker counts its limits under keys of its own: the workers share one Redis, and
# each test starts by deleting the prefix's keys (tests/conftest.py's _fresh_limits).
if "KEY_PREFIX" in CACHES["default"]:  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] += os.environ.get("PYTEST_XDIST_WORKER", "")  # noqa: F405
