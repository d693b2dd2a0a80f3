#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import secrets
import sys
from pathlib import Path

# The local secret `make run` uses (git-ignored). Production passes DJANGO_SECRET_KEY; the
# server itself (config.asgi) never falls back to this file.
SECRET_FILE = Path(__file__).resolve().parent / ".secret_key"


def local_secret_key() -> str:
    """The key in .secret_key, made the way `make run` makes it when it is missing."""
    if not SECRET_FILE.exists():
        SECRET_FILE.write_text(secrets.token_urlsafe(50) + "\n")
        SECRET_FILE.chmod(0o600)
    return SECRET_FILE.read_text().strip()


def use_local_vapid_keys() -> None:
    """The development key pair of push notices (.vapid_keys, git-ignored, made on first use
    as `make run` makes it) unless the environment sets one, as production does."""
    from push.keys import use_local_keys

    use_local_keys(Path(__file__).resolve().parent / ".vapid_keys")


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not os.environ.get("DJANGO_SECRET_KEY"):
        os.environ["DJANGO_SECRET_KEY"] = local_secret_key()
    use_local_vapid_keys()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
