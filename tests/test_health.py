"""GET /readyz: a real round trip to the database and the channel layer; GET /healthz: the
process answers, whatever PostgreSQL and Redis do."""

from __future__ import annotations

import logging
import smtplib

import pytest
from django.core.mail import send_mail
from django.db import connection
from django.test import Client, override_settings

from realtime.channel_layers import build_channel_layers
from tests.conftest import redis_layers
from tests.relay import failing_relay

# Transactional: the health check closes stale connections the way production does, which
# an open test transaction would not survive.
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_reports_healthy_on_the_embedded_default(client: Client) -> None:
    # The embedded default's layer (no REDIS_URL), whatever the environment running the tests
    # sets.
    with override_settings(CHANNEL_LAYERS=build_channel_layers(None)):
        response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["channel_layer"] == {
        "backend": "BridgedInMemoryChannelLayer",
        "ok": True,
        "ms": body["channel_layer"]["ms"],
    }


@pytest.mark.redis
@pytest.mark.parametrize("kind", ["pubsub", "core"])
def test_it_reports_healthy_through_real_redis(client: Client, kind: str) -> None:
    with override_settings(CHANNEL_LAYERS=redis_layers(kind)):
        response = client.get("/readyz")
    assert response.status_code == 200, response.content
    expected = {"pubsub": "PubSubChannelLayer", "core": "RedisChannelLayer"}[kind]
    assert response.json()["channel_layer"]["backend"] == expected


def test_it_reports_unavailable_when_the_channel_layer_is_unreachable(client: Client) -> None:
    # Nothing listens on port 1: a real refused connection, not a mock.
    with override_settings(CHANNEL_LAYERS=build_channel_layers("redis://127.0.0.1:1/0")):
        response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"]["ok"] is True
    assert body["channel_layer"]["ok"] is False
    assert "ConnectionError" in body["channel_layer"]["error"]


def test_liveness_does_not_fail_with_the_channel_layer(client: Client) -> None:
    # Restarting every process would not bring Redis back: liveness stays 200.
    with override_settings(CHANNEL_LAYERS=build_channel_layers("redis://127.0.0.1:1/0")):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "draining": False}


def test_it_reports_healthy_on_the_database_of_this_pass(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json()["database"]["vendor"] == connection.vendor


def test_mail_that_cannot_go_out_is_shown_and_logged_once_without_leaving_rotation(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with failing_relay() as (relay, _port):  # EMAIL_USE_TLS's default, a plain local relay
        assert client.get("/readyz").json()["mail"] == {"ok": None}
        caplog.set_level(logging.WARNING, logger="realtime.outgoing_mail")
        for _ in range(2):
            with pytest.raises(smtplib.SMTPNotSupportedError):
                send_mail("s", "b", None, ["p@players.test"])
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1, caplog.text  # once, when it begins to fail
        assert "STARTTLS extension not supported" in errors[0].getMessage()
        assert "set EMAIL_USE_TLS=0 for a plain local relay" in errors[0].getMessage()
        failing = client.get("/readyz")
        assert failing.status_code == 200  # the games go on without mail
        body = failing.json()
        assert body["status"] == "ok"
        assert body["mail"]["ok"] is False
        assert "STARTTLS" in body["mail"]["error"]
        assert "EMAIL_USE_TLS=0" in body["mail"]["hint"]
        assert body["mail"]["failing_since"] <= body["mail"]["last_attempt"]
        assert relay.mails == []
        with override_settings(EMAIL_USE_TLS=False):
            assert send_mail("s", "b", None, ["p@players.test"]) == 1
        assert len(relay.mails) == 1
        assert "goes out again" in caplog.records[-1].getMessage()
        assert client.get("/readyz").json()["mail"]["ok"] is True
