from django.apps import AppConfig


class RatingsConfig(AppConfig):
    name = "ratings"
    verbose_name = "Ratings and standings"

    def ready(self) -> None:
        from games import lifecycle
        from ratings import services

        lifecycle.game_ended.connect(services.game_ended, dispatch_uid="ratings-game-ended")
        lifecycle.sweeping.connect(services.rate_missed, dispatch_uid="ratings-missed")
