"""A player's own account: password reset and change, the e-mail address and its link,
two-factor sign-in; each against replay and guessing (docs/ACCOUNTS.md)."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pyotp
import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone

from accounts import emails, twofactor
from accounts.models import RecoveryCode, TwoFactor, User
from realtime.errors import ServiceError

pytestmark = pytest.mark.django_db
PASSWORD = "x-long-password-1"
NEW_PASSWORD = "rodeffer-zigzag-7"


def make_user(name: str, email: str = "") -> User:
    return User.objects.create_user(username=name, password=PASSWORD, email=email)


def signed_in(user: User, address: str = "127.0.0.1") -> Client:
    browser = Client(REMOTE_ADDR=address)
    browser.force_login(user)
    return browser


def link_in(message: Any, pattern: str) -> str:
    found = re.search(rf"https?://[^/\s]+(/{pattern}[^\s]*)", message.body)
    assert found, message.body
    return found.group(1)


def is_signed_in(browser: Client) -> bool:
    return "_auth_user_id" in browser.session


# --- password reset ---------------------------------------------------------------------------


def reset_link(address: str) -> str:
    Client().post("/password-reset/", {"email": address})
    return link_in(mail.outbox[-1], "password-reset/")


@pytest.mark.parametrize(
    ("asked", "mailed"),
    [
        ("alice@players.test", True),
        ("ALICE@players.test", True),  # the case of an address is the writer's
        ("nobody@players.test", False),
        ("closed@players.test", False),  # an inactive account gets no link
    ],
)
def test_a_reset_answers_the_same_whether_or_not_the_address_is_an_accounts(
    asked: str, mailed: bool
) -> None:
    make_user("alice", "alice@players.test")
    User.objects.create_user(username="Gone", email="closed@players.test", is_active=False)
    answer = Client().post("/password-reset/", {"email": asked})
    assert answer.status_code == 302 and answer["Location"] == "/password-reset/sent/"
    page = Client().get(answer["Location"]).content.decode()
    assert "If an account has that address" in page
    assert len(mail.outbox) == (1 if mailed else 0)
    if mailed:
        assert mail.outbox[0].to == ["alice@players.test"]
        assert "alice" in mail.outbox[0].body


def test_the_login_page_offers_the_reset() -> None:
    page = Client().get("/login/").content.decode()
    assert 'href="/password-reset/"' in page


def test_a_reset_link_sets_a_new_password_once_and_signs_out_every_session() -> None:
    alice = make_user("alice", "alice@players.test")
    elsewhere = signed_in(alice)
    link = reset_link("alice@players.test")
    browser = Client()
    form = browser.get(link, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = browser.post(
        form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert done.status_code == 302 and done["Location"] == "/password-reset/done/"
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    assert not is_signed_in(browser)  # no sign-in by the link: the second factor would be skipped
    assert elsewhere.get("/settings/account/").status_code == 302  # that session ended
    # The same link again, from any browser: dead.
    for replay in (browser, Client()):
        page = replay.get(link, follow=True).content.decode()
        assert 'id="reset-link-dead"' in page


def test_a_reset_link_dies_when_the_account_signs_in_and_after_an_hour() -> None:
    make_user("alice", "alice@players.test")
    link = reset_link("alice@players.test")
    Client().post("/login/", {"username": "alice", "password": PASSWORD})
    assert 'id="reset-link-dead"' in Client().get(link, follow=True).content.decode()
    fresh = reset_link("alice@players.test")
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert 'id="reset-link-dead"' in Client().get(fresh, follow=True).content.decode()
    assert 'id="reset-link-dead"' not in Client().get(fresh, follow=True).content.decode()


def test_resets_are_throttled_per_address_asked_for_and_per_client_known_or_not() -> None:
    make_user("alice", "alice@players.test")
    for asked in ("alice@players.test", "nobody@players.test"):
        answers = [
            Client(REMOTE_ADDR=f"10.1.0.{n}").post("/password-reset/", {"email": asked})
            for n in range(4)
        ]
        assert [a.status_code for a in answers] == [302, 302, 302, 429]
    assert len(mail.outbox) == 3
    client = Client(REMOTE_ADDR="10.2.0.1")
    codes = [
        client.post("/password-reset/", {"email": f"n{n}@players.test"}).status_code
        for n in range(21)
    ]
    assert codes[:20] == [302] * 20 and codes[20] == 429


# --- password change --------------------------------------------------------------------------


def test_changing_the_password_keeps_this_session_and_ends_the_others() -> None:
    alice = make_user("alice")
    here, there = signed_in(alice), signed_in(alice)
    wrong = here.post(
        "/settings/password/",
        {"old_password": "nope", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert wrong.status_code == 200 and "incorrectly" in wrong.content.decode()
    answer = here.post(
        "/settings/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert answer.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    assert here.get("/settings/account/").status_code == 200
    assert there.get("/settings/account/").status_code == 302


# --- the e-mail address -----------------------------------------------------------------------


def ask_for(browser: Client, address: str, password: str = PASSWORD) -> Any:
    return browser.post("/settings/email/", {"email": address, "password": password})


def test_a_new_address_waits_for_its_link_and_the_old_one_keeps_the_mail() -> None:
    alice = make_user("alice", "old@players.test")
    browser = signed_in(alice)
    assert ask_for(browser, "new@players.test").status_code == 302
    alice.refresh_from_db()
    assert (alice.email, alice.pending_email) == ("old@players.test", "new@players.test")
    (sent,) = mail.outbox
    assert sent.to == ["new@players.test"]
    link = link_in(sent, "settings/email/confirm/")
    # Opening the link (a mail program's preview too) changes nothing; the button does.
    assert "new@players.test" in Client().get(link).content.decode()
    alice.refresh_from_db()
    assert alice.email == "old@players.test"
    page = Client().post(link)
    assert page.status_code == 200 and 'id="email-confirmed"' in page.content.decode()
    alice.refresh_from_db()
    assert (alice.email, alice.pending_email) == ("new@players.test", "")
    assert alice.email_confirmed_at is not None
    again = Client().post(link)  # used once
    assert again.status_code == 400 and "has been used" in again.content.decode()


def test_a_newer_link_voids_the_older_and_a_cut_or_old_link_is_refused() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    ask_for(browser, "first@players.test")
    ask_for(browser, "second@players.test")
    first, second = (link_in(m, "settings/email/confirm/") for m in mail.outbox)
    assert "has been used" in Client().post(first).content.decode()
    assert "not one of ours" in Client().post(second[:-3] + "xyz/").content.decode()
    with time_machine.travel(timezone.now() + timedelta(days=3)):
        assert "expired" in Client().post(second).content.decode()
    alice.refresh_from_db()
    assert alice.email == ""


def test_changing_the_address_needs_the_password_and_is_throttled() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    wrong = ask_for(browser, "new@players.test", password="nope")
    assert "That is not your password." in wrong.content.decode()
    codes = [ask_for(browser, f"n{n}@players.test").status_code for n in range(6)]
    assert codes == [302] * 5 + [429]
    assert len(mail.outbox) == 5


def test_the_unconfirmed_current_address_can_be_confirmed() -> None:
    alice = make_user("alice", "alice@players.test")
    ask_for(signed_in(alice), "alice@players.test")
    Client().post(link_in(mail.outbox[0], "settings/email/confirm/"))
    alice.refresh_from_db()
    assert alice.email_confirmed_at is not None
    ask_for(signed_in(alice), "alice@players.test")  # confirmed already: no mail
    assert len(mail.outbox) == 1


# --- two-factor sign-in -----------------------------------------------------------------------


def turn_on(user: User) -> tuple[str, list[str]]:
    """Set up and enable the second factor through the page: (secret, recovery codes)."""
    browser = signed_in(user)
    browser.post("/settings/two-factor/", {"action": "start"})
    secret = TwoFactor.objects.get(user=user).secret
    assert secret in browser.get("/settings/two-factor/").content.decode()
    page = browser.post(
        "/settings/two-factor/", {"action": "enable", "code": pyotp.TOTP(secret).now()}
    )
    codes = re.findall(r"<code>([a-z0-9]{5}-[a-z0-9]{5})</code>", page.content.decode())
    return secret, codes


def next_code(secret: str) -> str:
    """The code of the next 30-second step: the one just used at setup is spent."""
    return pyotp.TOTP(secret).at(time.time() + 30)


def password_step(address: str = "127.0.0.1") -> Client:
    browser = Client(REMOTE_ADDR=address)
    answer = browser.post("/login/", {"username": "alice", "password": PASSWORD})
    assert answer.status_code == 302 and answer["Location"] == "/login/two-factor/"
    assert not is_signed_in(browser)
    return browser


def test_setting_up_needs_a_right_code_and_shows_ten_codes_kept_only_hashed() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    page = browser.post("/settings/two-factor/", {"action": "start"}, follow=True)
    assert "<svg" in page.content.decode() and "otpauth" not in page.content.decode()
    wrong = browser.post("/settings/two-factor/", {"action": "enable", "code": "000000"})
    assert wrong.status_code == 400 and not twofactor.enabled(alice)
    _, codes = turn_on(alice)
    assert twofactor.enabled(alice) and len(set(codes)) == 10
    stored = set(RecoveryCode.objects.filter(user=alice).values_list("digest", flat=True))
    assert len(stored) == 10 and not {c.replace("-", "") for c in codes} & stored
    assert "<code>" not in browser.get("/settings/two-factor/").content.decode()


def test_signing_in_asks_for_the_code_after_the_password_and_a_code_works_once() -> None:
    alice = make_user("alice")
    secret, _ = turn_on(alice)
    browser = password_step()
    assert browser.get("/settings/account/").status_code == 302  # not signed in yet
    code = next_code(secret)
    answer = browser.post("/login/two-factor/", {"code": code})
    assert answer.status_code == 302 and is_signed_in(browser)
    replay = password_step()
    refused = replay.post("/login/two-factor/", {"code": code})
    assert refused.status_code == 400 and not is_signed_in(replay)


def test_a_recovery_code_signs_in_once() -> None:
    alice = make_user("alice")
    _, codes = turn_on(alice)
    browser = password_step()
    browser.post("/login/two-factor/", {"code": codes[0].upper()})
    assert is_signed_in(browser)
    again = password_step()
    assert again.post("/login/two-factor/", {"code": codes[0]}).status_code == 400
    assert twofactor.recovery_codes_left(alice) == 9


def test_guessing_codes_locks_the_account_out_even_with_the_right_code() -> None:
    alice = make_user("alice")
    secret, _ = turn_on(alice)
    browser = password_step()
    answers = [browser.post("/login/two-factor/", {"code": f"{n:06d}"}) for n in range(5)]
    assert [a.status_code for a in answers] == [400] * 5
    # From another address too: counted per account.
    other = password_step("10.3.0.1")
    locked = other.post("/login/two-factor/", {"code": next_code(secret)})
    assert locked.status_code == 429 and not is_signed_in(other)


def test_the_code_step_lapses_after_five_minutes() -> None:
    alice = make_user("alice")
    secret, _ = turn_on(alice)
    browser = password_step()
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        answer = browser.post("/login/two-factor/", {"code": next_code(secret)})
    assert answer.status_code == 302 and answer["Location"] == "/login/"
    assert not is_signed_in(browser)


def test_turning_it_off_needs_a_code_or_the_password() -> None:
    alice = make_user("alice")
    secret, _ = turn_on(alice)
    browser = signed_in(alice)
    refused = browser.post("/settings/two-factor/", {"action": "disable", "password": "nope"})
    assert refused.status_code == 400 and twofactor.enabled(alice)
    browser.post("/settings/two-factor/", {"action": "disable", "password": PASSWORD})
    assert not twofactor.enabled(alice) and not RecoveryCode.objects.filter(user=alice).exists()
    secret, _ = turn_on(alice)
    browser.post("/settings/two-factor/", {"action": "disable", "code": next_code(secret)})
    assert not twofactor.enabled(alice)


def test_new_recovery_codes_replace_the_old_ones() -> None:
    alice = make_user("alice")
    secret, old = turn_on(alice)
    page = signed_in(alice).post(
        "/settings/two-factor/", {"action": "codes", "code": next_code(secret)}
    )
    new = re.findall(r"<code>([a-z0-9]{5}-[a-z0-9]{5})</code>", page.content.decode())
    assert len(new) == 10 and not set(new) & set(old)
    with pytest.raises(ServiceError, match="not right"):
        twofactor.do_verify(user=alice, code=old[0])


@pytest.mark.sqlite(reason="the code arithmetic, not the database, is under test")
@pytest.mark.parametrize(
    ("offset", "accepted"), [(-60, False), (-30, True), (30, True), (60, False)]
)
def test_a_code_from_one_step_either_side_is_accepted(offset: int, accepted: bool) -> None:
    secret = pyotp.random_base32()
    now = 1_700_000_000.0
    step = twofactor._matching_step(secret, pyotp.TOTP(secret).at(now + offset), now)
    assert (step is not None) is accepted


def test_the_link_token_names_the_account_and_the_address() -> None:
    alice = make_user("alice")
    token = emails.make_token(alice, "a@players.test")
    assert emails.read_token(token) == (alice.pk, "a@players.test")
