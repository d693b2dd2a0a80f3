"""VAPID key pairs (RFC 8292): the site signs each push with its private key, and browsers
subscribe with its public key, so a push service delivers only what this site sent.

Both are base64url without padding, as the Web Push API and the push libraries write them:
the public key as the uncompressed P-256 point (65 bytes), the private key as its 32-byte
number. Production sets VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY (docs/DEPLOY.md); `make run`
and `manage.py` use a development pair generated into `.vapid_keys` (git-ignored).

    python -m push.keys            # print a new pair as environment lines
    python -m push.keys FILE       # the pair in FILE, generated into it when missing or empty

A FILE that holds something other than a pair (`public=...` and `private=...` lines, the public
key the private key's) is refused with what is wrong and left as it is: it may be someone's
pair with a typo, and a new pair would cut off every browser subscribed with the old one. An
empty FILE holds no pair to lose (a first run stopped halfway, or `touch`), and `make`'s
`.vapid_keys` rule would never run again on it, so the pair is made into it.

No Django here: manage.py and the settings read it before Django is set up.
"""

from __future__ import annotations

import argparse
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


class KeyFileError(ValueError):
    """A key file that holds no usable pair; the message says what is wrong and what to do."""


def local_keys(path: Path) -> tuple[str, str]:
    """The development pair kept in `path` (`public=...` and `private=...` lines), made on
    first use, or when the file is empty; KeyFileError if it holds anything else."""
    if not path.exists() or not path.read_text().strip():
        public, private = generate()
        # Readable by its owner only from the start: the private key is never world-readable.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(f"public={public}\nprivate={private}\n")
        path.chmod(0o600)  # an existing empty file keeps its mode through os.open
    fields = {
        name.strip(): value.strip()
        for name, _, value in (line.partition("=") for line in path.read_text().splitlines())
    }
    public, private = fields.get("public", ""), fields.get("private", "")
    remedy = "fix it, or delete it to have a new pair made (browsers then subscribe again)"
    if not public or not private:
        raise KeyFileError(f"{path} holds no key pair (public=... and private=... lines): {remedy}")
    try:
        matches = public_of(private) == public
    except ValueError:  # not base64url (binascii.Error is one), or not a P-256 private number
        matches = False
    if not matches:
        raise KeyFileError(f"{path}: the public key is not the private key's: {remedy}")
    return public, private


def use_local_keys(path: Path) -> None:
    """Put the development pair in the environment unless a pair is set there already."""
    if os.environ.get("VAPID_PUBLIC_KEY") and os.environ.get("VAPID_PRIVATE_KEY"):
        return
    try:
        public, private = local_keys(path)
    except KeyFileError as error:
        raise SystemExit(f"push keys: {error}") from None  # a command line's clear stop
    os.environ["VAPID_PUBLIC_KEY"] = public
    os.environ["VAPID_PRIVATE_KEY"] = private
    os.environ.setdefault("VAPID_SUBJECT", DEVELOPMENT_SUBJECT)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m push.keys",
        description="Print a VAPID key pair for push notices as environment lines "
        "(VAPID_PUBLIC_KEY=..., VAPID_PRIVATE_KEY=...).",
    )
    parser.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="keep the pair in FILE (public=... and private=... lines, mode 600): made into it "
        "when it is missing or empty, else read from it; without FILE a new pair is printed",
    )
    arguments = parser.parse_args(argv)
    try:
        public, private = local_keys(arguments.file) if arguments.file else generate()
    except KeyFileError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    print(f"VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}")


if __name__ == "__main__":
    main(sys.argv[1:])
