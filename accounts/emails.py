"""An account's e-mail address: a new or changed one waits until the link mailed to it is
opened, and only then replaces the old one (which keeps the mail meanwhile).

The link carries a signed, time-limited token (django.core.signing, EMAIL_CONFIRMATION_SECONDS)
naming the account and the address; it confirms only while that address is still the one
waiting, so it works once, and a later change makes earlier links void."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.models import User
from realtime.errors import ServiceError

logger = logging.getLogger(__name__)

SALT = "accounts.email-confirmation"


def make_token(user: User, address: str) -> str:
    return signing.dumps({"u": user.pk, "e": address}, salt=SALT, compress=True)


def confirmation_url(user: User, address: str) -> str:
    path = reverse("email-confirm", kwargs={"token": make_token(user, address)})
    return f"{settings.SITE_URL.rstrip('/')}{path}"


def check_new_address(*, user: User, address: str) -> str:
    address = address.strip()
    if not address:
        raise ServiceError("bad_address", _("Give an e-mail address."))
    if user.is_guest or user.is_bot:
        raise ServiceError("not_registered", _("Guests have no e-mail address: sign up first."))
    return address


def do_request_change(*, user: User, address: str) -> bool:
    """Put `address` in waiting and mail it its link; True if mailed. Asking for the address
    already in use and confirmed changes nothing; asking for it while unconfirmed sends a
    link that confirms it."""
    address = check_new_address(user=user, address=address)
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        if locked.email.lower() == address.lower() and locked.email_confirmed_at is not None:
            User.objects.filter(pk=locked.pk).update(pending_email="")
            return False
        User.objects.filter(pk=locked.pk).update(pending_email=address)
    user.pending_email = address
    # In the language of the page it was asked from (the account's, else the browser's): the
    # one reading this mail is the one who asked.
    hours = settings.EMAIL_CONFIRMATION_SECONDS // 3600
    send_mail(
        _("Confirm your e-mail address"),
        ngettext(
            "Hello %(name)s,\n\n"
            "To use %(address)s for your Diffusion account, open this link within "
            "%(hours)s hour and press Confirm:\n\n"
            "%(link)s\n\n"
            "Until then your mail goes to the address you had. If you did not ask for this, "
            "ignore this mail: nothing changes.\n",
            "Hello %(name)s,\n\n"
            "To use %(address)s for your Diffusion account, open this link within "
            "%(hours)s hours and press Confirm:\n\n"
            "%(link)s\n\n"
            "Until then your mail goes to the address you had. If you did not ask for this, "
            "ignore this mail: nothing changes.\n",
            hours,
        )
        % {
            "name": user.username,
            "address": address,
            "hours": hours,
            "link": confirmation_url(user, address),
        },
        None,
        [address],
    )
    return True


def read_token(token: str) -> tuple[int, str]:
    """(user id, address) of a confirmation link, or ServiceError `link_expired` /
    `bad_link`."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.EMAIL_CONFIRMATION_SECONDS)
    except signing.SignatureExpired:
        raise ServiceError(
            "link_expired", _("That link has expired: ask for a new one on your settings page.")
        ) from None
    except signing.BadSignature:
        raise ServiceError("bad_link", _("That link is not one of ours, or it was cut.")) from None
    if not isinstance(data, dict) or not isinstance(data.get("u"), int):
        raise ServiceError("bad_link", _("That link is not one of ours, or it was cut."))
    return data["u"], str(data.get("e", ""))


def check_confirmation(token: str) -> tuple[User, str]:
    """The account and address a link would confirm, if it still can."""
    user_id, address = read_token(token)
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or not address or user.pending_email != address:
        raise ServiceError(
            "link_used",
            _(
                "That link has been used, or a newer one was sent: your settings page says which "
                "address is in use."
            ),
        )
    return user, address


def do_confirm(token: str) -> User:
    """Make the link's address the account's, if it is still the one waiting."""
    user_id, _ = read_token(token)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user_id).first()
        user, address = check_confirmation(token)
        user.email = address
        user.pending_email = ""
        user.email_confirmed_at = timezone.now()
        user.save(update_fields=["email", "pending_email", "email_confirmed_at"])
    logger.info("e-mail address confirmed for account %s", user.pk)
    return user


def do_cancel_change(*, user: User) -> None:
    User.objects.filter(pk=user.pk).update(pending_email="")
    user.pending_email = ""
