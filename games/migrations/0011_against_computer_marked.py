"""Games made before `against_computer` are marked, in batches outside any transaction, and
the bots worker's partial index is built CONCURRENTLY on PostgreSQL: live games go on
meanwhile."""

from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models
from django.db.models import Q

BATCH = 1000


def mark_games_against_the_computer(apps: Any, schema_editor: Any) -> None:
    Game = apps.get_model("games", "Game")
    bots = Q(player1__is_bot=True) | Q(player2__is_bot=True)
    last = 0
    while True:
        ids = list(
            Game.objects.filter(bots, pk__gt=last)
            .order_by("pk")
            .values_list("pk", flat=True)[:BATCH]
        )
        if not ids:
            return
        Game.objects.filter(pk__in=ids).update(against_computer=True)
        last = ids[-1]


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


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("games", "0010_against_computer"),
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(mark_games_against_the_computer, migrations.RunPython.noop),
        AddIndexConcurrentlyWherePossible(
            model_name="game",
            index=models.Index(
                condition=Q(("against_computer", True), ("status", "active")),
                fields=["id"],
                name="games_active_vs_computer",
            ),
        ),
    ]
