"""PostgreSQL itself: the second pass of `make test` really runs on it, and what only a
server database enforces holds there (the rest of the suite runs on both databases)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.models import User

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.postgres(reason="it checks that the PostgreSQL pass is not SQLite in disguise")
def test_the_tests_really_run_on_postgresql() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    assert version.startswith("PostgreSQL")


def test_the_database_refuses_names_that_differ_only_in_case() -> None:
    User.objects.create_user(username="Steere", password="x-long-password-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(username="STEERE", password="x-long-password-1")
