from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    name = "devtools"
    verbose_name = "Developer tooling (benchmarks, fault injection)"
