"""What a player may be called."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

USERNAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{2,19}")
# Names that would confuse players or impersonate the site; guest names are generated only.
RESERVED = {"admin", "administrator", "root", "system", "server", "moderator", "anonymous"}
GUEST_PREFIX = "guest"
# The computer's accounts are "Computer-1" to "Computer-5" (bots/services.py).
COMPUTER_PREFIX = "computer"
# Closed accounts are renamed "Closed-XXXXXX" (accounts/services.py, `do_retire`).
CLOSED_PREFIX = "closed"


def validate_username(value: str) -> None:
    if not USERNAME_PATTERN.fullmatch(value):
        raise ValidationError(
            _("Use 3 to 20 letters, digits, '_' or '-', starting with a letter."),
            code="invalid_username",
        )
    lowered = value.lower()
    if lowered in RESERVED or lowered.startswith((GUEST_PREFIX, COMPUTER_PREFIX, CLOSED_PREFIX)):
        raise ValidationError(_("That name is reserved."), code="reserved_username")
