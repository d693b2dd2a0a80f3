"""Sign-up, log-in, log-out and play-as-guest, through the web pages."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User

pytestmark = pytest.mark.django_db


def test_the_home_page_offers_guest_play_to_a_visitor(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Play as guest" in page
    assert 'id="connection"' in page
    assert "/static/js/lobby.js" in page


def test_play_as_guest_creates_a_guest_account_and_logs_it_in(client: Client) -> None:
    response = client.post(reverse("guest"))
    assert response.status_code == 302
    guest = User.objects.get()
    assert guest.is_guest
    assert guest.username.startswith("Guest-")
    assert not guest.has_usable_password()
    page = client.get("/").content.decode()
    assert guest.username in page
    assert "(guest)" in page


def test_play_as_guest_returns_to_the_page_it_was_clicked_on(client: Client) -> None:
    response = client.post(reverse("guest"), {"next": "/signup/"})
    assert response["Location"] == "/signup/"


def test_play_as_guest_never_redirects_to_another_site(client: Client) -> None:
    response = client.post(reverse("guest"), {"next": "https://evil.example/"})
    assert response["Location"] == "/"


def test_play_as_guest_twice_keeps_the_same_account(client: Client) -> None:
    client.post(reverse("guest"))
    client.post(reverse("guest"))
    assert User.objects.count() == 1


def test_guest_play_refuses_get_so_links_cannot_create_accounts(client: Client) -> None:
    assert client.get(reverse("guest")).status_code == 405
    assert User.objects.count() == 0


def test_guests_get_distinct_names(client: Client) -> None:
    for index in range(20):
        Client(REMOTE_ADDR=f"10.0.0.{index}").post(reverse("guest"))
    names = list(User.objects.values_list("username", flat=True))
    assert len(names) == len(set(names)) == 20


def test_sign_up_creates_an_account_and_logs_it_in(client: Client) -> None:
    response = client.post(
        reverse("signup"),
        {"username": "Steere", "password1": "rodeffer-zigzag-7", "password2": "rodeffer-zigzag-7"},
    )
    assert response.status_code == 302
    user = User.objects.get(username="Steere")
    assert not user.is_guest
    assert user.check_password("rodeffer-zigzag-7")
    assert "Steere" in client.get("/").content.decode()


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("ab", "Use 3 to 20 letters"),
        ("1abc", "Use 3 to 20 letters"),
        ("has space", "Use 3 to 20 letters"),
        ("a" * 21, "at most 20 characters"),
        ("<script>", "Use 3 to 20 letters"),
        ("admin", "That name is reserved."),
        ("Guest-ABCDEF", "That name is reserved."),
        ("guestly", "That name is reserved."),
    ],
)
def test_sign_up_rejects_a_bad_username_with_a_reason(
    client: Client, username: str, message: str
) -> None:
    response = client.post(
        reverse("signup"),
        {"username": username, "password1": "rodeffer-zigzag-7", "password2": "rodeffer-zigzag-7"},
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert User.objects.count() == 0


def test_sign_up_rejects_a_name_that_differs_only_in_case(client: Client) -> None:
    User.objects.create_user(username="Muniz", password="x-long-password-1")
    response = client.post(
        reverse("signup"),
        {"username": "muniz", "password1": "rodeffer-zigzag-7", "password2": "rodeffer-zigzag-7"},
    )
    assert "That name is taken." in response.content.decode()
    assert User.objects.count() == 1


def test_sign_up_rejects_a_weak_password(client: Client) -> None:
    response = client.post(
        reverse("signup"), {"username": "Kalah", "password1": "123", "password2": "123"}
    )
    assert response.status_code == 200
    assert "too short" in response.content.decode()
    assert not User.objects.filter(username="Kalah").exists()


def test_log_in_and_log_out(client: Client) -> None:
    User.objects.create_user(username="Alice", password="rodeffer-zigzag-7")
    response = client.post(reverse("login"), {"username": "Alice", "password": "rodeffer-zigzag-7"})
    assert response.status_code == 302
    assert "_auth_user_id" in client.session
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_log_in_with_a_wrong_password_says_so(client: Client) -> None:
    User.objects.create_user(username="Alice", password="rodeffer-zigzag-7")
    response = client.post(reverse("login"), {"username": "Alice", "password": "wrong"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_log_out_needs_a_post(client: Client) -> None:
    assert client.get(reverse("logout")).status_code == 405


def test_a_form_without_its_csrf_token_is_refused_with_a_plain_page() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("guest"))
    assert response.status_code == 403
    assert "That form has expired" in response.content.decode()
    assert User.objects.count() == 0


def test_an_unknown_page_is_a_plain_404(client: Client) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "Traceback" not in response.content.decode()
    assert "There is nothing at this address" in response.content.decode()


@pytest.mark.postgres(reason="the plan is PostgreSQL's")
def test_a_name_looked_up_in_any_case_reads_the_names_index() -> None:
    """`username__iexact` (challenges, mail commands, reports, sign-ups) compares UPPER of the
    name as text: the index accounts_user_name_any_case answers it, not a scan of every
    account (the table is small here, so the planner is told not to scan)."""
    from django.db import connection

    User.objects.create_user(username="Alice", password="x-long-password-1")
    query = User.objects.filter(username__iexact="aLiCe").values("pk")
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "accounts_user_name_any_case" in plan, plan
    assert query.count() == 1
