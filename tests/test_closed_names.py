"""A closed account's neutral name is what docs/ACCOUNTS.md says it is (accounts/services.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from accounts.services import GUEST_ALPHABET, GUEST_SUFFIX_LENGTH, generate_closed_name
from accounts.usernames import validate_username

ACCOUNTS = Path(__file__).resolve().parent.parent / "docs" / "ACCOUNTS.md"
WORDS = {6: "six"}


def test_a_closed_name_is_closed_and_six_of_the_characters_the_docs_list() -> None:
    text = " ".join(ACCOUNTS.read_text().split())
    described = re.search(r"`Closed-` and (\w+) characters drawn from `([A-Z0-9]+)`", text)
    assert described, "ACCOUNTS.md no longer says what a closed account's name is made of"
    count, alphabet = described.groups()
    assert (count, alphabet) == (WORDS[GUEST_SUFFIX_LENGTH], GUEST_ALPHABET)
    example = re.search(r"`(Closed-\w+)`\)", text)
    assert example and re.fullmatch(f"Closed-[{alphabet}]{{6}}", example.group(1))
    names = {generate_closed_name() for _ in range(200)}
    assert all(re.fullmatch(f"Closed-[{alphabet}]{{6}}", name) for name in names), names
    assert any(re.search(r"\d", name) for name in names)  # letters and digits, not letters only


def test_nobody_can_take_a_closed_accounts_kind_of_name() -> None:
    with pytest.raises(ValidationError):
        validate_username(generate_closed_name())
