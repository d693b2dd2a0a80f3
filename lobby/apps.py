from django.apps import AppConfig


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = "Lobby and accounts"

    def ready(self) -> None:
        from config import presence
        from lobby.models import LobbyConnection
        from lobby.services import presence as lobby_presence

        presence.register(
            LobbyConnection,
            on_reaped=lobby_presence.connections_reaped,
            on_revived=lobby_presence.connections_revived,
        )
