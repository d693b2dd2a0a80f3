"""Limits on what one client may ask of the site: failed log-ins, new accounts, API requests.

Counts live in the default cache (Redis when REDIS_URL is set, shared by every server
process) in fixed windows, through django-ratelimit's counters; a program's requests (made
with a token) in token buckets instead, per token and per account (API_TOKEN_BURST,
API_TOKEN_PER_SECOND, API_ACCOUNT_BURST, API_ACCOUNT_PER_SECOND: see `take`). The
figures are settings (LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS,
NEW_ACCOUNTS_PER_ADDRESS, API_REQUESTS_PER_CLIENT, PASSWORD_RESETS_PER_EMAIL,
PASSWORD_RESETS_PER_ADDRESS, EMAIL_LINKS_PER_ACCOUNT, TWO_FACTOR_FAILURES_PER_ACCOUNT);
docs/SECURITY.md lists them.

django_ratelimit is not an installed app: its system check refuses the in-memory cache,
which is right for the embedded default's single process.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis.exceptions
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import formats
from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage

from realtime.api_errors import API_PREFIX

logger = logging.getLogger(__name__)


def address(request: HttpRequest) -> str:
    """The client's address as this server sees it (a proxy in front must pass it on)."""
    return str(request.META.get("REMOTE_ADDR", ""))


def _usage(request: HttpRequest | None, group: str, value: str, rate: str, increment: bool) -> bool:
    """Whether `value` has used up `rate` in `group` (counting this request if `increment`).
    While the cache (Redis) is unreachable, this process counts on its own: the site keeps
    answering, and each process still holds a client to the rate."""
    try:
        usage = get_usage(
            request, group=group, key=lambda _group, _request: value, rate=rate, increment=increment
        )
    except CACHE_DOWN as error:
        return _counted_here(group, value, rate, increment, error)
    if usage is None:  # no rate: unlimited
        return False
    return bool(usage["count"] >= usage["limit"] if not increment else usage["should_limit"])


def over_limit(group: str, value: str, rate: str, *, increment: bool) -> bool:
    """`_usage` for callers without a request (the mail door): the same counters, the same
    fallback while the cache is away."""
    return _usage(None, group, value, rate, increment)


