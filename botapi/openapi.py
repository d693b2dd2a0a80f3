"""The Bot API's published description (OpenAPI 3.1), generated from the code.

Every endpoint under /api/ that a token may call (`accounts.tokens.accepts_tokens` marks its
view with `token_scopes`) is found by walking the URLconf, so an endpoint added anywhere is
described without a list kept here. What each one reads and answers comes from the typed
models the apps register at the ground (realtime/protocol.py): `register_bodies` (a POST's
body), `register_streams` (the lines of a newline-delimited JSON stream) and
`register_answers` (a JSON answer); an endpoint none of them names is described by its
route, its HTTP methods (read from Django's `require_http_methods` decorators), its scopes
and its view's docstring, its answer as a JSON object. A registered route that resolves to
one view for several values of a parameter (`POST /api/games/<id>/<action>`) is described
once per value registered.

`python manage.py openapi` writes it to docs/openapi.json; `GET /api/openapi.json` serves
it; tests/test_openapi.py checks the file is the one the code makes.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.exceptions import Resolver404
from django.utils import translation
from django.views.decorators.http import require_GET

from accounts.tokens import ANY_SCOPE, SCOPES, accepts_tokens
from realtime.errors import HTTP_STATUS
from realtime.protocol import HTTP_ANSWERS, HTTP_BODIES, HTTP_STREAMS

DESCRIPTION_FILE = Path(settings.BASE_DIR) / "docs" / "openapi.json"
API_ROUTE = "api/"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# A route's parameter: <int:game_id>, <key>.
PARAMETER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
CONVERTERS = {
    "int": {"type": "integer", "minimum": 0},
    "str": {"type": "string"},
    "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
    "uuid": {"type": "string", "format": "uuid"},
    "path": {"type": "string"},
}
NDJSON = "application/x-ndjson"


@dataclass
class Operation:
    method: str
    route: str  # the URLconf's route: api/games/<int:game_id>/<str:action>
    path: str  # as OpenAPI writes it: /api/games/{game_id}/resign
    view: Any
    parameters: list[tuple[str, str]] = field(default_factory=list)  # (name, converter)
    body: Any = None
    stream: Any = None
    answer: Any = None

    @property
    def scopes(self) -> list[str]:
        return [name for name in SCOPES if name in self.view.token_scopes]


def token_routes() -> list[tuple[str, Any]]:
    """(route, view) of every URL pattern under /api/ whose view accepts tokens, in the
    URLconf's order (the order Django tries them in)."""

    def walk(patterns: list[Any], prefix: str) -> list[tuple[str, Any]]:
        found = []
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                found += walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                route = prefix + str(pattern.pattern)
                if route.startswith(API_ROUTE) and hasattr(pattern.callback, "token_scopes"):
                    found.append((route, pattern.callback))
        return found

    return walk(get_resolver().url_patterns, "")


def http_methods(view: Any) -> list[str]:
    """The methods Django's require_http_methods (require_GET, require_POST) lets through, read
    from the decorator's closure; GET when none is found."""
    allowed: set[str] = set()
    while view is not None:
        for cell in getattr(view, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, list | tuple) and value and all(m in METHODS for m in value):
                allowed |= set(value)
        view = getattr(view, "__wrapped__", None)
    return [method for method in METHODS if method in allowed] or ["GET"]


def _registered() -> dict[tuple[str, str], dict[str, Any]]:
    """ "METHOD /api/path/<x>" -> its models, from the ground's registries."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for registry, kind in (
        (HTTP_BODIES, "body"),
        (HTTP_STREAMS, "stream"),
        (HTTP_ANSWERS, "answer"),
    ):
        for key, model in registry.items():
            method, _space, path = key.partition(" ")
            entries.setdefault((method, path), {})[kind] = model
    return entries


def _openapi_path(route: str, registered: str | None) -> tuple[str, list[tuple[str, str]]]:
    """The route as OpenAPI writes it, and its parameters. With a registered path, a
    parameter the registered path fixes (`<str:action>` against `resign`) is written as
    the registered value."""
    segments = route.split("/")
    given = registered.strip("/").split("/") if registered is not None else segments
    if len(given) != len(segments):
        given = segments
    written, parameters = [], []
    for mine, theirs in zip(segments, given, strict=True):
        found = PARAMETER.fullmatch(mine)
        if found is None:
            written.append(mine)
        elif PARAMETER.fullmatch(theirs) is None:
            written.append(theirs)  # fixed by the registered path
        else:
            written.append("{" + found["name"] + "}")
            parameters.append((found["name"], found["converter"] or "str"))
    return "/" + "/".join(written), parameters


def operations() -> list[Operation]:
    """Every operation a token may call: the registered ones where their path resolves to a
    token-accepting view, then each token-accepting route's methods not registered."""
    resolver = get_resolver()
    routes = token_routes()
    by_view = {id(view): route for route, view in routes}
    found: dict[tuple[str, str], Operation] = {}
    covered: set[tuple[str, str]] = set()  # (route, method) described from a registry
    for (method, path), models in sorted(_registered().items()):
        sample = PARAMETER.sub("1", path)
        try:
            match = resolver.resolve(sample)
        except Resolver404:
            continue
        route = by_view.get(id(match.func))
        if route is None or method not in http_methods(match.func):
            continue  # a page or an endpoint for sessions only
        written, parameters = _openapi_path(route, path)
        found[(written, method)] = Operation(
            method, route, written, match.func, parameters, **models
        )
        covered.add((route, method))
    for route, view in routes:
        for method in http_methods(view):
            written, parameters = _openapi_path(route, None)
            if (route, method) in covered or (written, method) in found:
                continue
            found[(written, method)] = Operation(method, route, written, view, parameters)
    return sorted(found.values(), key=lambda op: (op.path, METHODS.index(op.method)))


