"""Two-factor sign-in: a TOTP authenticator (RFC 6238, through pyotp) and ten single-use
recovery codes.

Setting up keeps an unconfirmed secret until the player types a right code from their app;
only then is the second factor on (and the recovery codes are made and shown, once). A code
is accepted for the current 30-second step or the one before or after it (clocks drift), and
only for a step later than the last one accepted: a code seen over a shoulder or in a log
cannot be used again. Recovery codes are random and kept as keyed hashes."""

from __future__ import annotations

import secrets
import time

import pyotp
import segno
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from accounts.models import RecoveryCode, TwoFactor, User
from realtime.errors import ServiceError

RECOVERY_CODES = 10
# Groups of five, no 0/O or 1/I/L: typed from paper.
RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
RECOVERY_LENGTH = 10
# Steps either side of now that a code may come from (30 s each).
VALID_WINDOW = 1


def enabled(user: User) -> bool:
    return TwoFactor.objects.filter(user=user, confirmed_at__isnull=False).exists()


def pending_setup(user: User) -> TwoFactor | None:
    return TwoFactor.objects.filter(user=user, confirmed_at__isnull=True).first()


def provisioning_uri(user: User, secret: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(
        name=user.username, issuer_name=settings.TWO_FACTOR_ISSUER
    )


def qr_svg(uri: str) -> str:
    """The setup's QR code as inline SVG markup (no script, no style: the site's CSP holds)."""
    return str(
        segno.make(uri, error="m").svg_inline(scale=4, dark="#000", light="#fff", omitsize=False)
    )


def do_start_setup(*, user: User) -> TwoFactor:
    """A fresh secret for the player to add to their app (replacing any unfinished setup)."""
    if user.is_guest or user.is_bot:
        raise ServiceError("not_registered", _("Guests cannot turn on two-factor sign-in."))
    with transaction.atomic():
        User.objects.select_for_update().get(pk=user.pk)
        if enabled(user):
            raise ServiceError("already_on", _("Two-factor sign-in is already on."))
        TwoFactor.objects.filter(user=user).delete()
        return TwoFactor.objects.create(user=user, secret=pyotp.random_base32(length=32))


def _normalized(code: str) -> str:
    return "".join(str(code).split()).replace("-", "").lower()[:40]


def _matching_step(secret: str, code: str, now: float) -> int | None:
    """The time step within the window whose code is `code`, or None."""
    if not (len(code) == 6 and code.isdigit()):
        return None
    totp = pyotp.TOTP(secret)
    current = int(now // totp.interval)
    found = None
    for step in range(current - VALID_WINDOW, current + VALID_WINDOW + 1):
        if constant_time_compare(totp.generate_otp(step), code):
            found = step
    return found


def _accept_totp(device: TwoFactor, code: str, now: float) -> bool:
    """Accept `code` for the locked device if it is right and newer than the last one."""
    step = _matching_step(device.secret, code, now)
    if step is None or step <= device.last_step:
        return False
    device.last_step = step
    device.save(update_fields=["last_step"])
    return True


def _digest(code: str) -> str:
    return salted_hmac("accounts.recovery-code", code, algorithm="sha256").hexdigest()


def _new_recovery_codes(user: User) -> list[str]:
    codes = [
        "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(RECOVERY_LENGTH))
        for _ in range(RECOVERY_CODES)
    ]
    RecoveryCode.objects.filter(user=user).delete()
    RecoveryCode.objects.bulk_create(
        RecoveryCode(user=user, digest=_digest(code)) for code in codes
    )
    return [f"{code[:5]}-{code[5:]}" for code in codes]


def do_enable(*, user: User, code: str, now: float | None = None) -> list[str]:
    """Turn the second factor on with a right code from the app being set up; the ten
    recovery codes, to be shown once."""
    now = time.time() if now is None else now
    with transaction.atomic():
        device = TwoFactor.objects.select_for_update().filter(user=user).first()
        if device is None:
            raise ServiceError("no_setup", _("Start the setup first: scan the code, then type."))
        if device.confirmed_at is not None:
            raise ServiceError("already_on", _("Two-factor sign-in is already on."))
        if not _accept_totp(device, _normalized(code), now):
            raise ServiceError("wrong_code", _("That code is not right: type the one shown now."))
        device.confirmed_at = timezone.now()
        device.save(update_fields=["confirmed_at"])
        return _new_recovery_codes(user)


def do_verify(*, user: User, code: str, now: float | None = None) -> str:
    """Check a second-factor code at sign-in (or before a sensitive change): an
    authenticator code, or a recovery code, which is then used up. Which kind it was:
    "totp" or "recovery"; ServiceError `wrong_code` otherwise. The caller counts failures."""
    now = time.time() if now is None else now
    code = _normalized(code)
    with transaction.atomic():
        device = (
            TwoFactor.objects.select_for_update()
            .filter(user=user, confirmed_at__isnull=False)
            .first()
        )
        if device is None:
            raise ServiceError("not_on", _("Two-factor sign-in is not on for this account."))
        if _accept_totp(device, code, now):
            return "totp"
        if len(code) == RECOVERY_LENGTH:
            used = RecoveryCode.objects.filter(
                user=user, digest=_digest(code), used_at__isnull=True
            ).update(used_at=timezone.now())
            if used:
                return "recovery"
    raise ServiceError("wrong_code", _("That code is not right."))


def recovery_codes_left(user: User) -> int:
    return RecoveryCode.objects.filter(user=user, used_at__isnull=True).count()


def do_new_recovery_codes(*, user: User, code: str) -> list[str]:
    """Ten new recovery codes in place of the old ones, for a right current code."""
    do_verify(user=user, code=code)
    with transaction.atomic():
        return _new_recovery_codes(user)


def do_disable(*, user: User) -> None:
    """Turn the second factor off; the caller has checked a code or the password."""
    with transaction.atomic():
        TwoFactor.objects.filter(user=user).delete()
        RecoveryCode.objects.filter(user=user).delete()
