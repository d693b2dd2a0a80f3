"""A push service on this machine, for the tests: what a browser vendor's (Google's FCM,
Mozilla's autopush, Apple's) does with a push, and nothing else.

It holds the browsers' side of each subscription (a P-256 key pair and the authentication
secret, made here as a browser makes them), and for each POST it checks what a real service
checks: the VAPID Authorization header (RFC 8292: `vapid t=<JWT>, k=<key>`; the key must be
the site's, the JWT's ES256 signature must verify with it, its audience must be this service
and it must not have expired), the TTL header, the aes128gcm content coding; then it
decrypts the body with the browser's private key (RFC 8291, http_ece) and keeps the notice.
A test can script answers (410: the subscription is gone; 500, or a hang) per browser.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """The browser's half of a subscription: what stays in the browser (its private key and
    secret) and what it gives the site (PushSubscription.toJSON())."""

    name: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def p256dh(self) -> str:
        return b64url(
            self.private_key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
            )
        )

    def subscription(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)},
        }


@dataclass
class Received:
    """A push the service accepted: the decrypted notice and the headers it came with."""

    browser: str
    payload: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)


class Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class PushService:
    """Start with `with PushService(site_public_key) as service:`; `service.browser(name)`
    makes a subscription; `service.received` gets each push it accepted."""

    def __init__(self, vapid_public_key: str) -> None:
        self.vapid_public_key = vapid_public_key
        self.browsers: dict[str, Browser] = {}
        self.received: queue.Queue[Received] = queue.Queue()
        self.refusals: list[str] = []  # what it refused, and why
        self.tries: dict[str, int] = {}  # POSTs per browser, whatever was answered
        self.script: dict[str, list[int | float]] = {}  # per browser: statuses, or a hang (s)
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                service.handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> PushService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def browser(self, name: str) -> Browser:
        made = Browser(
            name=name,
            endpoint=f"{self.origin}/push/{name}-{os.urandom(6).hex()}",
            private_key=ec.generate_private_key(ec.SECP256R1()),
            auth=os.urandom(16),
        )
        self.browsers[made.endpoint.rsplit("/", 1)[1]] = made
        return made

    def answer(self, browser: Browser, *answers: int | float) -> None:
        """Script the next answers to this browser's pushes: an int is a status to answer
        (without looking at the push), a float a hang of that many seconds before it is
        handled as usual."""
        self.script[browser.name] = list(answers)

    def next(self, timeout: float = 15.0) -> Received:
        return self.received.get(timeout=timeout)

    # --- one request ------------------------------------------------------------------------

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length)
        browser = self.browsers.get(request.path.rsplit("/", 1)[-1])
        if browser is None:
            self._reply(request, 404)
            return
        with self.lock:
            self.tries[browser.name] = self.tries.get(browser.name, 0) + 1
            scripted = self.script.get(browser.name) or []
            step = scripted.pop(0) if scripted else None
        if isinstance(step, float):
            time.sleep(step)
        elif isinstance(step, int):
            self._reply(request, step)
            return
        try:
            self.check_vapid(request.headers.get("Authorization", ""))
            if not request.headers.get("TTL", "").isdigit():
                raise Refused(400, "no TTL header")
            if request.headers.get("Content-Encoding") != "aes128gcm":
                raise Refused(415, "not aes128gcm")
            plain = http_ece.decrypt(
                body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
            )
            payload = json.loads(plain)
        except Refused as refusal:
            self.refusals.append(str(refusal))
            self._reply(request, refusal.status)
            return
        except Exception as error:  # cannot decrypt: the keys do not match
            self.refusals.append(f"undecryptable: {error!r}")
            self._reply(request, 400)
            return
        headers = {name: request.headers.get(name, "") for name in ("TTL", "Urgency", "Topic")}
        self.received.put(Received(browser=browser.name, payload=payload, headers=headers))
        self._reply(request, 201)

    def check_vapid(self, header: str) -> None:
        scheme, _, rest = header.partition(" ")
        if scheme.lower() != "vapid":
            raise Refused(401, f"not a VAPID authorization: {header[:20]!r}")
        parts = dict(part.strip().split("=", 1) for part in rest.split(",") if "=" in part)
        if parts.get("k") != self.vapid_public_key:
            raise Refused(403, "signed with another key than the subscription's")
        try:
            head, claims, signature = parts["t"].split(".")
        except (KeyError, ValueError):
            raise Refused(401, "no JWT") from None
        if json.loads(unb64url(head)).get("alg") != "ES256":
            raise Refused(401, "not ES256")
        raw = unb64url(signature)
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(parts["k"]))
        try:
            key.verify(
                encode_dss_signature(
                    int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
                ),
                f"{head}.{claims}".encode(),
                ec.ECDSA(hashes.SHA256()),
            )
        except InvalidSignature:
            raise Refused(403, "the JWT's signature does not verify") from None
        said = json.loads(unb64url(claims))
        if said.get("aud") != self.origin:
            raise Refused(403, f"audience {said.get('aud')!r} is not this service")
        if not time.time() < said.get("exp", 0) <= time.time() + 24 * 3600:
            raise Refused(403, "expired, or valid for more than a day")
        if not str(said.get("sub", "")).startswith(("mailto:", "https://")):
            raise Refused(403, "no contact (sub)")

    @staticmethod
    def _reply(request: BaseHTTPRequestHandler, status: int) -> None:
        request.send_response(status)
        if status == 201:
            request.send_header("Location", f"{request.path}/message")
        request.send_header("Content-Length", "0")
        request.end_headers()
