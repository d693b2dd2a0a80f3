"""Challenges: pbmserv's `challenge` command made live, direct or open to anyone."""

from __future__ import annotations

import random
import re
import secrets
import shlex
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import restrictions
from accounts.models import Block, User
from games import lifecycle
from games import services as game_services
from games.engine import normalized_options
from games.messages import translated
from games.models import Game
from games.rules import InvalidOptions
from lobby import protocol
from lobby.models import Challenge
from lobby.payloads import challenge_payload
from lobby.services import feed
from realtime.errors import ServiceError

LIFETIME = timedelta(hours=24)
MAX_REASON_LENGTH = 100
# Challenges one user may have waiting for an answer: to one person, and in all.
MAX_PENDING_TO_ONE = 3
MAX_PENDING = 20

# Receivers get challenge=Challenge, after its commit: a user was challenged by name (the
# apps above the lobby hear of it this way: push notices).
challenge_made = Signal()


def _audience(challenge: Challenge) -> list[int]:
    ids = [challenge.challenger_id]
    if challenge.challenged_id:
        ids.append(challenge.challenged_id)
    return ids


def _user_named(name: Any) -> User:
    if not isinstance(name, str) or not name:
        raise ServiceError("bad_message", _("Name the user to challenge."))
    user = User.objects.filter(username__iexact=name).first()
    if user is None:
        raise ServiceError(
            "unknown_user", _("There is no user called %(name)s.") % {"name": repr(name[:40])}
        )
    return user


