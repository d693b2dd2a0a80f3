"""The one refusal every service raises, and how each refusal reads over HTTP.

A service refuses with ServiceError(code, message): the code is the protocol's (see the
"Error codes" table of docs/PROTOCOL.md), the message is for people. Sockets send it as an
`error` frame; HTTP answers {"error": {"code", "message"}} with the status below.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A request the server refuses; nothing was changed."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra


# Every code's HTTP status; codes not listed are 400 (a bad request).
HTTP_STATUS = {
    "bad_token": 401,
    "missing_scope": 403,
    "token_not_accepted": 403,
    "not_logged_in": 403,
    "not_yours": 403,
    "not_a_player": 403,
    "blocked": 403,
    "chat_muted": 403,
    "rated_forbidden": 403,
    "not_accepting_challenges": 403,
    "not_accepting_followers": 403,
    "not_a_moderator": 403,
    "not_invited": 403,
    "bots_not_allowed": 403,
    "game_in_progress": 403,
    "csrf_failed": 403,
    "no_such_game": 404,
    "no_such_seek": 404,
    "no_such_challenge": 404,
    "unknown_user": 404,
    "no_such_line": 404,
    "no_such_report": 404,
    "no_such_tournament": 404,
    "not_found": 404,
    "no_such_analysis": 404,
    "no_such_puzzle": 404,
    "no_puzzle_left": 404,
    "no_such_node": 404,
    "method_not_allowed": 405,
    "not_your_turn": 409,
    "stale_ply": 409,
    "game_over": 409,
    "game_not_over": 409,
    "too_late_to_abort": 409,
    "too_early": 409,
    "opponent_here": 409,
    "seek_closed": 409,
    "too_many_seeks": 409,
    "too_many_computer_games": 409,
    "too_many_games": 409,
    "has_games": 409,
    "too_many_challenges": 409,
    "challenge_accepted": 409,
    "challenge_declined": 409,
    "challenge_cancelled": 409,
    "challenge_expired": 409,
    "vacation_limit": 409,
    "on_vacation": 409,
    "not_on_vacation": 409,
    "already_reported": 409,
    "username_taken": 409,
    "report_closed": 409,
    "already_joined": 409,
    "not_joined": 409,
    "tournament_full": 409,
    "tournament_over": 409,
    "tournament_started": 409,
    "too_many_tournaments": 409,
    "analysis_too_big": 409,
    "too_many_analyses": 409,
    "review_running": 409,
    "too_large": 413,
    "illegal_move": 422,
    "rate_limited": 429,
    "too_many_streams": 429,
    "too_many_reports": 429,
    "server_error": 500,
    "not_available": 501,
    "unavailable": 503,
    "computer_busy": 503,
}


def http_status(code: str) -> int:
    return HTTP_STATUS.get(code, 400)


# Said in the reader's language where it is sent: _(UNAVAILABLE).
def gettext_noop(message: str) -> str:
    """Marks a message for the catalogs (xgettext knows the name). Not Django's: the settings
    import this module, and Django's reads the settings."""
    return message


UNAVAILABLE = gettext_noop("The server cannot reach its database just now: try again in a moment.")


def is_outage(error: BaseException) -> bool:
    """Whether `error` means the database could not be reached (not a bug of ours)."""
    from django.db import InterfaceError, OperationalError
    from psycopg_pool import PoolTimeout

    return isinstance(error, OperationalError | InterfaceError | PoolTimeout)
