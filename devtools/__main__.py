"""`python -m devtools <command> [options]`: Django's manage.py with the tooling installed.

The product's manage.py does not know these commands, so a production image without this
package lacks nothing it uses.
"""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["engine"]:
        # The engine of docs/BOTS.md needs no Django: a bot starts one per game, at once.
        from devtools.engine import main as engine

        engine(sys.argv[2:])
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "devtools.settings")
    if not os.environ.get("DJANGO_SECRET_KEY"):
        # The same local key as manage.py and `make run` (.secret_key, git-ignored).
        from manage import local_secret_key

        os.environ["DJANGO_SECRET_KEY"] = local_secret_key()
    # And the same development pair of push keys (.vapid_keys) unless the environment sets one.
    from manage import use_local_vapid_keys

    use_local_vapid_keys()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["python -m devtools", *sys.argv[1:]])


if __name__ == "__main__":
    main()
