"""What each kind of notice says, in the active language (the caller wraps it in
`translation.override` with the reader's): a small JSON object the service worker shows
(push.protocol.Payload). Plain values in, no database: each kind is unit-tested."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext as _

from push.models import Kind
from push.protocol import Payload


def _lang() -> str:
    return translation.get_language() or "en"


def _game_url(game_id: int) -> str:
    return f"/games/{game_id}/"


def _game_tag(game_id: int) -> str:
    # One notice per game on the screen: the newest replaces the older.
    return f"game-{game_id}"


def your_move(*, game_id: int, game_name: str, opponent: str, realtime: bool) -> Payload:
    return Payload(
        title=_("Your move against %(opponent)s") % {"opponent": opponent},
        body=_("%(opponent)s has moved in %(game)s #%(id)s.")
        % {"opponent": opponent, "game": game_name, "id": game_id},
        url=_game_url(game_id),
        tag=_game_tag(game_id),
        kind=Kind.MOVE_REALTIME if realtime else Kind.MOVE_CORRESPONDENCE,
        lang=_lang(),
    )


def challenge(*, challenge_id: int, challenger: str, game_name: str, control: str) -> Payload:
    return Payload(
        title=_("%(name)s challenges you") % {"name": challenger},
        body=_("%(game)s, %(control)s. Answer in the lobby.")
        % {"game": game_name, "control": control},
        url="/",
        tag=f"challenge-{challenge_id}",
        kind=Kind.CHALLENGE,
        lang=_lang(),
    )


def tournament_game(*, game_id: int, tournament: str, game_name: str, opponent: str) -> Payload:
    return Payload(
        title=_("Your game in %(tournament)s has started") % {"tournament": tournament},
        body=_("%(game)s #%(id)s against %(opponent)s.")
        % {"game": game_name, "id": game_id, "opponent": opponent},
        url=_game_url(game_id),
        tag=_game_tag(game_id),
        kind=Kind.TOURNAMENT_GAME,
        lang=_lang(),
    )


def offer(*, game_id: int, game_name: str, opponent: str, offer: str) -> Payload:
    if offer == "draw":
        title = _("%(opponent)s offers a draw") % {"opponent": opponent}
    else:
        title = _("%(opponent)s asks to take a move back") % {"opponent": opponent}
    return Payload(
        title=title,
        body=_("%(game)s #%(id)s: answer on the game's page.") % {"game": game_name, "id": game_id},
        url=_game_url(game_id),
        tag=_game_tag(game_id),
        kind=Kind.OFFER,
        lang=_lang(),
    )
