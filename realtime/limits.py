"""Limits on what one client may ask of the site: failed log-ins, new accounts, API requests.

Counts live in the default cache (Redis when REDIS_URL is set, shared by every server
process) in fixed windows, through django-ratelimit's counters. The figures are settings
(LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS, NEW_ACCOUNTS_PER_ADDRESS,
API_REQUESTS_PER_CLIENT, PASSWORD_RESETS_PER_EMAIL, PASSWORD_RESETS_PER_ADDRESS,
EMAIL_LINKS_PER_ACCOUNT, TWO_FACTOR_FAILURES_PER_ACCOUNT); docs/SECURITY.md lists them.

django_ratelimit is not an installed app: its system check refuses the in-memory cache,
which is right for the embedded default's single process.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

import redis.exceptions
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage

from realtime.api_errors import API_PREFIX, error

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
    now = time.time()
    if now - _warned_at[0] > 60:
        _warned_at[0] = now
        logger.warning("limits counted in this process: the cache is unreachable (%s)", error)
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
    """At most API_REQUESTS_PER_CLIENT requests under /api/ per user (or address): beyond
    it, `rate_limited` 429 with Retry-After, and the request is not run."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX) and api_request_refused(request):
            response = error(
                429,
                "rate_limited",
                _("Too many requests (at most %(most)s): slow down.")
                % {"most": settings.API_REQUESTS_PER_CLIENT},
            )
            response["Retry-After"] = "60"
            return response
        return self.get_response(request)
