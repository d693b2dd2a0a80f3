"""The tournament's row lock: every change to a tournament, its entries or its pairings is made
under it, so that waves, rounds, results and entries from several processes take turns."""

from __future__ import annotations

from django.utils.translation import gettext as _

from realtime.errors import ServiceError
from tournaments.models import Tournament


def locked(tournament_id: object) -> Tournament:
    if not isinstance(tournament_id, int) or isinstance(tournament_id, bool):
        raise ServiceError("bad_message", _("A tournament is named by its number."))
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is None:
        raise ServiceError(
            "no_such_tournament",
            _("There is no tournament %(tournament)s.") % {"tournament": tournament_id},
        )
    return tournament
