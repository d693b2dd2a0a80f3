from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from games import services
        from games.models import GameConnection
        from realtime import presence

        presence.register(
            GameConnection,
            on_reaped=services.connections_reaped,
            on_revived=services.connections_revived,
        )
