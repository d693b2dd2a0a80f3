"""Django settings, read from the environment (12-factor).

Unset, everything falls back to the embedded default: a SQLite file in the project and the
in-memory channel layer. See README.md for the variables.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from realtime.channel_layers import DEFAULT_MAX_CONNECTIONS, build_channel_layers
from realtime.redis_servers import redis_cache

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    if value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if value.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def prepare_threshold(value: str, default: int = 5) -> int | None:
    """DATABASE_PREPARE_THRESHOLD: after how many runs a connection prepares a statement
    (psycopg's own default when unset or empty); None (`off`) never."""
    text = value.strip().lower()
    if not text:
        return default
    if text in ("off", "none"):
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    raise ImproperlyConfigured(
        f"DATABASE_PREPARE_THRESHOLD must be a number of runs (0 or more) or off, not {value!r}"
    )


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off "
            "(`make run` generates one into .secret_key for local use)."
        )
    SECRET_KEY = "django-insecure-development-only-key"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "accounts",
    "games",
    "ratings",
    "lobby",
    "bots",
    "tournaments",
    "follows",
    "pbm",
    "privacy",
    "moderation",
    "analysis",
    "puzzles",
    "push",
    "botapi",
]

MIDDLEWARE = [
    # Outermost: a request id (X-Request-ID) and the log context of the request (docs/LOGGING.md).
    "realtime.logs.RequestLogContext",
    "django.middleware.security.SecurityMiddleware",
    "config.csp.ContentSecurityPolicyMiddleware",
    # Outside the rest of ours: every /api/ answer is JSON, errors included.
    "realtime.api_errors.ApiErrorMiddleware",
    # Before any view looks a name or token up: PostgreSQL cannot compare text with NUL.
    "realtime.nul_guard.RefuseNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: `Authorization: Bearer` signs a program in by its token instead,
    # with the token's scopes only (accounts/tokens.py).
    "accounts.tokens.TokenMiddleware",
    # After authentication: the account's language, else the switcher's cookie, else the
    # browser's (Django's LocaleMiddleware, which this extends).
    "accounts.language.LanguageMiddleware",
    # After authentication and tokens (and the language its refusal is said in): API
    # requests are counted per user, a token's in its token's and account's buckets.
    "realtime.limits.ApiRateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # After messages: what a moderator did is shown on the user's next page.
    "moderation.middleware.PendingNoticesMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
        conn_health_checks=True,
    )
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers take the lock when they begin, so two never deadlock upgrading a read lock.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
    # Write-ahead logging: readers never wait for the writer, and a commit appends to the
    # log without syncing the database file each time (synchronous=NORMAL is safe in WAL
    # mode: a power cut may lose the last commits, never corrupt the file).
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Parameters travel apart from the statement instead of being quoted into its text
    # (measured: the quoting was the biggest single cost of a move's statements).
    DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = env_bool(
        "DATABASE_SERVER_SIDE_BINDING", True
    )
    # A statement a connection has run this many times is prepared (psycopg's own default;
    # Django turns preparing off unless told): PostgreSQL parses and plans it once per
    # connection instead of at every run. Measured at 600 moves/s: PostgreSQL's CPU halved
    # (0.49 to 0.25 cores) and the servers' fell by a tenth (docs/PERFORMANCE.md). `off`
    # behind a pooler that cannot keep prepared statements (PgBouncer's transaction mode
    # before max_prepared_statements). A plan made stale by a column's new type is dropped
    # and prepared again (realtime/postgresql/base.py).
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = prepare_threshold(
        os.environ.get("DATABASE_PREPARE_THRESHOLD", "")
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_POOL", True
):
    # Under ASGI, persistent connections leak (one per request thread): psycopg's pool hands
    # connections out instead, so a closed connection costs nothing to reopen.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("DATABASE_POOL_MIN", "2")),
        "max_size": int(os.environ.get("DATABASE_POOL_MAX", "20")),
        "timeout": 10,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, with its pool quick to get over killed sessions (the module says how).
    DATABASES["default"]["ENGINE"] = "realtime.postgresql"
