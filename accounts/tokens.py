"""Personal access tokens: a program acts for an account with the scopes its owner gave it.

A token is `dif_` and 40 random characters, sent as `Authorization: Bearer <token>`. Only its
SHA-256 is stored, as GitHub keeps its tokens: the secret is shown once, on the settings
page that creates it. (django-oauth-toolkit keeps every access token itself in its table,
beside a checksum used only for look-ups, so a copy of the table would hand out every
token; and a personal token needs none of OAuth's flows. docs/API.md says so.)

A request with a token never needs a CSRF token (no browser sends it on its own) and is
never signed in by a session: it reaches only the endpoints that name a scope
(`accepts_tokens`), and only with a token that holds one of the scopes named. Tokens end
with a new password, with the account, by a moderator's action, and by their owner; open
streams of a revoked token are told at once (`TOKEN_REVOKED` on the account's group).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import wraps
from typing import Any

from channels.layers import get_channel_layer
from django.db import connections, router, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import ApiToken, User
from realtime.api_errors import error
from realtime.db import run_soon
from realtime.errors import ServiceError
from realtime.ws import account_group

logger = logging.getLogger(__name__)

PREFIX = "dif_"
SECRET_BYTES = 30  # 40 characters of URL-safe base64

# name -> what it lets a program do (shown on the settings page, in the owner's language).
SCOPES: dict[str, Any] = {
    "read": gettext_lazy("Read your games, challenges and preferences; follow your event stream."),
    "play": gettext_lazy(
        "Play your games: move, resign, abort, offer and answer draws and takebacks, chat."
    ),
    "challenge": gettext_lazy("Seek games, challenge players, accept and decline challenges."),
    "bot": gettext_lazy(
        "Play as a bot account (docs/BOTS.md): everything above, for a bot, and turning an "
        "account without games into a bot, which cannot be undone."
    ),
}
# Every scope: for public reads, which any token may make.
ANY_SCOPE = ("read", "play", "challenge", "bot")
# A bot account's token with the `bot` scope may do what these scopes let a person's do.
BOT_COVERS = frozenset({"read", "play", "challenge"})

MAX_TOKENS = 20  # live tokens per account
NAME_LENGTH = 60
# last_used_at is written at most this often per token: a bot's moves do not each write it.
USED_EVERY = timedelta(minutes=1)

# Why a token ended (ApiToken.revoked_why).
REVOKED = ("owner", "password", "closed", "moderator")
# The message on the account's group that ends the streams of revoked tokens: `tokens` holds
# their ids.
TOKEN_REVOKED = "token.revoked"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def parse_scopes(names: Iterable[str]) -> list[str]:
    """The scopes named, in SCOPES' order; ServiceError `bad_scope` for an unknown one."""
    wanted = {name.strip() for name in names if name.strip()}
    unknown = sorted(wanted - SCOPES.keys())
    if unknown:
        raise ServiceError(
            "bad_scope",
            _("Unknown scope %(scope)s: the scopes are %(scopes)s.")
            % {"scope": unknown[0], "scopes": ", ".join(SCOPES)},
        )
    if not wanted:
        raise ServiceError("bad_scope", _("Choose at least one scope."))
    return [name for name in SCOPES if name in wanted]


def create_token(*, user: User, name: str, scopes: Iterable[str]) -> tuple[ApiToken, str]:
    """A new token of `user`'s: the row and the secret, which is never seen again."""
    name = " ".join(name.split())
    if not name or len(name) > NAME_LENGTH:
        raise ServiceError(
            "bad_token_name",
            _("Name the token (at most %(most)s characters), so you know it later.")
            % {"most": NAME_LENGTH},
        )
    chosen = parse_scopes(scopes)
    if user.is_guest or user.is_bot or user.closed_at is not None or not user.is_active:
        raise ServiceError("not_registered", _("Guests have no tokens: sign up first."))
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        if live(user).count() >= MAX_TOKENS:
            raise ServiceError(
                "too_many_tokens",
                _("You have %(most)s tokens already: revoke one first.") % {"most": MAX_TOKENS},
            )
        secret = PREFIX + secrets.token_urlsafe(SECRET_BYTES)
        token = ApiToken.objects.create(
            user=user, name=name, digest=digest(secret), hint=secret[-4:], scopes=" ".join(chosen)
        )
    logger.info("token %s created for user %s (%s)", token.pk, user.pk, token.scopes)
    return token, secret


