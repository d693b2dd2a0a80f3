from django.apps import AppConfig


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = "Lobby and accounts"

    def ready(self) -> None:
        from config import presence
        from games import lifecycle
        from lobby.models import LobbyConnection
        from lobby.services import presence as lobby_presence
        from lobby.services import seeks

        lifecycle.games_started.connect(seeks.announce_games, dispatch_uid="lobby-announce")
        lifecycle.game_ended.connect(seeks.announce_end, dispatch_uid="lobby-end")

        presence.register(
            LobbyConnection,
            on_reaped=lobby_presence.connections_reaped,
            on_revived=lobby_presence.connections_revived,
        )
