from django.apps import AppConfig


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = "Lobby and accounts"

    def ready(self) -> None:
        from bots import worker
        from games import lifecycle
        from lobby import tv
        from lobby.models import LobbyConnection
        from lobby.services import computer, seeks
        from lobby.services import presence as lobby_presence
        from realtime import presence

        lifecycle.games_started.connect(seeks.announce_games, dispatch_uid="lobby-announce")
        worker.ticked.connect(computer.worker_tick, dispatch_uid="lobby-computer-fallback")
        lifecycle.game_ended.connect(seeks.announce_end, dispatch_uid="lobby-end")
        lifecycle.game_ended.connect(tv.game_ended, dispatch_uid="lobby-tv-end")

        presence.register(
            LobbyConnection,
            on_reaped=lobby_presence.connections_reaped,
            on_revived=lobby_presence.connections_revived,
        )
