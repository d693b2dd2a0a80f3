from django.apps import AppConfig


class ModerationConfig(AppConfig):
    name = "moderation"
    verbose_name = "Reports and moderators' actions"
