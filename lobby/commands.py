"""The lobby's one command table: every operation a client may ask for, served alike by the
socket (/ws/lobby/, lobby.consumers) and by HTTP (/api/..., lobby.api).

For each operation: its socket message (the typed request both doors hand to the service),
its HTTP route and body, the service call, and the answer each door gives (the socket's
`ok` frame, the HTTP JSON). An operation added here is served by both doors; docs/PROTOCOL.md
documents the answers.

The service calls name the service through its module at call time (`seeks.create_seek`,
not a reference taken at import), so a test that replaces a service replaces it for both doors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from django.utils.translation import gettext as _

from bots import services as bots
from lobby import protocol
from lobby.payloads import challenge_payload, seek_payload
from lobby.services import challenges, seeks
from realtime.errors import ServiceError
from realtime.protocol import Body, Message, tag_of


@dataclass(frozen=True)
class Operation:
    message: type[Message]
    # The HTTP route under /, its URL name, and the body it reads (None: it reads none). The
    # route's parameters and the body's fields together are the fields of `message`.
    route: str
    url_name: str
    body: type[Body] | None
    # The service call: (user, message, pair_now) -> what the service returned. The socket
    # leaves pairing to the matchmaker, which batches bursts of seeks (`game_started` tells
    # the player); HTTP has no socket to tell, so it pairs at once and answers with the game.
    call: Callable[[Any, Any, bool], Any]
    ok: Callable[[Any], dict[str, Any]]  # the socket's `ok` fields beside `id`
    answer: Callable[[Any], dict[str, Any]]  # the HTTP JSON
    # The socket's call for many requests at once (a burst, lobby.consumers batches them):
    # [(user, message)] -> each one's result or the ServiceError that refused it, in order.
    # None: each request is served alone.
    call_many: Callable[[list[tuple[Any, Any]]], list[Any]] | None = None

    @property
    def tag(self) -> str:
        return tag_of(self.message)


def _seek_request(user: Any, message: protocol.Seek) -> seeks.SeekRequest:
    return seeks.SeekRequest(
        user=user,
        games=msgspec.to_builtins(message.games),
        time_control=message.time_control,
        rated=message.rated,
        rating_range=message.rating_range,
        computer=message.computer,
        bots=message.bots,
    )


def _seek(user: Any, message: protocol.Seek, pair_now: bool) -> Any:
    request = _seek_request(user, message)
    return seeks.create_seek(**vars(request), pair_now=pair_now)


def _seeks(requests: list[tuple[Any, protocol.Seek]]) -> list[Any]:
    made = seeks.create_seeks([_seek_request(user, message) for user, message in requests])
    # Unpaired (the matchmaker pairs them), as one socket's seek is.
    return [seek if isinstance(seek, ServiceError) else (seek, None) for seek in made]


def _seek_answer(made: Any) -> dict[str, Any]:
    seek, game = made
    seek.refresh_from_db()
    return {"seek": seek_payload(seek), "game_id": game.pk if game else None}


def _play_computer(user: Any, message: protocol.PlayComputer, _: bool) -> Any:
    game = bots.play_computer(
        user=user,
        slug=message.slug,
        options=dict(message.options),
        level=message.level,
        side=message.side,
        time_control=message.time_control,
    )
    return game, game.player_number(user)


def _challenge(user: Any, message: protocol.Challenge, _: bool) -> Any:
    return challenges.create_challenge(
        challenger=user,
        challenged=message.user,
        slug=message.slug,
        options=dict(message.options),
        side=message.side,
        time_control=message.time_control,
        rated=message.rated,
    )


def _challenge_answer(challenge: Any) -> dict[str, Any]:
    return {"challenge": challenge_payload(challenge)}


def _nothing(_: Any) -> dict[str, Any]:
    return {}


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        message=protocol.Seek,
        route="api/seeks",
        url_name="api-seeks",
        body=protocol.SeekBody,
        call=_seek,
        ok=lambda made: {"seek_id": made[0].pk},
        answer=_seek_answer,
        call_many=_seeks,
    ),
    Operation(
        message=protocol.CancelSeek,
        route="api/seeks/<int:seek_id>/cancel",
        url_name="api-seek-cancel",
        body=None,
        call=lambda user, m, _: seeks.cancel_seek(user=user, seek_id=m.seek_id),
        ok=_nothing,
        answer=lambda _: {"ok": True},
    ),
    Operation(
        message=protocol.Challenge,
        route="api/challenges",
        url_name="api-challenges",
        body=protocol.ChallengeBody,
        call=_challenge,
        ok=lambda challenge: {"challenge_id": challenge.pk, "token": challenge.token},
        answer=_challenge_answer,
    ),
    Operation(
        message=protocol.Accept,
        route="api/challenges/<int:challenge_id>/accept",
        url_name="api-challenge-accept",
        body=None,
        call=lambda user, m, _: challenges.accept_challenge(
            user=user, challenge_id=m.challenge_id, token=m.token
        ),
        ok=lambda game: {"game_id": game.pk},
        answer=lambda game: {"game_id": game.pk},
    ),
    Operation(
        message=protocol.Decline,
        route="api/challenges/<int:challenge_id>/decline",
        url_name="api-challenge-decline",
        body=protocol.DeclineBody,
        call=lambda user, m, _: challenges.decline_challenge(
            user=user, challenge_id=m.challenge_id, reason=m.reason
        ),
        ok=_nothing,
        answer=_challenge_answer,
    ),
    Operation(
        message=protocol.CancelChallenge,
        route="api/challenges/<int:challenge_id>/cancel",
        url_name="api-challenge-cancel",
        body=None,
        call=lambda user, m, _: challenges.cancel_challenge(user=user, challenge_id=m.challenge_id),
        ok=_nothing,
        answer=_challenge_answer,
    ),
    Operation(
        message=protocol.Command,
        route="api/command",
        url_name="api-command",
        body=protocol.CommandBody,
        call=lambda user, m, _: challenges.pbm_challenge(sender=user, text=m.text),
        ok=lambda challenge: {"challenge_id": challenge.pk},
        answer=_challenge_answer,
    ),
    Operation(
        message=protocol.PlayComputer,
        route="api/computer",
        url_name="api-computer",
        body=protocol.ComputerBody,
        call=_play_computer,
        ok=lambda played: {"game_id": played[0].pk},
        answer=lambda played: {"game_id": played[0].pk, "you": played[1]},
    ),
)

BY_TAG: dict[str, Operation] = {operation.tag: operation for operation in OPERATIONS}


def signed_in(user: Any) -> Any:
    if user is None or not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest first."))
    return user


@dataclass(frozen=True)
class Done:
    """What an operation did: the service's result and the answer of the door it came by
    (the socket's `ok` frame, or the HTTP JSON)."""

    result: Any
    answer: protocol.Ok | dict[str, Any]


def run(user: Any, message: Message, *, socket: bool) -> Done:
    """Serve one request, in a database thread: check the user, call the service, and build
    the answer while the rows are at hand (a seek's view reads its owner's rating)."""
    operation = BY_TAG[tag_of(type(message))]
    result = operation.call(signed_in(user), message, not socket)
    if socket:
        return Done(result, protocol.Ok(id=message.id, **operation.ok(result)))
    return Done(result, operation.answer(result))


def run_many(requests: list[tuple[Any, Message]]) -> list[Done | ServiceError]:
    """Serve many socket requests of one operation that has `call_many`, in a database
    thread: each one's `Done`, or the ServiceError that refused it, in order."""
    operation = BY_TAG[tag_of(type(requests[0][1]))]
    assert operation.call_many is not None
    out: list[Done | ServiceError | None] = [None] * len(requests)
    served: list[tuple[int, Any, Message]] = []
    for index, (user, message) in enumerate(requests):
        try:
            served.append((index, signed_in(user), message))
        except ServiceError as error:
            out[index] = error
    if served:
        results = operation.call_many([(user, message) for _, user, message in served])
        for (index, _, message), result in zip(served, results, strict=True):
            out[index] = (
                result
                if isinstance(result, ServiceError)
                else Done(result, protocol.Ok(id=message.id, **operation.ok(result)))
            )
    return [done for done in out if done is not None]
