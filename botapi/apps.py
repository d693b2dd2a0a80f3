from django.apps import AppConfig


class BotApiConfig(AppConfig):
    name = "botapi"
    verbose_name = "Bot API"

    def ready(self) -> None:
        # The event streams hear of every game starting and ending (botapi/streams.py).
        from botapi import streams

        streams.connect()
