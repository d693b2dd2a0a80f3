"""Sending the notices: the sweeper's pass (games.lifecycle.sweeping) claims the notices due,
decides whether each is still news, builds it in its reader's language, and hands each
browser's send to a few threads of the sweeper's process, so that a slow push service holds
up neither a move (nothing is sent on a request's path) nor the clocks the sweeper watches.

A push service answering 404 or 410 says the subscription is gone: it is deleted. Any other
failure (an error status, a refused connection, a timeout) is retried PUSH_ATTEMPTS times in
all, later each time, then given up; each is one line in the log, never a traceback.
A notice is claimed by deleting it (several sweepers never send one twice); a sweeper that
stops gives the sends in hand GRACE_SECONDS and loses those still unsent then: a notice is a
courtesy, and a deploy must not wait on a push service that hangs.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import msgspec
import requests
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone, translation
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

from accounts.language import for_user
from games.models import Game, GameConnection
from games.selectors import time_label, title_for
from lobby.models import Challenge, LobbyConnection
from push import payloads
from push.models import Choices, Kind, Notice, Subscription
from push.protocol import Payload
from realtime.errors import is_outage
from realtime.language import supported
from tournaments.models import TournamentConnection

logger = logging.getLogger(__name__)

# Notices claimed per pass at most, and sends in hand at most (a hanging push service fills
# the threads; the notices wait in the table meanwhile).
BATCH = 100
IN_HAND = 200
# A subscription whose sends failed this many times in a row (never a 404/410) is dropped.
DROP_AFTER_FAILURES = 20
# How long a push service keeps a notice for a browser that is offline (the TTL header):
# "your move" in a real-time game is stale within minutes.
TTL_SECONDS = {
    Kind.MOVE_REALTIME: 120,
    Kind.TOURNAMENT_GAME: 600,
    Kind.OFFER: 3600,
    Kind.MOVE_CORRESPONDENCE: 86400,
    Kind.CHALLENGE: 86400,
}
URGENT = {Kind.MOVE_REALTIME, Kind.TOURNAMENT_GAME}


@dataclass(frozen=True)
class Delivery:
    """One notice for one browser, ready to send."""

    subscription_id: int
    endpoint: str
    p256dh: str
    auth: str
    data: bytes
    kind: str
    tag: str
    attempt: int  # 1 for the first try
    # The notice's fields, to queue it again for this browser if the send fails.
    retry: dict[str, Any] = field(default_factory=dict)
    noticed_at: datetime | None = None


# --- the sweeper's pass ----------------------------------------------------------------------

_lock = threading.Lock()
_work: queue.Queue[Delivery] = queue.Queue()
_in_hand = 0  # sends handed over and not finished
_threads: list[threading.Thread] = []
# A stopping sweeper gives the sends in hand this long, then goes (the rest are lost: a
# notice is a courtesy, and a deploy must not wait on a push service that hangs).
GRACE_SECONDS = 2.0


def _start_threads() -> None:
    """The sending threads of this process, started on the first send (daemons: they never
    hold up the process's exit beyond GRACE_SECONDS)."""
    with _lock:
        if _threads:
            return
        for number in range(max(1, settings.PUSH_THREADS)):
            thread = threading.Thread(target=_sender, name=f"push-{number}", daemon=True)
            thread.start()
            _threads.append(thread)
    atexit.register(wait_for_sends, GRACE_SECONDS)


def _sender() -> None:
    global _in_hand
    while True:
        delivery = _work.get()
        try:
            _send_in_thread(delivery)
        finally:
            with _lock:
                _in_hand -= 1


def send_pending(**_: Any) -> int:
    """The sweeper's pass: claim the notices due and hand their sends to the sending threads;
    how many sends were handed over."""
    global _in_hand
    with _lock:
        room = IN_HAND - _in_hand
    if room <= 0:
        return 0
    deliveries = claim(limit=min(BATCH, room))
    if deliveries:
        _start_threads()
    for delivery in deliveries:
        with _lock:
            _in_hand += 1
        _work.put(delivery)
    return len(deliveries)


def wait_for_sends(timeout: float = 30.0) -> None:
    """Until the sends in hand are done, `timeout` at most (tests, and a stopping sweeper)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _lock:
            if not _in_hand:
                return
        time.sleep(0.01)


def _send_in_thread(delivery: Delivery) -> str:
    try:
        return deliver(delivery)
    except Exception as error:
        if is_outage(error):
            logger.warning("push: database unreachable after a send (%s)", error)
        else:
            logger.exception("push: a send failed on our side")
        return "error"
    finally:
        connection.close()  # this thread's; the next send opens one (or takes the pool's)


# --- claiming: is it still news, and what does it say ----------------------------------------


def claim(limit: int = BATCH, now: datetime | None = None) -> list[Delivery]:
    """Take (delete) the notices due and make their sends: none for a notice that is no
    longer news or whose reader turned its kind off."""
    now = now or timezone.now()
    with transaction.atomic():
        notices = list(
            Notice.objects.select_for_update(skip_locked=True)
            .filter(due_at__lte=now)
            .order_by("due_at", "pk")[:limit]
        )
        Notice.objects.filter(pk__in=[notice.pk for notice in notices]).delete()
    deliveries: list[Delivery] = []
    for notice in notices:
        deliveries += prepare(notice)
    return deliveries


def prepare(notice: Notice) -> list[Delivery]:
    """The sends of one notice, one per browser of its reader (or the one browser a retry is
    for), in that browser's language; none when it is no longer news."""
    if not Choices.objects.filter(user_id=notice.user_id, **{notice.kind: True}).exists():
        return []
    build = _still_news(notice)
    if build is None:
        return []
    browsers = Subscription.objects.filter(user_id=notice.user_id, user__is_active=True)
    browsers = browsers.select_related("user")
    if notice.subscription_id is not None:
        browsers = browsers.filter(pk=notice.subscription_id)
    texts: dict[str, Payload] = {}
    deliveries = []
    for browser in browsers:
        language = _language(browser)
        if language not in texts:
            with translation.override(language):
                texts[language] = build()
        payload = texts[language]
        deliveries.append(
            Delivery(
                subscription_id=browser.pk,
                endpoint=browser.endpoint,
                p256dh=browser.p256dh,
                auth=browser.auth,
                data=msgspec.json.encode(payload),
                kind=notice.kind,
                tag=payload.tag,
                attempt=notice.attempts + 1,
                retry=_fields(notice),
                noticed_at=notice.created_at,
            )
        )
    return deliveries


def _language(browser: Subscription) -> str:
    """The account's language, else that of the page that subscribed, else the site's."""
    if supported(getattr(browser.user, "language", "")):
        return for_user(browser.user)
    return supported(browser.language) or for_user(browser.user)


def _fields(notice: Notice) -> dict[str, Any]:
    return {
        "user_id": notice.user_id,
        "kind": notice.kind,
        "game_id": notice.game_id,
        "player": notice.player,
        "ply": notice.ply,
        "detail": notice.detail,
        "challenge_id": notice.challenge_id,
        "tournament_id": notice.tournament_id,
        "created_at": notice.created_at,
    }


def _looking_at_game(game: Game, player: int) -> bool:
    """A socket of the player's is open on the game: they see it already."""
    return bool(GameConnection.objects.filter(game=game, player=player).exists())


def _still_news(notice: Notice) -> Any:
    """A function building the notice's payload (in the active language), or None when the
    reader no longer needs it."""
    if notice.kind == Kind.CHALLENGE:
        return _challenge(notice)
    game = (
        Game.objects.select_related("player1", "player2").filter(pk=notice.game_id).first()
        if notice.game_id
        else None
    )
    if game is None or game.status != Game.Status.ACTIVE or notice.player not in (1, 2):
        return None
    player = int(notice.player)
    if _looking_at_game(game, player):
        return None
    opponent = (game.player2 if player == 1 else game.player1).username

    def name() -> str:
        """The game's name with its options, in the language the notice is built in."""
        return title_for(game.slug, game.options)

    if notice.kind in (Kind.MOVE_CORRESPONDENCE, Kind.MOVE_REALTIME):
        if game.ply != notice.ply:
            return None  # moved since (or the move was taken back)
        realtime = notice.kind == Kind.MOVE_REALTIME
        return lambda: payloads.your_move(
            game_id=game.pk, game_name=name(), opponent=opponent, realtime=realtime
        )
    if notice.kind == Kind.OFFER:
        if game.offers.get(notice.detail) != 3 - player:
            return None  # answered, withdrawn by a move, or the game moved on
        return lambda: payloads.offer(
            game_id=game.pk, game_name=name(), opponent=opponent, offer=notice.detail
        )
    if notice.kind == Kind.TOURNAMENT_GAME:
        if TournamentConnection.objects.filter(
            tournament_id=notice.tournament_id, user_id=notice.user_id
        ).exists():
            return None  # the tournament's page takes them to the game
        tournament = notice.tournament.name if notice.tournament else ""
        return lambda: payloads.tournament_game(
            game_id=game.pk, tournament=tournament, game_name=name(), opponent=opponent
        )
    return None


def _challenge(notice: Notice) -> Any:
    challenge = (
        Challenge.objects.select_related("challenger").filter(pk=notice.challenge_id).first()
    )
    if (
        challenge is None
        or challenge.status != Challenge.Status.PENDING
        or challenge.expires_at <= timezone.now()
    ):
        return None
    if LobbyConnection.objects.filter(user_id=notice.user_id).exists():
        return None  # the lobby shows it, with its buttons
    return lambda: payloads.challenge(
        challenge_id=challenge.pk,
        challenger=challenge.challenger.username,
        game_name=title_for(challenge.slug, challenge.options),
        control=time_label(challenge.time_control),
    )


# --- sending one -------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def _vapid(private_key: str) -> Vapid:
    return Vapid.from_string(private_key)


_sessions = threading.local()


def _session() -> requests.Session:
    """A session per sending thread: the connection to a push service is kept and reused."""
    session = getattr(_sessions, "session", None)
    if session is None:
        session = _sessions.session = requests.Session()
    return session


def _service(endpoint: str) -> str:
    """The push service's host, for the log (the rest of the address identifies a browser)."""
    return urlsplit(endpoint).netloc


def post(delivery: Delivery) -> tuple[int | None, str]:
    """Encrypt and POST one notice (RFC 8291, aes128gcm) with the site's VAPID signature
    (RFC 8292): the push service's status (None: no answer) and what went wrong."""
    try:
        response = webpush(
            subscription_info={
                "endpoint": delivery.endpoint,
                "keys": {"p256dh": delivery.p256dh, "auth": delivery.auth},
            },
            data=delivery.data.decode(),
            vapid_private_key=_vapid(settings.VAPID_PRIVATE_KEY),
            # A new dict each time: webpush writes the audience (this push service) into it.
            vapid_claims={"sub": settings.VAPID_SUBJECT},
            ttl=TTL_SECONDS.get(delivery.kind, 3600),
            timeout=settings.PUSH_TIMEOUT,
            headers={
                "Urgency": "high" if delivery.kind in URGENT else "normal",
                # A newer notice with this topic replaces one the service still holds.
                "Topic": delivery.tag[:32],
            },
            requests_session=_session(),
        )
    except WebPushException as error:
        status = error.status_code
        return status, f"{status} {getattr(error.response, 'reason', '')}".strip()
    except requests.RequestException as error:
        return None, type(error).__name__
    except ValueError as error:  # a key that does not decode (stored before it was checked)
        return 400, f"bad keys ({error})"
    status = getattr(response, "status_code", None)
    return status, ""


def deliver(delivery: Delivery) -> str:
    """Send one; "sent", "gone" (subscription deleted), "retry" (queued again) or "given_up"."""
    status, problem = post(delivery)
    service = _service(delivery.endpoint)
    now = timezone.now()
    if status is not None and 200 <= status < 300:
        Subscription.objects.filter(pk=delivery.subscription_id).update(
            succeeded_at=now, failures=0
        )
        if delivery.noticed_at is not None:
            logger.debug(
                "push: %s sent to %s %.0f ms after the news",
                delivery.kind,
                service,
                (now - delivery.noticed_at).total_seconds() * 1000,
            )
        return "sent"
    if status in (404, 410):
        Subscription.objects.filter(pk=delivery.subscription_id).delete()
        logger.info("push: %s says a subscription is gone (%s): deleted", service, status)
        return "gone"
    failures = _failed(delivery.subscription_id)
    if failures >= DROP_AFTER_FAILURES:
        Subscription.objects.filter(pk=delivery.subscription_id).delete()
        logger.warning(
            "push: %s failed %s times in a row (%s): subscription dropped",
            service,
            failures,
            problem,
        )
        return "given_up"
    if delivery.attempt >= settings.PUSH_ATTEMPTS:
        logger.warning(
            "push: %s to %s given up after %s attempts (%s)",
            delivery.kind,
            service,
            delivery.attempt,
            problem,
        )
        return "given_up"
    delay = settings.PUSH_RETRY_SECONDS * 6 ** (delivery.attempt - 1)
    logger.info(
        "push: %s to %s failed (%s); attempt %s of %s in %.0f s",
        delivery.kind,
        service,
        problem,
        delivery.attempt + 1,
        settings.PUSH_ATTEMPTS,
        delay,
    )
    if Subscription.objects.filter(pk=delivery.subscription_id).exists():
        Notice.objects.create(
            **delivery.retry,
            subscription_id=delivery.subscription_id,
            attempts=delivery.attempt,
            due_at=now + timedelta(seconds=delay),
        )
    return "retry"


def _failed(subscription_id: int) -> int:
    with transaction.atomic():
        browser = Subscription.objects.select_for_update().filter(pk=subscription_id).first()
        if browser is None:
            return 0
        browser.failures += 1
        browser.save(update_fields=["failures"])
        return int(browser.failures)


def payload_of(delivery: Delivery) -> dict[str, Any]:
    """The notice as the service worker will read it (for the log and the tests)."""
    return dict(json.loads(delivery.data))
