from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "bots"
    verbose_name = "Computer opponents"
