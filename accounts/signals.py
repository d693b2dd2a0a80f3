"""Sockets follow the session: logging out closes that session's sockets, and a new password
(which ends every other session of the user) closes all of the user's sockets."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts import services, tokens
from accounts.models import User


@receiver(user_logged_out, dispatch_uid="accounts.end_sockets_on_logout")
def _logged_out(sender: Any, request: Any, user: User | None, **kwargs: Any) -> None:
    if user is not None and user.pk is not None:
        services.do_end_sockets(user.pk, request.session.session_key)


@receiver(post_save, sender=User, dispatch_uid="accounts.end_sockets_on_new_password")
def _saved(sender: Any, instance: User, created: bool, **kwargs: Any) -> None:
    # set_password() leaves the raw password on the instance until its save() has finished.
    if not created and getattr(instance, "_password", None) is not None:
        user_id = instance.pk
        # The session that changed its own password stays signed in (services.
        # do_change_password marks it); a reset or the admin's change ends every one.
        keep = getattr(instance, "_keep_session", None)
        # Tokens end with the password that made them (whoever changed it).
        tokens.revoke_all(user_id=user_id, why="password")
        transaction.on_commit(lambda: services.do_end_sockets(user_id, keep_session=keep))
