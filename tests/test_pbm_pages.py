"""The mail door on the web: the mail password on the profile page, and the commands' page."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import check_password
from django.test import Client

from pbm.grammar import GAME_FORMS, GLOBAL_FORMS
from pbm.identity import authenticate
from pbm.models import MailPassword
from realtime.errors import ServiceError
from tests.games_helpers import make_user
from tests.servers import ROOT

pytestmark = pytest.mark.django_db

PASSWORD = "x-long-password-1"  # make_user's


def signed_in(name: str, email: str = "") -> tuple[Client, object]:
    user = make_user(name)
    user.email = email
    user.save()
    browser = Client()
    assert browser.login(username=name, password=PASSWORD)
    return browser, user


def test_the_profile_page_sets_rotates_and_revokes_the_mail_password() -> None:
    browser, user = signed_in("alice", "alice@players.test")
    page = browser.get("/@alice/").content.decode()
    assert 'id="mail-password-form"' in page and "You have none yet." in page
    browser.post("/settings/mail-password/", {"action": "set", "mail_password": "first-pw"})
    assert check_password("first-pw", MailPassword.objects.get(user=user).password)
    assert authenticate("alice", "first-pw", "Alice <alice@players.test>") == user
    browser.post("/settings/mail-password/", {"action": "set", "mail_password": "second-pw"})
    with pytest.raises(ServiceError):
        authenticate("alice", "first-pw", "alice@players.test")
    browser.post("/settings/mail-password/", {"action": "revoke"})
    assert not MailPassword.objects.filter(user=user).exists()
    with pytest.raises(ServiceError):
        authenticate("alice", "second-pw", "alice@players.test")


def test_a_short_mail_password_is_refused_and_the_site_password_never_works_by_mail() -> None:
    browser, user = signed_in("bob", "bob@players.test")
    answer = browser.post(
        "/settings/mail-password/", {"action": "set", "mail_password": "abc"}, follow=True
    )
    assert "at least 6 characters" in answer.content.decode()
    assert not MailPassword.objects.filter(user=user).exists()
    with pytest.raises(ServiceError):
        authenticate("bob", PASSWORD, "bob@players.test")


def test_only_the_owner_sees_the_form_and_others_cannot_post_it() -> None:
    make_user("carol")
    visitor = Client()
    assert 'id="mail-password-form"' not in visitor.get("/@carol/").content.decode()
    refused = visitor.post("/settings/mail-password/", {"mail_password": "whatever-pw"})
    assert refused.status_code == 302 and "/login/" in refused["Location"]
    assert not MailPassword.objects.exists()


def test_the_commands_page_documents_every_command_and_the_rules_link_to_it() -> None:
    document = (ROOT / "docs" / "PBMSERV.md").read_text()
    for verb in GLOBAL_FORMS:
        assert f"`{verb}" in document, verb
    for verb in GAME_FORMS:
        assert f"`GAME {verb}" in document or f"`{verb}`" in document, verb
    page = Client().get("/help/mail/")
    assert page.status_code == 200
    assert "Playing by mail" in page.content.decode()
    assert 'href="/help/mail/"' in Client().get("/rules/").content.decode()
    assert 'href="/help/mail/"' in Client().get("/rules/zigzag/").content.decode()
