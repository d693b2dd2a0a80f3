from django.apps import AppConfig


class PbmConfig(AppConfig):
    name = "pbm"
    verbose_name = "Play by e-mail (pbmserv's commands)"
