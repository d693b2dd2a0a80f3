"""Settings come from the environment; production-unsafe combinations refuse to start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_VARIABLES = (
    "DJANGO_SECRET_KEY",
    "DJANGO_DEBUG",
    "DJANGO_ALLOWED_HOSTS",
    "DJANGO_SECURE_COOKIES",
    "DATABASE_URL",
    "REDIS_URL",
    "CHANNEL_LAYER",
    "CHANNEL_LAYER_PREFIX",
    "DJANGO_STATIC_ROOT",
    "REDIS_MAX_CONNECTIONS",
)
REPORT = """
import json
from config import settings as s
print(json.dumps({
    "DEBUG": s.DEBUG,
    "SECRET_KEY": s.SECRET_KEY,
    "ALLOWED_HOSTS": s.ALLOWED_HOSTS,
    "ENGINE": s.DATABASES["default"]["ENGINE"],
    "NAME": str(s.DATABASES["default"]["NAME"]),
    "CHANNEL_LAYERS": s.CHANNEL_LAYERS,
    "SESSION_COOKIE_SECURE": getattr(s, "SESSION_COOKIE_SECURE", False),
    "CSRF_COOKIE_SECURE": getattr(s, "CSRF_COOKIE_SECURE", False),
}))
"""


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    return subprocess.run(
        [sys.executable, "-c", REPORT],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings_with(**env: str) -> dict[str, Any]:
    result = load_settings(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_production_refuses_to_start_without_a_secret_key() -> None:
    result = load_settings()
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off" in result.stderr


def test_debug_mode_runs_with_a_development_key() -> None:
    settings = settings_with(DJANGO_DEBUG="1")
    assert settings["DEBUG"] is True
    assert settings["SECRET_KEY"].startswith("django-insecure")


def test_a_malformed_boolean_is_refused_not_guessed() -> None:
    result = load_settings(DJANGO_DEBUG="maybe", DJANGO_SECRET_KEY="k")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be a boolean" in result.stderr


def test_the_embedded_default_is_sqlite_in_the_project_and_the_in_memory_layer() -> None:
    settings = settings_with(DJANGO_SECRET_KEY="k")
    assert settings["DEBUG"] is False
    assert settings["ENGINE"] == "django.db.backends.sqlite3"
    assert settings["NAME"] == str(ROOT / "db.sqlite3")
    assert settings["CHANNEL_LAYERS"] == {
        "default": {"BACKEND": "realtime.bridge.BridgedInMemoryChannelLayer"}
    }
    assert settings["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]
    assert settings["SESSION_COOKIE_SECURE"] is False


def test_database_url_selects_postgresql() -> None:
    settings = settings_with(
        DJANGO_SECRET_KEY="k", DATABASE_URL="postgres://diffusion@db.internal:5432/diffusion"
    )
    assert settings["ENGINE"] == "realtime.postgresql"  # Django's, its pool tuned
    assert settings["NAME"] == "diffusion"


def test_redis_url_selects_the_pubsub_layer_without_redis_py_8s_read_timeout() -> None:
    settings = settings_with(DJANGO_SECRET_KEY="k", REDIS_URL="redis://cache:6379/1")
    layer = settings["CHANNEL_LAYERS"]["default"]
    assert layer["BACKEND"] == "realtime.channel_layers.PubSubChannelLayer"
    # Four subscription connections to the one Redis (CHANNEL_LAYER_SHARDS).
    hosts = layer["CONFIG"]["hosts"]
    assert len(hosts) == 4 and all(host == hosts[0] for host in hosts)
    host = hosts[0]
    assert host["address"] == "redis://cache:6379/1"
    assert host["socket_timeout"] is None
    assert host["max_connections"] >= 1000


def test_the_core_layer_gets_a_deliberate_capacity_and_group_expiry() -> None:
    settings = settings_with(
        DJANGO_SECRET_KEY="k",
        REDIS_URL="redis://cache:6379/1",
        CHANNEL_LAYER="core",
        REDIS_MAX_CONNECTIONS="500",
    )
    config = settings["CHANNEL_LAYERS"]["default"]["CONFIG"]
    assert config["capacity"] == 1000
    assert config["group_expiry"] == 7 * 24 * 3600
    assert config["hosts"][0]["max_connections"] == 500


def test_an_unknown_channel_layer_kind_is_refused() -> None:
    result = load_settings(DJANGO_SECRET_KEY="k", REDIS_URL="redis://x:6379", CHANNEL_LAYER="zmq")
    assert result.returncode != 0
    assert "CHANNEL_LAYER must be one of core, pubsub, not 'zmq'" in result.stderr


@pytest.mark.parametrize(("flag", "secure"), [("1", True), ("0", False)])
def test_secure_cookies_follow_their_flag(flag: str, secure: bool) -> None:
    settings = settings_with(DJANGO_SECRET_KEY="k", DJANGO_SECURE_COOKIES=flag)
    assert settings["SESSION_COOKIE_SECURE"] is secure
    assert settings["CSRF_COOKIE_SECURE"] is secure


def test_allowed_hosts_come_from_a_comma_separated_list() -> None:
    settings = settings_with(
        DJANGO_SECRET_KEY="k", DJANGO_ALLOWED_HOSTS="diffusion.example, www.diffusion.example"
    )
    assert settings["ALLOWED_HOSTS"] == ["diffusion.example", "www.diffusion.example"]


def test_manage_py_uses_the_local_key_of_make_run_when_none_is_exported(tmp_path: Path) -> None:
    # A copy of manage.py keeps its .secret_key beside it, as the project's does.
    (tmp_path / "manage.py").write_text((ROOT / "manage.py").read_text())
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    env = {**clean, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "config.settings"}
    show_key = ["shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)"]
    runs = [
        subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        for arguments in (["--help"], show_key, show_key)
    ]
    assert [run.returncode for run in runs] == [0, 0, 0], [run.stderr for run in runs]
    secret = tmp_path / ".secret_key"
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    key = secret.read_text().strip()
    assert len(key) >= 50
    seen = [run.stdout.strip().splitlines()[-1] for run in runs[1:]]
    assert seen == [key, key]


def test_production_settings_pass_djangos_deployment_checks_without_a_warning() -> None:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    production = {
        # Long and random, as check --deploy wants a production key.
        "DJANGO_SECRET_KEY": "p7Qz-" + "x9Lw3VbN2kRt8YhJ5mCs4" * 3,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECURE_COOKIES": "1",
        "DJANGO_ALLOWED_HOSTS": "diffusion.example",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**clean, **production},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "no issues (0 silenced)" in result.stdout


def test_every_page_carries_a_content_security_policy_with_nothing_inline() -> None:
    from django.test import Client

    policy = Client().get("/healthz")["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
