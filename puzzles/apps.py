from django.apps import AppConfig


class PuzzlesConfig(AppConfig):
    name = "puzzles"
    verbose_name = "Puzzles"

    def ready(self) -> None:
        from puzzles import protocol  # noqa: F401  (registers the API's body for the schema)