def create_challenge(
    *,
    challenger: User,
    challenged: str | None,
    slug: str,
    options: dict[str, int | str] | None = None,
    side: str = Challenge.Side.RANDOM,
    time_control: str = "",
    rated: bool = False,
) -> Challenge:
    """Challenge a named user, or (challenged=None) anyone who opens the link."""
    if not challenger.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest to challenge someone."))
    if rated and challenger.is_guest:
        raise ServiceError(
            "guests_play_casual", _("Guests play casual games only: sign up to play rated.")
        )
    if not isinstance(slug, str):
        raise ServiceError("bad_message", _('A challenge needs "slug", the game.'))
    if side not in Challenge.Side.values:
        raise ServiceError(
            "bad_message",
            _("side must be one of %(choices)s.") % {"choices": ", ".join(Challenge.Side.values)},
        )
    options = options or {}
    if not isinstance(options, dict):
        raise ServiceError("bad_message", _('"options" must be an object.'))
    control = game_services.check_time_control(time_control)
    try:
        full = normalized_options(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    target = None
    if challenged is not None:
        target = _user_named(challenged)
        if target.pk == challenger.pk:
            raise ServiceError("self_challenge", _("You cannot challenge yourself."))
        if Block.objects.filter(blocker=target, blocked=challenger).exists():
            raise ServiceError(
                "blocked", _("%(user)s does not take your challenges.") % {"user": target.username}
            )
        # The target's own "who may challenge me" (accounts/restrictions.py).
        restrictions.check_may_challenge(challenger=challenger, target=target)
        if rated and target.is_guest:
            raise ServiceError(
                "guests_play_casual",
                _("%(user)s is a guest: guests play casual games.") % {"user": target.username},
            )
    if rated:
        restrictions.check_may_play_rated(challenger, *([target] if target else []))
    _check_pending(challenger, target)
    # A bot account at BOT_MAX_GAMES games neither challenges nor is challenged (accepting
    # checks again, under the lock: games.services.create_game).
    game_services.check_bot_room([challenger, *([target] if target else [])])
    with transaction.atomic():
        challenge = Challenge.objects.create(
            challenger=challenger,
            challenged=target,
            slug=slug,
            options=full,
            side=side,
            time_control=control,
            rated=bool(rated),
            token=secrets.token_urlsafe(12),
            expires_at=timezone.now() + LIFETIME,
        )
        feed.tell(
            _audience(challenge), protocol.ChallengeNews(challenge=challenge_payload(challenge))
        )
        if target is not None:
            lifecycle.announce(challenge_made, challenge=challenge)
    return challenge


def _check_pending(challenger: User, target: User | None) -> None:
    """Refuse a challenge beyond the limits on those still waiting for an answer."""
    waiting = Challenge.objects.filter(
        challenger=challenger, status=Challenge.Status.PENDING, expires_at__gt=timezone.now()
    )
    if target is not None and waiting.filter(challenged=target).count() >= MAX_PENDING_TO_ONE:
        raise ServiceError(
            "too_many_challenges",
            _(
                "%(user)s has %(count)s challenges of yours waiting already: wait for an "
                "answer, or cancel one."
            )
            % {"user": target.username, "count": MAX_PENDING_TO_ONE},
        )
    if waiting.count() >= MAX_PENDING:
        raise ServiceError(
            "too_many_challenges",
            _("You have %(count)s challenges waiting for an answer: cancel some first.")
            % {"count": MAX_PENDING},
        )


def _locked(*, challenge_id: int | None = None, token: str | None = None) -> Challenge:
    # Lock the challenge row only: PostgreSQL refuses FOR UPDATE on the nullable side of the
    # outer join that select_related("challenged") makes (an open challenge has no one yet).
    query = Challenge.objects.select_for_update(of=("self",)).select_related(
        "challenger", "challenged"
    )
    if token is not None:
        challenge = query.filter(token=str(token)[:32]).first() if token else None
    elif isinstance(challenge_id, int) and not isinstance(challenge_id, bool):
        challenge = query.filter(pk=challenge_id).first()
    else:
        raise ServiceError("bad_message", _('Name the challenge by its "challenge_id".'))
    if challenge is None:
        raise ServiceError("no_such_challenge", _("There is no such challenge."))
    return challenge


def _problem(challenge: Challenge) -> ServiceError | None:
    """Why the challenge can no longer be answered, marking it expired when it is due."""
    if challenge.status == Challenge.Status.PENDING and challenge.expires_at <= timezone.now():
        challenge.status = Challenge.Status.EXPIRED
        challenge.save(update_fields=["status"])
        _updated(challenge)
    if challenge.status != Challenge.Status.PENDING:
        closed = {
            Challenge.Status.ACCEPTED: _("That challenge is accepted."),
            Challenge.Status.DECLINED: _("That challenge is declined."),
            Challenge.Status.CANCELLED: _("That challenge is cancelled."),
            Challenge.Status.EXPIRED: _("That challenge is expired."),
        }
        return ServiceError(
            f"challenge_{challenge.status}",
            closed.get(challenge.status, f"That challenge is {challenge.status}."),
        )
    return None


def _updated(challenge: Challenge) -> None:
    feed.tell(
        _audience(challenge), protocol.ChallengeUpdated(challenge=challenge_payload(challenge))
    )


def accept_challenge(
    *, user: User, challenge_id: int | None = None, token: str | None = None
) -> Game:
    """Accept a direct challenge (as its recipient) or an open one (as anyone else)."""
    if not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest to accept a challenge."))
    with transaction.atomic():
        challenge = _locked(challenge_id=challenge_id, token=token)
        # An expiry is recorded (committed) before the refusal is raised.
        problem = _problem(challenge)
        if problem is None:
            return _accept(challenge, user)
    raise problem


def _accept(challenge: Challenge, user: User) -> Game:
    if challenge.challenged_id is None:
        if challenge.challenger_id == user.pk:
            raise ServiceError("self_challenge", _("You cannot accept your own challenge."))
    elif challenge.challenged_id != user.pk:
        raise ServiceError("not_yours", _("Only the challenged user can accept this challenge."))
    if challenge.rated:
        restrictions.check_may_play_rated(user, challenge.challenger)
    side = challenge.side
    if side == Challenge.Side.RANDOM:
        side = random.choice([Challenge.Side.FIRST, Challenge.Side.SECOND])
    first, second = (
        (challenge.challenger, user)
        if side == Challenge.Side.FIRST
        else (user, challenge.challenger)
    )
    game = game_services.create_game(
        slug=challenge.slug,
        options=challenge.options,
        player1=first,
        player2=second,
        time_control=challenge.time_control,
        rated=challenge.rated,
    )
    challenge.status = Challenge.Status.ACCEPTED
    challenge.challenged = user
    challenge.game = game
    challenge.save(update_fields=["status", "challenged", "game"])
    _updated(challenge)  # the game itself is announced by games.lifecycle
    return game


def _answer(*, user: User, challenge_id: int, as_challenger: bool, **changes: Any) -> Challenge:
    """Decline (as the challenged) or cancel (as the challenger) a pending challenge."""
    with transaction.atomic():
        challenge = _locked(challenge_id=challenge_id)
        owner = challenge.challenger_id if as_challenger else challenge.challenged_id
        if owner != user.pk:
            raise ServiceError(
                "not_yours",
                _("Only the challenger can do that.")
                if as_challenger
                else _("Only the challenged user can do that."),
            )
        problem = _problem(challenge)
        if problem is None:
            for field, value in changes.items():
                setattr(challenge, field, value)
            challenge.save(update_fields=list(changes))
            _updated(challenge)
            return challenge
    raise problem


def decline_challenge(*, user: User, challenge_id: int, reason: str = "") -> Challenge:
    if not isinstance(reason, str) or len(reason) > MAX_REASON_LENGTH:
        raise ServiceError(
            "bad_message",
            _("A reason is text of at most %(most)s characters.") % {"most": MAX_REASON_LENGTH},
        )
    return _answer(
        user=user,
        challenge_id=challenge_id,
        as_challenger=False,
        status=Challenge.Status.DECLINED,
        decline_reason=reason.strip(),
    )


def cancel_challenge(*, user: User, challenge_id: int) -> Challenge:
    return _answer(
        user=user, challenge_id=challenge_id, as_challenger=True, status=Challenge.Status.CANCELLED
    )


# --- pbmserv's command form ----------------------------------------------------------------


def parse_pbm_command(text: Any) -> tuple[str, dict[str, int | str], str, str]:
    """`zigzag challenge -pits=8 -seeds=7 alice bob` -> (slug, options, userid1, userid2)."""
    if not isinstance(text, str) or len(text) > 200:
        raise ServiceError(
            "bad_command", _("Send the command as text, e.g. 'diffusion challenge alice bob'.")
        )
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ServiceError(
            "bad_command", _("Cannot read that command: %(error)s.") % {"error": error}
        ) from None
    if len(words) < 2 or words[1].lower() != "challenge":
        raise ServiceError(
            "bad_command",
            _("Only 'challenge' is understood: <game> challenge [-opt=N ...] userid1 userid2"),
        )
    slug = words[0].lower()
    options: dict[str, int | str] = {}
    names = []
    for word in words[2:]:
        if word.startswith("-"):
            key, equals, value = word[1:].partition("=")
            if not key or not equals:
                raise ServiceError(
                    "bad_command",
                    _("Options look like -name=value, not %(word)s.") % {"word": repr(word)},
                )
            # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
            options[key.lower()] = int(value) if re.fullmatch(r"-?[0-9]+", value) else value
        else:
            names.append(word)
    if len(names) != 2:
        raise ServiceError("bad_command", _("Name two users: userid1 (moves first) and userid2."))
    return slug, options, names[0], names[1]


def pbm_challenge(*, sender: User, text: str) -> Challenge:
    """pbmserv's `challenge`: userid1 moves first; the sender must be one of the two."""
    slug, options, first, second = parse_pbm_command(text)
    names = [first.lower(), second.lower()]
    if sender.username.lower() not in names:
        raise ServiceError("not_yours", _("You must be one of the two users of the challenge."))
    if names[0] == names[1]:
        raise ServiceError("self_challenge", _("You cannot challenge yourself."))
    if names[0] == sender.username.lower():
        return create_challenge(
            challenger=sender, challenged=second, slug=slug, options=options, side="first"
        )
    return create_challenge(
        challenger=sender, challenged=first, slug=slug, options=options, side="second"
    )
