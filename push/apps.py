from django.apps import AppConfig


class PushConfig(AppConfig):
    name = "push"
    verbose_name = "Push notices and the installable site"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from accounts import exports
        from games import lifecycle
        from lobby.services import challenges
        from push import notices, sending, subscriptions

        # What happened, after its transaction committed: a notice row for each player who
        # asked for that kind (push/notices.py); nothing is sent on the request's path.
        lifecycle.turn_passed.connect(notices.turn_passed, dispatch_uid="push-turn")
        lifecycle.offer_made.connect(notices.offer_made, dispatch_uid="push-offer")
        lifecycle.games_started.connect(notices.games_started, dispatch_uid="push-started")
        challenges.challenge_made.connect(notices.challenged, dispatch_uid="push-challenged")
        # The sweeper's pass hands the notices due to a few sending threads (push/sending.py).
        lifecycle.sweeping.connect(sending.send_pending, dispatch_uid="push-send")
        # Logging out in a browser stops that browser's notices: the next person to use it
        # must not see the last one's games.
        user_logged_out.connect(subscriptions.logged_out, dispatch_uid="push-logged-out")
        # The browsers subscribed and the kinds chosen are in the data download.
        exports.register("push", subscriptions.export_of)
