"""Schema operations the migrations share: what a live site needs of a migration (no long
lock on a big table) that Django's own operations do only on PostgreSQL."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class AddIndexConcurrentlyWherePossible(AddIndexConcurrently):
    """CONCURRENTLY on PostgreSQL; a plain index elsewhere (SQLite: the embedded default)."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor != "postgresql":
            migrations.AddIndex.database_forwards(
                self, app_label, schema_editor, from_state, to_state
            )
            return
        if not schema_editor.collect_sql:  # only printed (sqlmigrate, the lock check): no harm
            self._ensure_not_in_transaction(schema_editor)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)
        else:
            migrations.AddIndex.database_backwards(self, app_label, schema_editor, *args)
