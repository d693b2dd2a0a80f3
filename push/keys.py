"""VAPID key pairs (RFC 8292): the site signs each push with its private key, and browsers
subscribe with its public key, so a push service delivers only what this site sent.

Both are base64url without padding, as the Web Push API and the push libraries write them:
the public key as the uncompressed P-256 point (65 bytes), the private key as its 32-byte
number. Production sets VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY (docs/DEPLOY.md); `make run`
and `manage.py` use a development pair generated into `.vapid_keys` (git-ignored).

    python -m push.keys            # print a new pair as environment lines
    python -m push.keys FILE       # the pair in FILE, generated into it when missing

No Django here: manage.py and the settings read it before Django is set up.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

DEVELOPMENT_SUBJECT = "mailto:noreply@localhost"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def generate() -> tuple[str, str]:
    """A new pair: (public, private)."""
    private = ec.generate_private_key(ec.SECP256R1())
    public = private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return b64url(public), b64url(private.private_numbers().private_value.to_bytes(32, "big"))


def public_of(private: str) -> str:
    """The public key of a private key (to check that a configured pair belongs together)."""
    number = int.from_bytes(b64url_decode(private), "big")
    key = ec.derive_private_key(number, ec.SECP256R1())
    return b64url(
        key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
    )


def local_keys(path: Path) -> tuple[str, str]:
    """The development pair kept in `path` (`public=...` and `private=...` lines), made on
    first use."""
    if not path.exists():
        public, private = generate()
        path.write_text(f"public={public}\nprivate={private}\n")
        path.chmod(0o600)
    fields = dict(
        line.split("=", 1) for line in path.read_text().splitlines() if "=" in line.strip()
    )
    return fields["public"].strip(), fields["private"].strip()


def use_local_keys(path: Path) -> None:
    """Put the development pair in the environment unless a pair is set there already."""
    if os.environ.get("VAPID_PUBLIC_KEY") and os.environ.get("VAPID_PRIVATE_KEY"):
        return
    public, private = local_keys(path)
    os.environ["VAPID_PUBLIC_KEY"] = public
    os.environ["VAPID_PRIVATE_KEY"] = private
    os.environ.setdefault("VAPID_SUBJECT", DEVELOPMENT_SUBJECT)


def main(argv: list[str]) -> None:
    public, private = local_keys(Path(argv[0])) if argv else generate()
    print(f"VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}")


if __name__ == "__main__":
    main(sys.argv[1:])