# What the cache raises while Redis is unreachable.
CACHE_DOWN: tuple[type[BaseException], ...] = (
    OSError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
_RATE = re.compile(r"(\d+)/(\d*)([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# (group, value, window) -> count, while the cache is away; old windows are dropped.
_HERE: dict[tuple[str, str, int], int] = {}
_HERE_KEPT = 50_000
_warned_at = [0.0]


def _counted_here(group: str, value: str, rate: str, increment: bool, error: BaseException) -> bool:
    _warn_here(error)
    now = time.time()
    found = _RATE.fullmatch(rate)
    if found is None:
        return False
    limit, period = int(found.group(1)), int(found.group(2) or 1) * _UNIT[found.group(3)]
    key = (group, value, int(now // period))
    if len(_HERE) >= _HERE_KEPT:
        for old in [k for k in _HERE if k[2] != key[2]]:
            del _HERE[old]
        if len(_HERE) >= _HERE_KEPT:
            _HERE.clear()
    count = _HERE.get(key, 0)
    if increment:
        count += 1
        _HERE[key] = count
        return count > limit
    return count >= limit


def login_locked(request: HttpRequest, username: str) -> bool:
    """Too many failed log-ins lately for this account, or from this address."""
    return _usage(
        request, "login-account", username.lower(), settings.LOGIN_FAILURES_PER_ACCOUNT, False
    ) or _usage(
        request, "login-address", address(request), settings.LOGIN_FAILURES_PER_ADDRESS, False
    )


def login_failed(request: HttpRequest, username: str) -> None:
    """Count a failed log-in against the account and the address."""
    _usage(request, "login-account", username.lower(), settings.LOGIN_FAILURES_PER_ACCOUNT, True)
    _usage(request, "login-address", address(request), settings.LOGIN_FAILURES_PER_ADDRESS, True)


def new_account_refused(request: HttpRequest) -> bool:
    """Count a new account (a guest or a sign-up) from this address; True if over the limit."""
    return _usage(request, "new-account", address(request), settings.NEW_ACCOUNTS_PER_ADDRESS, True)


def password_reset_refused(request: HttpRequest, email: str) -> bool:
    """Count a password-reset request for this address and from this client's address; True
    if either is over its limit. Counted whether or not an account has the address, so the
    refusal says nothing about the accounts."""
    by_email = _usage(
        request, "reset-email", email.strip().lower(), settings.PASSWORD_RESETS_PER_EMAIL, True
    )
    by_address = _usage(
        request, "reset-address", address(request), settings.PASSWORD_RESETS_PER_ADDRESS, True
    )
    return by_email or by_address


def email_change_refused(request: HttpRequest, user_id: int) -> bool:
    """Count a confirmation link sent for this user; True if over the limit (each one mails
    an address the user typed)."""
    return _usage(request, "email-link", str(user_id), settings.EMAIL_LINKS_PER_ACCOUNT, True)


def second_factor_locked(request: HttpRequest, user_id: int) -> bool:
    """Too many wrong codes (authenticator or recovery) lately for this account, or from this
    client's address."""
    return _usage(
        request, "2fa-account", str(user_id), settings.TWO_FACTOR_FAILURES_PER_ACCOUNT, False
    ) or _usage(
        request, "2fa-address", address(request), settings.LOGIN_FAILURES_PER_ADDRESS, False
    )


def second_factor_failed(request: HttpRequest, user_id: int) -> None:
    _usage(request, "2fa-account", str(user_id), settings.TWO_FACTOR_FAILURES_PER_ACCOUNT, True)
    _usage(request, "2fa-address", address(request), settings.LOGIN_FAILURES_PER_ADDRESS, True)


def api_request_refused(request: HttpRequest) -> bool:
    """Count an API request of this user (or, signed out, this address); True if over."""
    user = getattr(request, "user", None)
    client = f"user:{user.pk}" if user is not None and user.is_authenticated else address(request)
    return _usage(request, "api", client, settings.API_REQUESTS_PER_CLIENT, True)


class ApiRateLimitMiddleware:
    """A program's request (made with a token: TokenMiddleware, before this, set
    request.api_token) takes a unit from its token's bucket and its account's, wherever it
    goes; over either, `rate_limited` 429 saying when to retry, and the request is not run.
    It is not counted in the fixed window: a bot playing fast games makes far more than
    API_REQUESTS_PER_CLIENT a minute, at a steady pace the buckets allow. A stream counts
    once, when it is opened (its keep-alives are not requests).

    Any other request under /api/ (a session's, a visitor's) is counted in the fixed window:
    at most API_REQUESTS_PER_CLIENT per user (or address), beyond it the same 429."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = getattr(request, "api_token", None)
        if token is not None:
            wait = take(token_buckets(token.pk, token.user_id))
            if wait > 0:
                return too_many(
                    wait,
                    _("Too many requests with this token or account: retry in %(seconds)s s.")
                    % {"seconds": formats.number_format(wait, 2)},
                )
        elif request.path.startswith(API_PREFIX) and api_request_refused(request):
            return too_many(
                60.0,  # the most a fixed window can have left
                _("Too many requests (at most %(most)s): slow down.")
                % {"most": settings.API_REQUESTS_PER_CLIENT},
            )
        return self.get_response(request)


# --- token buckets for programs (the Bot API) ------------------------------------------------
#
# A request made with a token (accounts/tokens.py's TokenMiddleware sets request.api_token)
# takes one unit from two buckets: its token's and its account's. A bucket holds at most
# `burst` units and refills at `rate` units a second; a request that finds either bucket
# short of a unit is refused (`rate_limited`, 429) and takes nothing from either. Unlike the
# fixed windows above, a bot that keeps under the rate is never refused, and one that went
# over waits a fraction of a second, not up to a minute: it is told exactly how long.
#
# The buckets live in Redis, checked and taken from in one Lua script (atomic: every server
# process sees the same levels) on Redis's own clock (the processes' clocks may differ);
# with the embedded default's local-memory cache, or while Redis is unreachable, in this
# process.


@dataclass(frozen=True)
class Bucket:
    """One bucket to take a unit from: its key, its size and its refill a second."""

    key: str
    burst: float
    rate: float


# KEYS: the buckets; ARGV: each bucket's burst and rate, in turn. Answers {1, "0"} when a
# unit was taken from every bucket, {0, "<seconds until one could be>"} when none was (a
# string: Redis turns a Lua number into an integer). A bucket is a hash {level, at} that
# expires once it would be full again, so idle tokens leave nothing behind.
_BUCKET_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local levels = {}
local wait = 0
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  local held = redis.call('HMGET', key, 'level', 'at')
  local level = tonumber(held[1])
  local at = tonumber(held[2])
  if level == nil or at == nil then
    level = burst
  else
    level = math.min(burst, level + math.max(0, now - at) * rate)
  end
  levels[i] = level
  if level < 1 then
    wait = math.max(wait, (1 - level) / rate)
  end
end
if wait > 0 then
  return {0, string.format('%.3f', wait)}
end
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  redis.call('HSET', key, 'level', string.format('%.6f', levels[i] - 1), 'at',
    string.format('%.6f', now))
  redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 1000)
end
return {1, '0'}
"""
_script: list[Any] = []  # the registered script, once


def take(buckets: list[Bucket]) -> float:
    """Take one unit from every bucket, or from none: 0.0 if taken, else the seconds until
    all of them hold a unit again. A bucket with no rate has no limit."""
    buckets = [bucket for bucket in buckets if bucket.rate > 0]
    if not buckets:
        return 0.0
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    cache = caches["default"]  # the backend itself (django.core.cache.cache is a proxy)
    if not isinstance(cache, RedisCache):
        return _take_here(buckets)
    try:
        client = _redis_client(cache)
        if not _script:
            _script.append(client.register_script(_BUCKET_SCRIPT))
        taken, wait = _script[0](
            keys=[cache.make_key(f"bucket:{bucket.key}") for bucket in buckets],
            args=[figure for bucket in buckets for figure in (bucket.burst, bucket.rate)],
            client=client,
        )
    except CACHE_DOWN as error:
        _warn_here(error)
        return _take_here(buckets)
    return 0.0 if int(taken) else max(float(wait), 0.001)


_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _redis_client(cache: Any) -> Any:
    """One Redis client (and its pool of connections) per process for the buckets. The cache
    object is the request's own under ASGI (Django's caches are per thread, and each request
    runs in a thread of its own), and with it a new connection each request: a bot's every
    move paid for connecting to Redis (docs/PERFORMANCE.md, the Bot API)."""
    location = str(cache._servers[0])
    client = _clients.get(location)
    if client is None:
        with _clients_lock:
            client = _clients.get(location)
            if client is None:
                client = _clients[location] = cache._cache.get_client(write=True)
    return client


# key -> (level, monotonic time), in this process: the embedded default's, or while Redis is
# away. Full buckets are forgotten when there are too many.
_LEVELS: dict[str, tuple[float, float]] = {}
_LEVELS_LOCK = threading.Lock()


def _take_here(buckets: list[Bucket]) -> float:
    now = time.monotonic()
    with _LEVELS_LOCK:
        if len(_LEVELS) >= _HERE_KEPT:
            _LEVELS.clear()  # every bucket starts full again: at worst, one more burst each
        levels = []
        for bucket in buckets:
            level, at = _LEVELS.get(bucket.key, (bucket.burst, now))
            levels.append(min(bucket.burst, level + max(0.0, now - at) * bucket.rate))
        wait = max(
            ((1 - level) / bucket.rate for bucket, level in zip(buckets, levels, strict=True)),
            default=0.0,
        )
        if wait > 0:
            return wait
        for bucket, level in zip(buckets, levels, strict=True):
            _LEVELS[bucket.key] = (level - 1, now)
        return 0.0


def forget_buckets() -> None:
    """Every bucket of this process full again (the tests' fresh start)."""
    with _LEVELS_LOCK:
        _LEVELS.clear()


def _warn_here(error: BaseException) -> None:
    now = time.time()
    if now - _warned_at[0] > 60:
        _warned_at[0] = now
        logger.warning("limits counted in this process: the cache is unreachable (%s)", error)


def token_buckets(token_id: int, user_id: int) -> list[Bucket]:
    """The buckets a request made with this token takes from (docs/SECURITY.md)."""
    return [
        Bucket(f"token:{token_id}", settings.API_TOKEN_BURST, settings.API_TOKEN_PER_SECOND),
        Bucket(f"account:{user_id}", settings.API_ACCOUNT_BURST, settings.API_ACCOUNT_PER_SECOND),
    ]


def too_many(wait: float, message: str) -> HttpResponse:
    """The answer over a limit: 429 `rate_limited`, when to retry in the body (seconds, a
    fraction) and in `Retry-After` (whole seconds, rounded up, as HTTP writes it)."""
    response = JsonResponse(
        {"error": {"code": "rate_limited", "message": message, "retry_after": round(wait, 3)}},
        status=429,
    )
    response["Retry-After"] = str(max(1, math.ceil(wait)))
    return response