def live(user: User) -> Any:
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True)


def authenticate(secret: str) -> ApiToken | None:
    """The live token whose secret this is (its user loaded), or None."""
    if not secret.startswith(PREFIX) or len(secret) > 100:
        return None
    token = _live_token(digest(secret))
    if token is None or not token.user.is_active or token.user.closed_at is not None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


class _TokenQuery:
    """The live token of a digest and its user in one statement, written once per process.

    The ORM compiled `ApiToken.objects.select_related("user").filter(...)` (every column of
    both tables, their joins and aliases) on every request a program made: a quarter of a
    server's busy time while bots moved (docs/PERFORMANCE.md, "The Bot API"). The statement
    is the same every time but for the digest, so it is written here once from the models'
    own fields; the rows become models as a queryset's do (each column through the converters
    Django applies to it, then `Model.from_db`). It still reads the database on every
    request, so a token revoked, or an account closed, is refused at once on every process.
    The same text each time also lets psycopg prepare it (DATABASE_PREPARE_THRESHOLD)."""

    def __init__(self, using: str) -> None:
        connection = connections[using]
        quote = connection.ops.quote_name
        self.using = using
        self.token_fields = list(ApiToken._meta.concrete_fields)
        self.user_fields = list(User._meta.concrete_fields)
        columns = [f"t.{quote(f.column)}" for f in self.token_fields] + [
            f"u.{quote(f.column)}" for f in self.user_fields
        ]
        self.sql = (
            f"SELECT {', '.join(columns)} FROM {quote(ApiToken._meta.db_table)} t "
            f"INNER JOIN {quote(User._meta.db_table)} u "
            f"ON u.{quote(User._meta.pk.column)} = t.{quote(ApiToken.user.field.column)} "
            f"WHERE t.{quote(ApiToken._meta.get_field('digest').column)} = %s "
            f"AND t.{quote(ApiToken._meta.get_field('revoked_at').column)} IS NULL"
        )
        # (column index, its converters) for the columns that have any.
        self.converters: list[tuple[int, list[Any]]] = []
        for index, (alias, field) in enumerate(
            [("t", f) for f in self.token_fields] + [("u", f) for f in self.user_fields]
        ):
            column = field.get_col(alias)
            found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if found:
                self.converters.append((index, [(convert, column) for convert in found]))
        self.token_names = [f.attname for f in self.token_fields]
        self.user_names = [f.attname for f in self.user_fields]

    def run(self, digest: str) -> ApiToken | None:
        connection = connections[self.using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [digest])
            row = cursor.fetchone()
        if row is None:
            return None
        values = list(row)
        for index, converters in self.converters:
            for convert, column in converters:
                values[index] = convert(values[index], column, connection)
        split = len(self.token_fields)
        token = ApiToken.from_db(self.using, self.token_names, values[:split])
        token.user = User.from_db(self.using, self.user_names, values[split:])
        return token


_token_queries: dict[str, _TokenQuery] = {}


def _live_token(secret_digest: str) -> ApiToken | None:
    """The live token with this digest (digests are unique), its user loaded; or None."""
    using = router.db_for_read(ApiToken)
    query = _token_queries.get(using)
    if query is None:
        query = _token_queries[using] = _TokenQuery(using)
    return query.run(secret_digest)


def is_live(token_id: int) -> bool:
    return ApiToken.objects.filter(pk=token_id, revoked_at__isnull=True).exists()


def revoke(*, user: User, token_id: int) -> None:
    """The owner revokes one of their tokens (revoking it twice changes nothing)."""
    if not ApiToken.objects.filter(pk=token_id, user=user).exists():
        raise ServiceError("no_such_token", _("You have no such token."))
    _revoke(ApiToken.objects.filter(pk=token_id, user=user), "owner")