def _summary(view: Any) -> tuple[str, str]:
    """The view's docstring: its first sentence, and the rest."""
    while hasattr(view, "__wrapped__"):
        view = view.__wrapped__
    text = inspect.getdoc(view) or ""
    first, _blank, rest = text.partition("\n\n")
    return " ".join(first.split()), rest.strip()


class ApiError(msgspec.Struct, forbid_unknown_fields=True):
    code: str  # docs/PROTOCOL.md's "Error codes" table
    message: str  # for people, in the account's language
    retry_after: float | None = None  # `rate_limited` only: seconds until a retry may pass


class ErrorAnswer(msgspec.Struct, forbid_unknown_fields=True):
    """Every refusal: nothing was changed."""

    error: ApiError


def _content(media: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {media: {"schema": schema}}


def document() -> dict[str, Any]:
    """The OpenAPI document, as a dict."""
    ops = operations()
    models: list[Any] = [ErrorAnswer]
    for op in ops:
        models += [model for model in (op.body, op.stream, op.answer) if model is not None]
    # One call for every model: each is named once under components.schemas.
    schemas, components = msgspec.json.schema_components(
        models, ref_template="#/components/schemas/{name}"
    )
    schema_of = dict(zip(map(id, models), schemas, strict=True))
    error = schema_of[id(ErrorAnswer)]
    statuses = sorted(set(HTTP_STATUS.values()) | {400, 401, 403, 404, 405, 429})
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        summary, description = _summary(op.view)
        answer: dict[str, Any]
        if op.stream is not None:
            answer = {
                "description": "A stream of newline-delimited JSON: one object a line of these "
                "(an empty line is a keep-alive).",
                "content": _content(NDJSON, schema_of[id(op.stream)]),
            }
        else:
            schema = schema_of[id(op.answer)] if op.answer is not None else {"type": "object"}
            answer = {"description": "Done.", "content": _content("application/json", schema)}
        responses: dict[str, Any] = {"200": answer}
        for status in statuses:
            if status < 400 or (status >= 500 and status != 503):
                continue
            responses[str(status)] = {
                "description": _STATUS_WORDS.get(status, "Refused."),
                "content": _content("application/json", error),
            }
        responses["429"]["headers"] = {
            "Retry-After": {
                "description": "Whole seconds until a request may pass (rounded up).",
                "schema": {"type": "integer"},
            }
        }
        operation: dict[str, Any] = {
            "operationId": f"{op.method.lower()}_{_identifier(op.path)}",
            "summary": summary or f"{op.method} {op.path}",
            "security": [{"bearer": op.scopes}],
            "x-token-scopes": op.scopes,
            "responses": responses,
        }
        if description:
            operation["description"] = description
        if op.parameters:
            operation["parameters"] = [
                {
                    "name": name,
                    "in": "path",
                    "required": True,
                    "schema": CONVERTERS.get(converter, {"type": "string"}),
                }
                for name, converter in op.parameters
            ]
        if op.body is not None:
            operation["requestBody"] = {
                "required": False,
                "content": _content("application/json", schema_of[id(op.body)]),
            }
        paths.setdefault(op.path, {})[op.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Diffusion online: the Bot API",
            "version": "1",
            "description": _INTRODUCTION,
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A personal access token (`dif_` and 40 characters), made on "
                    "the settings page /settings/tokens/. Each operation lists the scopes of "
                    "which its token must hold one: "
                    + "; ".join(f"`{name}`: {SCOPES[name]}" for name in SCOPES),
                }
            },
        },
    }


_INTRODUCTION = (
    "Every endpoint a program may call with a personal access token "
    "(`Authorization: Bearer dif_...`, no CSRF token, no cookie), generated by "
    "`python manage.py openapi` from the site's URLs and typed models. docs/API.md explains "
    "them, docs/BOTS.md writes a bot, docs/PROTOCOL.md lists every error code, and "
    "docs/protocol.schema.json holds the same models as JSON Schema. A token needs one of "
    "the scopes its operation lists (`security`, and `x-token-scopes`); a bot account's "
    "token plays with the `bot` scope. Requests made with a token are limited by a token "
    "bucket per token and one per account (429 `rate_limited`, with `Retry-After` and "
    "`retry_after`)."
)
_STATUS_WORDS = {
    400: "A bad request: the body or a parameter cannot be read.",
    401: "`bad_token`: the token is unknown, revoked, or its account is closed.",
    403: "Refused: the token lacks the scope (`missing_scope`), or the account may not.",
    404: "No such thing.",
    405: "This endpoint does not take that method.",
    409: "Refused in this state (a game over, not your turn, ...).",
    413: "The body is too large.",
    422: "An illegal move.",
    429: "Too many requests (`rate_limited`): retry after `retry_after` seconds.",
    503: "The server cannot reach its database just now: try again in a moment.",
}


def _identifier(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", path.lower()).strip("_")


def text() -> str:
    """The document as it is published (stable order, so the file diffs cleanly), in the
    site's default language whatever the request's."""
    with translation.override(settings.LANGUAGE_CODE):
        content = document()
    return json.dumps(content, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@lru_cache(maxsize=1)
def _served() -> bytes:
    return text().encode()


@require_GET
@accepts_tokens(*ANY_SCOPE)
def openapi_json(request: HttpRequest) -> HttpResponse:
    """This description: every endpoint a token may call (OpenAPI 3.1)."""
    return HttpResponse(_served(), content_type="application/json")
