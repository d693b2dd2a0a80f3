"""Who a mailed command speaks for: a user name, the mail password, and the sender's address.

pbmserv put `userid password` in the subject. Here that password is the account's mail
password (set on the profile page or by `signup`), hashed, never the site's password; and the
mail must come from the account's own address, so a leaked mail password alone drives nothing.
Wrong passwords are counted per account and per sender address (realtime.limits' windows).

A password's hash costs a fifth of a CPU-second. The mail door runs a mail's commands with
the hashes deferred (`hashes_deferred`): the first hash a mail needs raises `HashDue` before
anything is written, the door computes it on threads of its own (pbm/smtp.py) and runs the
mail again with the result, so mails of other senders are not held up behind it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import parseaddr

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from accounts.models import User, is_retired
from accounts.usernames import validate_username
from pbm.models import MailPassword
from realtime import logs
from realtime.errors import ServiceError
from realtime.limits import over_limit

MIN_MAIL_PASSWORD = 6
# Checking a password against its hash costs ~0.2 CPU-second by design (PBKDF2), and a player
# mails the same one with every move. The last password proved right for each account is kept
# as a keyed digest, in this process only, and a command with it skips the slow check; a
# changed or revoked password (its stored hash changes) is checked slowly again. Wrong
# guesses never enter it (and the rate limit counts them either way).
_PROVEN: dict[int, tuple[str, str]] = {}  # user id -> (stored hash, digest of the password)
PROVEN_KEPT = 10_000


class HashDue(Exception):
    """Raised, in `hashes_deferred`, where a password hash is due: `work()` computes it (a
    check's verdict, or a new password's hash) away from the mail's transaction, and the mail
    runs again with `results[key]` set to what it returned. Never raised elsewhere."""

    def __init__(self, key: tuple[str, ...], work: Callable[[], object]) -> None:
        super().__init__("a mail password's hash is due")  # no password in its text
        self.key = key
        self.work = work


class _Deferral(threading.local):
    results: dict[tuple[str, ...], object] | None = None  # the hashes computed for this mail
    raising = False  # whether a hash not in `results` raises HashDue


_deferral = _Deferral()


@contextmanager
def hashes_deferred(results: dict[tuple[str, ...], object]) -> Iterator[None]:
    """Within (one run of a mail's commands): a hash whose result is not in `results` raises
    HashDue, until the mail's first identity is settled (a name and password checked, or an
    account signed up). Only then can a command have done anything a rolled-back run leaves
    behind (a move counted in the metrics, a wrong password counted), so a later hash of the
    same mail (a second account in a `multiple`, a new mail password) runs where it is asked."""
    _deferral.results, _deferral.raising = results, True
    try:
        yield
    finally:
        _deferral.results, _deferral.raising = None, False


def _hashed(key: tuple[str, ...], work: Callable[[], object]) -> object:
    results = _deferral.results
    if results is not None and key in results:
        return results[key]
    if _deferral.raising:
        raise HashDue(key, work)
    return work()


def _settled() -> None:
    """The mail's first identity is settled: its later hashes run where they are asked."""
    _deferral.raising = False


def address_of(sender: str) -> str:
    return parseaddr(sender)[1].strip().lower()


def _counted(group: str, key: str, rate: str, *, increment: bool) -> bool:
    return over_limit(group, key, rate, increment=increment)


def _acceptable(password: str) -> None:
    logs.secret(password)  # in no line logged while this mail is answered
    if len(password) < MIN_MAIL_PASSWORD or any(c.isspace() for c in password):
        raise ServiceError(
            "bad_password",
            _("A mail password is at least %(least)s characters, without spaces.")
            % {"least": MIN_MAIL_PASSWORD},
        )


def set_mail_password(user: User, password: str) -> None:
    _acceptable(password)
    hashed = str(_hashed(("make", _digest(password)), lambda: make_password(password)))
    MailPassword.objects.update_or_create(user=user, defaults={"password": hashed})


def authenticate(username: str, password: str, sender: str) -> User:
    """The account `username` if `password` is its mail password and the mail came from its
    address; ServiceError otherwise (the same answer for a wrong name and a wrong password)."""
    logs.secret(password)  # in no line logged while this mail is answered
    address = address_of(sender)
    refused = ServiceError(
        "bad_credentials",
        _("That user name and mail password do not match, or this address is not the account's."),
    )
    rate = settings.LOGIN_FAILURES_PER_ACCOUNT
    if _counted("mail-login", username.lower(), rate, increment=False) or _counted(
        "mail-login-address", address, settings.LOGIN_FAILURES_PER_ADDRESS, increment=False
    ):
        raise ServiceError(
            "rate_limited", _("Too many wrong mail passwords lately: wait a quarter of an hour.")
        )
    user = User.objects.filter(username__iexact=username, is_active=True).first()
    stored = MailPassword.objects.filter(user=user).first() if user is not None else None
    if (
        user is None
        or stored is None
        or not _password_right(user.pk, password, stored.password)
        or user.email.strip().lower() != address
    ):
        _settled()
        _counted("mail-login", username.lower(), rate, increment=True)
        _counted("mail-login-address", address, settings.LOGIN_FAILURES_PER_ADDRESS, increment=True)
        raise refused
    _settled()
    logs.add(user_id=user.pk, user=user.username)
    return user


def _digest(password: str) -> str:
    return salted_hmac("pbm-proven-mail-password", password).hexdigest()


def _password_right(user_id: int, password: str, stored: str) -> bool:
    proven = _PROVEN.get(user_id)
    if proven is not None and proven[0] == stored:
        return constant_time_compare(proven[1], _digest(password))
    key = ("check", str(user_id), stored, _digest(password))
    if not _hashed(key, lambda: check_password(password, stored)):
        return False
    if len(_PROVEN) >= PROVEN_KEPT:
        _PROVEN.pop(next(iter(_PROVEN)))
    _PROVEN[user_id] = (stored, _digest(password))
    return True


def forget_mail_password(user: User) -> None:
    """The account's mail password goes (pbmserv's `delete` closes the account): no mail
    command is taken for it again."""
    MailPassword.objects.filter(user=user).delete()
    _PROVEN.pop(user.pk, None)


def sign_up(username: str, password: str, address: str) -> User:
    """pbmserv's `signup`: an account that plays by mail. It has no site password, so it
    cannot sign in on the site; a player who wants both signs up there and sets a mail
    password on the profile page."""
    try:
        validate_username(username)
    except ValidationError as error:
        raise ServiceError("bad_username", " ".join(error.messages)) from None
    taken = ServiceError(
        "name_taken", _("The name %(name)s is taken: choose another.") % {"name": repr(username)}
    )
    if User.objects.filter(username__iexact=username).exists() or is_retired(username):
        raise taken  # before the password's hash, which would be wasted
    # The hash before the count: a deferred one (HashDue) leaves nothing counted behind.
    _acceptable(password)
    _hashed(("make", _digest(password)), lambda: make_password(password))
    _settled()
    if _counted("new-account", address, settings.NEW_ACCOUNTS_PER_ADDRESS, increment=True):
        raise ServiceError(
            "rate_limited", _("Too many new accounts from this address: try tomorrow.")
        )
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists() or is_retired(username):
            raise taken
        user = User.objects.create_user(username=username, email=address, password=None)
        set_mail_password(user, password)
    return user
