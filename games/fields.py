"""A model field holding a clocks.TimeControl: parsed once when a row is read, stored as its
code ("", "5+3", "3d")."""

from __future__ import annotations

from typing import Any

from django.db import models

from games import clocks


class TimeControlField(models.CharField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 20)
        kwargs.setdefault("blank", True)
        kwargs.setdefault("default", "")
        super().__init__(*args, **kwargs)

    def from_db_value(self, value: str | None, *args: Any) -> clocks.TimeControl:
        return clocks.parse(value or "")

    def to_python(self, value: Any) -> clocks.TimeControl:
        if isinstance(value, clocks.TimeControl):
            return value
        return clocks.parse(value or "")

    def get_prep_value(self, value: Any) -> str:
        return self.to_python(value).code

    def value_to_string(self, obj: models.Model) -> str:
        return self.get_prep_value(self.value_from_object(obj))
