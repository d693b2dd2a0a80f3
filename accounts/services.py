"""The only code that creates or changes accounts (check_ validates, do_ changes)."""

from __future__ import annotations

import secrets

from channels.layers import get_channel_layer
from django.db import IntegrityError, transaction

from accounts.models import Block, User
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
    for _ in range(GUEST_NAME_ATTEMPTS):
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
    *, user: User, email: str, email_on_move: bool, email_on_follow: bool = False
) -> None:
    """Where correspondence e-mails go, and which are sent ("your move", followed news)."""
    User.objects.filter(pk=user.pk).update(
        email=email, email_on_move=email_on_move, email_on_follow=email_on_follow
    )


def do_end_sockets(user_id: int, session_key: str | None = None) -> None:
    """Close the user's open sockets: those of one session (it logged out), or all of them
    (the password changed), on every server process."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "account.ended", "session": session_key}

    async def send() -> None:
        await layer.group_send(account_group(user_id), message)

    run_soon(send)


# --- blocks: a user wants nothing from another (no challenges, no chat lines) ----------------

MAX_BLOCKS = 500


def check_block_target(*, user: User, username: str) -> User:
    if not isinstance(username, str) or not username.strip():
        raise ServiceError("bad_message", 'Say whom: {"user": "name"}.')
    target = User.objects.filter(username__iexact=username.strip()[:150]).first()
    if target is None:
        raise ServiceError("unknown_user", f"Nobody is called {username.strip()[:40]!r}.")
    if target.pk == user.pk:
        raise ServiceError("cannot_block_yourself", "You cannot block yourself.")
    return target


def do_block(*, user: User, username: str) -> User:
    """Block `username`: their challenges are refused and their chat lines hidden from
    `user` everywhere. Blocking twice changes nothing."""
    target = check_block_target(user=user, username=username)
    with transaction.atomic():
        if Block.objects.filter(blocker=user).count() >= MAX_BLOCKS:
            raise ServiceError("too_many_blocks", f"You can block at most {MAX_BLOCKS} users.")
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
