"""The Bot API's published description (botapi/openapi.py): docs/openapi.json is the one the
code makes, names every endpoint a token may call with its scopes and models, and nothing
else; the site serves it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import resolve

from accounts import tokens
from botapi.openapi import DESCRIPTION_FILE, http_methods, text, token_routes
from tests.games_helpers import make_user


@pytest.fixture(scope="module")
def published() -> dict[str, Any]:
    return dict(json.loads(text()))


def test_the_published_file_is_the_one_the_code_makes() -> None:
    assert DESCRIPTION_FILE.read_text() == text(), "run: python manage.py openapi"


def test_every_route_a_token_may_call_is_described_with_its_methods_and_scopes(
    published: dict[str, Any],
) -> None:
    # What each described operation reaches, as Django resolves it.
    reached: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for path, operations in published["paths"].items():
        view = resolve(re.sub(r"\{[^}]+\}", "1", path)).func
        for method, operation in operations.items():
            reached.setdefault(id(view), []).append((method.upper(), operation))
    routes = token_routes()
    assert len(routes) >= 20
    for route, view in routes:
        described = reached.get(id(view), [])
        assert {method for method, _ in described} == set(http_methods(view)), route
        for _method, operation in described:
            assert set(operation["x-token-scopes"]) == view.token_scopes, route
            assert operation["security"] == [{"bearer": operation["x-token-scopes"]}]


def test_nothing_is_described_that_a_token_may_not_call(published: dict[str, Any]) -> None:
    for path, operations in published["paths"].items():
        match = resolve(re.sub(r"\{[^}]+\}", "1", path))
        assert match.func.token_scopes, path
        for method in operations:
            assert method.upper() in http_methods(match.func), (path, method)
    # The analysis' review shares the game actions' route, and is for sessions only.
    assert "/api/games/{game_id}/review" not in published["paths"]
    assert "/api/push/subscriptions" not in published["paths"]


def test_bodies_streams_and_refusals_are_the_code_s_models(published: dict[str, Any]) -> None:
    paths, schemas = published["paths"], published["components"]["schemas"]
    move = paths["/api/games/{game_id}/move"]["post"]
    body = move["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/MoveBody"}
    assert set(schemas["MoveBody"]["required"]) >= {"move"}
    assert move["parameters"] == [
        {
            "name": "game_id",
            "in": "path",
            "required": True,
            "schema": {"type": "integer", "minimum": 0},
        }
    ]
    resign = paths["/api/games/{game_id}/resign"]["post"]
    assert resign["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Resign"
    )
    stream = paths["/api/games/{game_id}/stream"]["get"]["responses"]["200"]["content"]
    assert list(stream) == ["application/x-ndjson"]
    assert "StreamMove" in json.dumps(stream) or "anyOf" in json.dumps(stream)
    refused = move["responses"]["429"]
    assert "Retry-After" in refused["headers"]
    assert schemas["ApiError"]["properties"]["retry_after"]
    assert published["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    # Every reference leads to a model that is there.
    for name in re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(published)):
        assert name in schemas, name


@pytest.mark.django_db
def test_the_site_serves_it_to_visitors_and_tokens() -> None:
    served = Client().get("/api/openapi.json")
    assert served.status_code == 200 and served["Content-Type"] == "application/json"
    assert served.content.decode() == DESCRIPTION_FILE.read_text()
    _row, secret = tokens.create_token(user=make_user("alice"), name="bot", scopes=["play"])
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/openapi.json").status_code == 200
