from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis board"

    def ready(self) -> None:
        from analysis import (
            protocol,  # noqa: F401  (registers the API's bodies for the schema)
            reviews,
        )
        from bots import worker

        worker.ticked.connect(reviews.on_tick, dispatch_uid="analysis-reviews")