# Threads that run database work for websocket consumers (see realtime/db.py). Three, not
# more: each runs Python between its round trips, and the more of them hold the interpreter
# lock in turn, the longer the event loop waits for it at every socket write (at 500 moves/s
# on two processes, 8 threads stalled the loop over 10 ms 40-160 times in 30 s, 3 threads
# 16-50 times; docs/PERFORMANCE.md).
DB_THREADS = int(
    os.environ.get("DB_THREADS", "1" if DATABASES["default"]["ENGINE"].endswith("sqlite3") else "3")
)

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
# A password-reset link works for an hour, and once: Django's token dies with the password it
# was made for, and with the next sign-in. An e-mail confirmation link works for two days.
PASSWORD_RESET_TIMEOUT = int(os.environ.get("PASSWORD_RESET_TIMEOUT", "3600"))
EMAIL_CONFIRMATION_SECONDS = int(os.environ.get("EMAIL_CONFIRMATION_SECONDS", str(2 * 86400)))
# A sign-in whose password was right waits this long for its second-factor code.
TWO_FACTOR_SIGN_IN_SECONDS = int(os.environ.get("TWO_FACTOR_SIGN_IN_SECONDS", "300"))
# The name authenticator apps show beside the account.
TWO_FACTOR_ISSUER = os.environ.get("TWO_FACTOR_ISSUER", "Diffusion")
LOGOUT_REDIRECT_URL = "home"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The site's languages (docs/TRANSLATING.md): English, the source, and the shipped
# translations, each complete (tests/test_translations.py). A page is in the language its
# visitor chose with the switcher (a cookie, and the account's `language` once logged in), or
# else the browser's (Accept-Language); e-mails in the recipient's account language.
LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("fr", "Français"),
    ("de", "Deutsch"),
    ("es", "Español"),
]
LOCALE_PATHS = [Path(os.environ.get("DJANGO_LOCALE_DIR") or BASE_DIR / "locale")]
LANGUAGE_COOKIE_NAME = "language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed names served by whitenoise with far-future caching; needs
    # `collectstatic`, which `make run` and the Docker image run.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channels -------------------------------------------------------------------------
