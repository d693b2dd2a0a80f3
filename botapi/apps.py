from django.apps import AppConfig


class BotApiConfig(AppConfig):
    name = "botapi"
    verbose_name = "Bot API"
