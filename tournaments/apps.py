from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        from games import lifecycle
        from realtime import presence
        from tournaments.models import TournamentConnection
        from tournaments.services import clock, results

        # A tournament game's end is counted by whichever process ended it (the server of a
        # socket, the sweeper, the bots worker), after its transaction commits.
        lifecycle.game_ended.connect(results.game_ended, dispatch_uid="tournaments-game-ended")
        # Starting and ending on time, pairing waves and rounds: the sweeper's pass, so that a
        # tournament runs with nobody connected.
        lifecycle.sweeping.connect(clock.tick, dispatch_uid="tournaments-tick")
        # The page's sockets count under the socket caps; nothing else hangs on their rows.
        presence.register(TournamentConnection, on_reaped=_nothing, on_revived=_nothing)


def _nothing(rows: object) -> None:
    pass
