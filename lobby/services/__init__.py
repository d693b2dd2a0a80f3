"""The only code that changes lobby state: accounts, seeks, challenges and the lobby feed."""

from lobby.services.accounts import (
    do_create_guest,
    do_set_notifications,
    do_sign_up,
    generate_guest_name,
)

__all__ = [
    "do_create_guest",
    "do_set_notifications",
    "do_sign_up",
    "generate_guest_name",
]
