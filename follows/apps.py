from django.apps import AppConfig


class FollowsConfig(AppConfig):
    name = "follows"
    verbose_name = "Followed games and players"

    def ready(self) -> None:
        from accounts import circles, exports
        from follows import services
        from games import lifecycle

        # The apps below follows learn who follows whom through accounts.circles.
        circles.register(services.follows_player, services.followed_names)
        # What the player follows is in their data download (privacy/export.py).
        exports.register("follows", services.following)
        lifecycle.games_started.connect(services.games_started, dispatch_uid="follows-started")
        lifecycle.game_ended.connect(services.game_ended, dispatch_uid="follows-ended")
        lifecycle.sweeping.connect(services.send_mails, dispatch_uid="follows-mails")
