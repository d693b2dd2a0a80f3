from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from config import presence
        from games import services
        from games.models import GameConnection

        presence.register(
            GameConnection,
            on_reaped=services.connections_reaped,
            on_revived=services.connections_revived,
        )