# One Redis for everything: redis://host:port/db, or sentinel://host:port,.../service/db to
# follow the master Sentinel names (realtime/redis_servers.py). The channel layer may spread
# over several (CHANNEL_LAYER_REDIS, separated by spaces: every process names the same, in
# the same order), and the cache and rate limits may have their own (CACHE_REDIS_URL).
REDIS_URL = os.environ.get("REDIS_URL", "")
CHANNEL_LAYER_REDIS = os.environ.get("CHANNEL_LAYER_REDIS", "") or REDIS_URL
CACHE_REDIS_URL = os.environ.get("CACHE_REDIS_URL", "") or REDIS_URL
CHANNEL_LAYERS = build_channel_layers(
    CHANNEL_LAYER_REDIS,
    kind=os.environ.get("CHANNEL_LAYER", "pubsub"),
    max_connections=int(os.environ.get("REDIS_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS)),
    prefix=os.environ.get("CHANNEL_LAYER_PREFIX", "diffusion"),
    # Subscription connections per process (realtime/channel_layers.py); the same everywhere.
    shards=int(os.environ.get("CHANNEL_LAYER_SHARDS", "4")),
)
# --- Limits per client (realtime/limits.py) -----------------------------------------------
# Counted in the cache: Redis when REDIS_URL is set, so every server process counts the same;
# the embedded default is one process and counts in its memory. Rates are "count/period"
# (s, m, h, d, with an optional multiplier: "10/15m").
CACHES = {
    "default": (
        redis_cache(CACHE_REDIS_URL, os.environ.get("CHANNEL_LAYER_PREFIX", "diffusion"))
        if CACHE_REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Open websockets per signed-in user, on all processes together (tabs, devices).
MAX_SOCKETS_PER_USER = int(os.environ.get("MAX_SOCKETS_PER_USER", "30"))
# After a socket is closed for flooding, that client's new sockets are refused on that
# process for this long (docs/SECURITY.md).
FLOOD_COOLDOWN_SECONDS = float(os.environ.get("FLOOD_COOLDOWN_SECONDS", "30"))
# Open websockets per client address, visitors included (0: no limit). Generous: a school or
# an office behind one address holds many players and spectators.
MAX_SOCKETS_PER_ADDRESS = int(os.environ.get("MAX_SOCKETS_PER_ADDRESS", "100"))
LOGIN_FAILURES_PER_ACCOUNT = os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "10/15m")
LOGIN_FAILURES_PER_ADDRESS = os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "50/15m")
NEW_ACCOUNTS_PER_ADDRESS = os.environ.get("NEW_ACCOUNTS_PER_ADDRESS", "10/h")
# Diffusion's endgame database (docs/ENDGAMES.md): built by `make endgames` into this
# directory, read memory-mapped by games/endgames.py; none there, nothing is covered.
ENDGAMES_DIR = Path(os.environ.get("ENDGAMES_DIR", str(BASE_DIR / "endgames")))
API_REQUESTS_PER_CLIENT = os.environ.get("API_REQUESTS_PER_CLIENT", "120/m")
# A program's requests (made with a token) are counted in token buckets instead, one per token
# and one per account (its tokens together): a bucket holds BURST requests and refills at
# PER_SECOND (0: no limit). Sized for a bot playing 20 one-minute games at once: about one
# move a second in each, with room for opening its streams and seeking at once
# (docs/SECURITY.md).
API_TOKEN_BURST = float(os.environ.get("API_TOKEN_BURST", "100"))
API_TOKEN_PER_SECOND = float(os.environ.get("API_TOKEN_PER_SECOND", "20"))
API_ACCOUNT_BURST = float(os.environ.get("API_ACCOUNT_BURST", "200"))
API_ACCOUNT_PER_SECOND = float(os.environ.get("API_ACCOUNT_PER_SECOND", "40"))
# Account self-service (docs/ACCOUNTS.md): password-reset mails per address asked for and
# per client, confirmation links per account, wrong second-factor codes per account (a
# 6-digit code: 5 guesses in 15 minutes leave a guesser ~1 chance in 700 a day).
PASSWORD_RESETS_PER_EMAIL = os.environ.get("PASSWORD_RESETS_PER_EMAIL", "3/h")
PASSWORD_RESETS_PER_ADDRESS = os.environ.get("PASSWORD_RESETS_PER_ADDRESS", "20/h")
EMAIL_LINKS_PER_ACCOUNT = os.environ.get("EMAIL_LINKS_PER_ACCOUNT", "5/h")
TWO_FACTOR_FAILURES_PER_ACCOUNT = os.environ.get("TWO_FACTOR_FAILURES_PER_ACCOUNT", "5/15m")
# Reports (docs/MODERATION.md): per registered player, per guest, and per address whoever.
REPORTS_PER_USER = os.environ.get("REPORTS_PER_USER", "10/h")
REPORTS_PER_GUEST = os.environ.get("REPORTS_PER_GUEST", "3/h")
REPORTS_PER_ADDRESS = os.environ.get("REPORTS_PER_ADDRESS", "30/h")

# The application refuses bigger websocket text frames even if a server in front lets
# them through (Daphne is also started with --websocket-max-message-size).
WEBSOCKET_MAX_MESSAGE_BYTES = int(os.environ.get("WEBSOCKET_MAX_MESSAGE_BYTES", "16384"))

# --- Presence (realtime/presence.py) ---------------------------------------------------------
# Each server process vouches for its sockets' rows this often; rows nobody vouched for in
# PRESENCE_EXPIRY_SECONDS belong to a dead process and are removed (counts, claims and seeks
# then recover). The expiry leaves room for a process stalled by load.
# How often each process checks that its game sockets have every stored event (games/catchup.py).
# On the in-memory layer the moves of the computer (played by the bots worker, another process)
# come over realtime/bridge.py; this is its safety net: often, then (one query per interval
# for the whole process).
GAME_CATCH_UP_SECONDS = float(
    os.environ.get("GAME_CATCH_UP_SECONDS", "2" if CHANNEL_LAYER_REDIS else "0.25")
)
PRESENCE_HEARTBEAT_SECONDS = float(os.environ.get("PRESENCE_HEARTBEAT_SECONDS", "10"))
# A server process told to stop (SIGTERM) moves its sockets to the other processes and stops
# within this many seconds (config/graceful.py); an orchestrator's stop timeout must be
# longer (compose: stop_grace_period 75 s). Its pages are asked to move at this many a second
# (realtime/drain.py): what the other processes can take beside their games. 20 suits the
# 2-core machine of docs/PERFORMANCE.md; a bigger one can take more.
SHUTDOWN_GRACE_SECONDS = float(os.environ.get("SHUTDOWN_GRACE_SECONDS", "60"))
RESTART_MOVES_PER_SECOND = float(os.environ.get("RESTART_MOVES_PER_SECOND", "20"))
PRESENCE_EXPIRY_SECONDS = float(os.environ.get("PRESENCE_EXPIRY_SECONDS", "30"))

# --- E-mail (correspondence "your move" notices) -----------------------------------------
# The console backend by default; SMTP when EMAIL_HOST is set (EMAIL_PORT, EMAIL_HOST_USER,
# EMAIL_HOST_PASSWORD, EMAIL_USE_TLS).
# Long correspondence and untimed games (pbmserv's figures): a reminder e-mail to the player
# to move after REMINDER_DAYS without a move, and a loss by forfeit after FORFEIT_DAYS.
REMINDER_DAYS = float(os.environ.get("REMINDER_DAYS", "7"))
FORFEIT_DAYS = float(os.environ.get("FORFEIT_DAYS", "21"))
# A seek that allows it is given a game against the computer after this long without a partner.
COMPUTER_FALLBACK_SECONDS = float(os.environ.get("COMPUTER_FALLBACK_SECONDS", "30"))
# A bot account (docs/API.md) plays at most this many games at once: a seek, a challenge or
# an acceptance past it is refused with `too_many_games`.
BOT_MAX_GAMES = int(os.environ.get("BOT_MAX_GAMES", "20"))
# Vacation (correspondence clocks stand still): at most this many days in any 365.
VACATION_DAYS = int(os.environ.get("VACATION_DAYS", "30"))
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Diffusion <noreply@localhost>")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
# A mail server that hangs must not hold the sweeper up for long.
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
if EMAIL_HOST:
    # Django's SMTP backend, recording whether mail goes out (/readyz, the log, a metric).
    EMAIL_BACKEND = "realtime.outgoing_mail.EmailBackend"
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    # STARTTLS on by default, for a relay across a network; a plain relay on the same host
    # (postfix on 127.0.0.1:25) offers none, and every mail fails until EMAIL_USE_TLS=0: an
    # ERROR says so (realtime/outgoing_mail.py).
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

# --- pbmserv by mail (pbm/, docs/PBMSERV.md) ------------------------------------------------
# Where `manage.py mailserver` listens (production points MX at it, or relays to it), the
# address its replies come from and people write to, and its limits.
PBM_SMTP_HOST = os.environ.get("PBM_SMTP_HOST", "127.0.0.1")
PBM_SMTP_PORT = int(os.environ.get("PBM_SMTP_PORT", "8025"))
PBM_ADDRESS = os.environ.get("PBM_ADDRESS", "pbm@localhost")
PBM_MAX_MAIL_BYTES = int(os.environ.get("PBM_MAX_MAIL_BYTES", str(64 * 1024)))
PBM_MAILS_PER_SENDER = os.environ.get("PBM_MAILS_PER_SENDER", "60/m")
PBM_SEND_ATTEMPTS = int(os.environ.get("PBM_SEND_ATTEMPTS", "20"))
PBM_WORKER_THREADS = int(os.environ.get("PBM_WORKER_THREADS", "4"))

# --- Web Push notices (push/, docs/DEPLOY.md) -------------------------------------------------
# The VAPID key pair the site signs its pushes with (base64url: the public key as the
# uncompressed P-256 point, the private key as its 32-byte number; `python -m push.keys`
# prints a new pair), and whom a push service may contact about them (mailto: or https:).
# Required when debug is off: `make run` and manage.py use a development pair they generate
# into .vapid_keys (git-ignored). Changing the pair cuts every browser's subscription off.
VAPID_PUBLIC_KEY = os.environ.get("VAPID_PUBLIC_KEY", "").strip()
VAPID_PRIVATE_KEY = os.environ.get("VAPID_PRIVATE_KEY", "").strip()
VAPID_SUBJECT = os.environ.get("VAPID_SUBJECT", "").strip()
if not (VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY and VAPID_SUBJECT):
    if not DEBUG:
        raise ImproperlyConfigured(
            "VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT must be set when DJANGO_DEBUG "
            "is off (`make run` generates a development pair into .vapid_keys; "
            "`python -m push.keys` prints a new one)."
        )
    from push.keys import DEVELOPMENT_SUBJECT, local_keys

    if not (VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY):
        VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY = local_keys(BASE_DIR / ".vapid_keys")
    VAPID_SUBJECT = VAPID_SUBJECT or DEVELOPMENT_SUBJECT
if not VAPID_SUBJECT.startswith(("mailto:", "https://")):
    raise ImproperlyConfigured(
        f"VAPID_SUBJECT must be a mailto: or https: address, not {VAPID_SUBJECT!r}"
    )


def _vapid_pair_matches(public: str, private: str) -> bool:
    from push.keys import public_of

    try:
        return public_of(private) == public
    except ValueError:
        return False


if not _vapid_pair_matches(VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY):
    raise ImproperlyConfigured(
        "VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY (both base64url: "
        "`python -m push.keys` prints a pair)"
    )
# The push services the site sends to, as `scheme://host` patterns (`*` stands for any part
# of a host name): the browsers' vendors. A subscription to any other address is refused, so
# that nobody can make the site post to its own network.
PUSH_SERVICES = env_list(
    "PUSH_SERVICES",
    "https://fcm.googleapis.com,https://updates.push.services.mozilla.com,"
    "https://*.push.services.mozilla.com,https://web.push.apple.com,"
    "https://*.push.apple.com,https://*.notify.windows.com",
)
# Sends per notice and browser before giving up (the first retry after PUSH_RETRY_SECONDS,
# each next one six times later), how long a push service may take to answer, and the
# sweeper's sending threads.
PUSH_ATTEMPTS = int(os.environ.get("PUSH_ATTEMPTS", "4"))
PUSH_RETRY_SECONDS = float(os.environ.get("PUSH_RETRY_SECONDS", "10"))
PUSH_TIMEOUT = float(os.environ.get("PUSH_TIMEOUT", "10"))
PUSH_THREADS = int(os.environ.get("PUSH_THREADS", "4"))

# --- Metrics (realtime/metrics.py, docs/METRICS.md) -----------------------------------------
# Each long-running process (server, sweeper, bots, mail door) serves its metrics for
# Prometheus on this port of its own, never the site's (unset or 0: no metrics served), on
# this address: the loopback unless a private network's scraper must reach it.
METRICS_PORT = int(os.environ.get("METRICS_PORT") or 0)
METRICS_HOST = os.environ.get("METRICS_HOST", "127.0.0.1")

# --- Security -------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Scripts, styles and sockets from this origin only; nothing inline (config/csp.py). CSP 3's
# 'self' covers the same host's ws:/wss: sockets. The service worker (/sw.js) and the web app
# manifest are the site's own too.
CONTENT_SECURITY_POLICY = os.environ.get(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; worker-src 'self'; manifest-src 'self'; "
    "object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'",
)
# Behind TLS (production, DJANGO_SECURE_COOKIES=1): cookies only over HTTPS, trust the proxy's
# scheme header, send plain HTTP to HTTPS (except the health check, which the proxy and the
# orchestrator call from inside), and ask browsers to stay on HTTPS for a year. With it,
# `manage.py check --deploy` has nothing to warn about.
if env_bool("DJANGO_SECURE_COOKIES", False):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)

# Logs (docs/LOGGING.md): readable lines by default (`make run`, the tests), one JSON object per
# line with LOG_FORMAT=json (the Docker image); each line carries its request or socket id, user
# and game, and no secret.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain").strip().lower() or "plain"
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING_CONFIG = "realtime.log_format.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "realtime.log_format.PlainFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s%(context)s: %(message)s",
        },
        "json": {"()": "realtime.log_format.JsonFormatter"},
    },
    "filters": {
        "one_line_outages": {"()": "realtime.log_filters.ConnectionErrorsInOneLine"},
        "one_line_refusals": {"()": "realtime.log_filters.RefusedRequestsInOneLine"},
        "log_context": {"()": "realtime.log_format.LogContextFilter"},
        "redact_secrets": {"()": "realtime.log_format.RedactSecrets"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            # Redaction last: it sees the messages the other filters wrote.
            "filters": ["one_line_outages", "one_line_refusals", "log_context", "redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # aiosmtpd (the mail door) logs every line of every SMTP conversation at INFO.
        "mail.log": {"level": "WARNING"},
        # Django's lines go through the console handler above only: not also through Django's
        # own handlers (a second, unformatted copy with DEBUG on; the request with its headers
        # mailed to ADMINS).
        "django": {"handlers": [], "propagate": True},
    },
}

# The computer's view on the analysis board: rounds of search (ms each, growing), each shown
# as it ends (bots/searches.py). A game review: the search time for a whole game, shared by
# its positions (analysis/reviews.py: 40 to 400 ms each).
COMPUTER_VIEW_MS = (250, 500, 1000, 2000, 4000)
REVIEW_MS = 50_000
