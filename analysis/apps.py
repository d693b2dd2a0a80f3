from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis board"

    def ready(self) -> None:
        from analysis import (
            exploring,
            protocol,  # noqa: F401  (registers the API's bodies for the schema)
            reviews,
        )
        from bots import worker
        from games import lifecycle

        worker.ticked.connect(reviews.on_tick, dispatch_uid="analysis-reviews")
        # The games that ended since the last pass are counted into the opening explorer.
        lifecycle.sweeping.connect(exploring.on_sweep, dispatch_uid="analysis-explorer")
