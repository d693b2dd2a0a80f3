"""The only code that creates or changes accounts (check_ validates, do_ changes)."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from channels.layers import get_channel_layer
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import tokens
from accounts.models import Block, Circle, RecoveryCode, RetiredName, TwoFactor, User, is_retired
from accounts.usernames import validate_username
from realtime.db import run_soon
from realtime.errors import ServiceError
from realtime.ws import account_group

# No 0/O or 1/I/L: guest names get read aloud and typed into challenges.
GUEST_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
GUEST_SUFFIX_LENGTH = 6
GUEST_NAME_ATTEMPTS = 20


def generate_guest_name() -> str:
    suffix = "".join(secrets.choice(GUEST_ALPHABET) for _ in range(GUEST_SUFFIX_LENGTH))
    return f"Guest-{suffix}"


def do_create_guest() -> User:
    """A new guest account with a generated, unused name and no usable password."""
    for _attempt in range(GUEST_NAME_ATTEMPTS):
        try:
            with transaction.atomic():
                user = User(username=generate_guest_name(), is_guest=True)
                user.set_unusable_password()
                user.save()
                return user
        except IntegrityError:
            continue  # the name was taken between choosing and saving it: draw another
    raise RuntimeError("could not find a free guest name")


def do_sign_up(*, username: str, password: str, email: str = "") -> User:
    """A registered account; the caller has validated the name and the password."""
    with transaction.atomic():
        return User.objects.create_user(username=username, password=password, email=email)


def do_set_notifications(
    *, user: User, email_on_move: bool, email_on_follow: bool = False, mail_pictures: bool = False
) -> None:
    """Which correspondence e-mails are sent ("your move", followed news), and whether those
    that show a board attach its picture. The address they go to is changed through its
    confirmation link (accounts/emails.py)."""
    User.objects.filter(pk=user.pk).update(
        email_on_move=email_on_move, email_on_follow=email_on_follow, mail_pictures=mail_pictures
    )


def do_set_mail_pictures(*, user: User, on: bool) -> None:
    """Whether the mails that show a board attach its picture (the mail door's `change
    pictures`; the profile's form sets it with the other mail settings)."""
    User.objects.filter(pk=user.pk).update(mail_pictures=on)


def do_set_language(*, user: User, language: str) -> None:
    """The language chosen with the switcher ("" for the browser's): pages on any browser,
    the sockets opened from now on, and the e-mails and notices sent to them."""
    User.objects.filter(pk=user.pk).update(language=language)


def do_end_sockets(
    user_id: int, session_key: str | None = None, *, keep_session: str | None = None
) -> None:
    """Close the user's open sockets: those of one session (it logged out), or all of them
    (the password changed, the account closed) but those of `keep_session` (the session that
    changed the password stays signed in), on every server process."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "account.ended", "session": session_key, "keep": keep_session}

    async def send() -> None:
        await layer.group_send(account_group(user_id), message)

    run_soon(send)


# --- passwords ---------------------------------------------------------------------------------


def do_change_password(*, user: User, password: str, keep_session: str | None) -> None:
    """A new password (validated by the caller's form): every other session of the user ends
    (Django ties a session to the password hash) and so do their sockets; the session
    `keep_session` is kept by the caller (update_session_auth_hash) and keeps its sockets."""
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        locked.set_password(password)
        # accounts/signals.py closes the sockets of a new password: all but this session's.
        locked._keep_session = keep_session
        locked.save(update_fields=["password"])
    user.password = locked.password


# --- closing an account (the accounts' part; privacy/closure.py ends the games first) -------

CLOSED_NAME_PREFIX = "Closed-"


def generate_closed_name() -> str:
    suffix = "".join(secrets.choice(GUEST_ALPHABET) for _ in range(GUEST_SUFFIX_LENGTH))
    return f"{CLOSED_NAME_PREFIX}{suffix}"


def do_retire(*, user: User, reason: str, by: User | None) -> User:
    """Close the locked account: its name is retired for good (validate_username refuses it)
    and it takes a neutral generated one, under which its games stay; no password, no
    address, no second factor, not active; its sessions (tied to the password hash) and
    sockets end. The caller holds the transaction; closing twice changes nothing."""
    locked = User.objects.select_for_update().get(pk=user.pk)
    if locked.closed_at is not None:
        return locked
    former = locked.username
    RetiredName.objects.create(name=former, user=locked, reason=reason[:200], closed_by=by)
    for _attempt in range(GUEST_NAME_ATTEMPTS):
        name = generate_closed_name()
        if not User.objects.filter(username__iexact=name).exists():
            break
    else:
        raise RuntimeError("could not find a free name for a closed account")
    locked.username = name
    locked.set_unusable_password()
    locked.is_active = False
    locked.email = locked.pending_email = ""
    locked.email_confirmed_at = None
    locked.email_on_move = locked.email_on_follow = False
    locked.closed_at = timezone.now()
    locked.save()
    TwoFactor.objects.filter(user=locked).delete()
    RecoveryCode.objects.filter(user=locked).delete()
    tokens.revoke_all(user_id=locked.pk, why="closed")
    user_id = locked.pk
    transaction.on_commit(lambda: do_end_sockets(user_id))
    return locked


# --- blocks: a user wants nothing from another (no challenges, no chat lines) ----------------

MAX_BLOCKS = 500


def check_block_target(*, user: User, username: str) -> User:
    if not isinstance(username, str) or not username.strip():
        raise ServiceError("bad_message", _('Say whom: {"user": "name"}.'))
    target = User.objects.filter(username__iexact=username.strip()[:150]).first()
    if target is None:
        raise ServiceError(
            "unknown_user", _("Nobody is called %(name)s.") % {"name": repr(username.strip()[:40])}
        )
    if target.pk == user.pk:
        raise ServiceError("cannot_block_yourself", _("You cannot block yourself."))
    return target


def do_block(*, user: User, username: str) -> User:
    """Block `username`: their challenges are refused and their chat lines hidden from
    `user` everywhere. Blocking twice changes nothing."""
    target = check_block_target(user=user, username=username)
    with transaction.atomic():
        if Block.objects.filter(blocker=user).count() >= MAX_BLOCKS:
            raise ServiceError(
                "too_many_blocks", _("You can block at most %(most)s users.") % {"most": MAX_BLOCKS}
            )
        Block.objects.get_or_create(blocker=user, blocked=target)
    return target


def do_unblock(*, user: User, username: str) -> User:
    target = check_block_target(user=user, username=username)
    Block.objects.filter(blocker=user, blocked=target).delete()
    return target


def blocked_names(user: User) -> list[str]:
    return sorted(
        Block.objects.filter(blocker=user).values_list("blocked__username", flat=True),
        key=str.lower,
    )


# --- the player's own controls, and the restrictions moderators set ----------------------


def do_set_controls(*, user: User, may_challenge: str, may_chat: str, may_follow: str) -> None:
    """Who may challenge `user`, whose lines they see in the players' room, who may follow
    them (each Circle: everyone, people they follow, nobody)."""
    for value in (may_challenge, may_chat, may_follow):
        if value not in Circle.values:
            raise ServiceError(
                "bad_message",
                _("Choose one of %(choices)s.") % {"choices": ", ".join(Circle.values)},
            )
    User.objects.filter(pk=user.pk).update(
        may_challenge=may_challenge, may_chat=may_chat, may_follow=may_follow
    )


def do_mute_chat(*, user_id: int, until: datetime | None) -> None:
    """No chat line from the user until `until` (None: lift the mute)."""
    User.objects.filter(pk=user_id).update(chat_muted_until=until)


def do_forbid_rated(*, user_id: int, forbidden: bool) -> None:
    User.objects.filter(pk=user_id).update(rated_forbidden=forbidden)


def check_new_name(*, user_id: int, username: Any) -> str:
    """A new name, validated as sign-up validates one (pattern, reserved words, taken)."""
    if not isinstance(username, str):
        raise ServiceError("bad_message", _("Give the new name."))
    username = username.strip()
    try:
        validate_username(username)
    except ValidationError as error:
        raise ServiceError("invalid_username", " ".join(error.messages)) from None
    if User.objects.filter(username__iexact=username).exclude(pk=user_id).exists() or is_retired(
        username
    ):
        raise ServiceError("username_taken", _("That name is taken."))
    return username


def do_rename(
    *, user_id: int, username: Any, by: User | None = None, reason: str = ""
) -> tuple[str, str]:
    """Give the account a new name (a moderator's action on an offensive one); returns the
    old name and the new. Games, chat lines and follows point at the account, not the name,
    so they all show the new one. The old name is retired: nobody signs up with the name a
    moderator took away."""
    new = check_new_name(user_id=user_id, username=username)
    with transaction.atomic():
        user = User.objects.select_for_update().filter(pk=user_id).first()
        if user is None:
            raise ServiceError("unknown_user", _("There is no such user."))
        old = user.username
        user.username = new
        try:
            with transaction.atomic():
                user.save(update_fields=["username"])
        except IntegrityError:
            raise ServiceError("username_taken", _("That name is taken.")) from None
        if old.lower() != new.lower():
            RetiredName.objects.get_or_create(
                name__iexact=old,
                defaults={"name": old, "user": user, "reason": reason[:200], "closed_by": by},
            )
    return old, new