def revoke_all(*, user_id: int, why: str) -> int:
    """Every live token of the user ends (a new password, the account closed, a moderator)."""
    return _revoke(ApiToken.objects.filter(user_id=user_id), why)


def _revoke(tokens: Any, why: str) -> int:
    assert why in REVOKED, why
    rows = list(tokens.filter(revoked_at__isnull=True).values_list("pk", "user_id"))
    if not rows:
        return 0
    ApiToken.objects.filter(pk__in=[pk for pk, _user in rows]).update(
        revoked_at=timezone.now(), revoked_why=why
    )
    by_user: dict[int, list[int]] = {}
    for pk, user_id in rows:
        by_user.setdefault(user_id, []).append(pk)
    for user_id, ids in by_user.items():
        logger.info("tokens %s of user %s revoked (%s)", ids, user_id, why)
        transaction.on_commit(lambda user_id=user_id, ids=ids: _tell_streams(user_id, ids))
    return len(rows)


def _tell_streams(user_id: int, ids: list[int]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": TOKEN_REVOKED, "tokens": ids}

    async def send() -> None:
        await layer.group_send(account_group(user_id), message)

    run_soon(send)


# --- requests ------------------------------------------------------------------------------


def bearer(request: HttpRequest) -> str | None:
    """The secret of an `Authorization: Bearer` header, or None without one."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    kind, _space, secret = header.partition(" ")
    if kind.lower() != "bearer":
        return None
    return secret.strip()


def request_token(request: HttpRequest) -> ApiToken | None:
    """The token that signed this request in, or None for a session's (or a visitor's)."""
    return getattr(request, "api_token", None)


def granted(token: ApiToken, scopes: Iterable[str]) -> bool:
    """Whether the token holds one of `scopes` (a bot account's `bot` covers BOT_COVERS)."""
    held = set(token.scopes.split())
    if "bot" in held and token.user.is_bot_account:
        held |= BOT_COVERS
    elif token.user.is_bot_account:
        # A bot account plays only with the `bot` scope, as lichess's bots do.
        held -= BOT_COVERS
    return bool(held & set(scopes))


View = Callable[..., HttpResponse]


def accepts_tokens(*scopes: str) -> Callable[[View], View]:
    """Marks an endpoint that a token holding one of `scopes` may call (TokenMiddleware
    refuses a token on every other one). Sessions call it as before."""
    for name in scopes:
        assert name in SCOPES, name

    def mark(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            return view(request, *args, **kwargs)

        wrapped.token_scopes = frozenset(scopes)  # type: ignore[attr-defined]
        return wrapped

    return mark


def bad_token() -> HttpResponse:
    response = error(
        401,
        "bad_token",
        _("This token is unknown, revoked, or its account is closed: create a new one."),
    )
    response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return response


def missing_scope(scopes: Iterable[str]) -> HttpResponse:
    names = sorted(scopes)
    if not names:
        return error(
            403,
            "token_not_accepted",
            _("This page is for the signed-in browser: a token cannot call it."),
        )
    return error(
        403,
        "missing_scope",
        _("This token lacks the scope this needs (%(scopes)s).") % {"scopes": " or ".join(names)},
    )


class TokenMiddleware:
    """Signs in a request that carries `Authorization: Bearer`: the token's user, never a
    session's; no CSRF check (a browser never adds the header by itself). An unknown or
    revoked token is `bad_token` (401); a token on an endpoint that does not accept it, or
    without the scope it needs, `token_not_accepted` / `missing_scope` (403). After
    AuthenticationMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        secret = bearer(request)
        if secret is None:
            return self.get_response(request)
        token = authenticate(secret)
        if token is None:
            return bad_token()
        request.user = token.user
        request.api_token = token
        # The session (if a cookie came too) is not this request's: nothing is read from it
        # or saved to it.
        request._dont_enforce_csrf_checks = True
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: Any
    ) -> HttpResponse | None:
        token = request_token(request)
        if token is None:
            return None
        scopes: frozenset[str] = getattr(view, "token_scopes", frozenset())
        if not scopes or not granted(token, scopes):
            return missing_scope(scopes)
        return None
