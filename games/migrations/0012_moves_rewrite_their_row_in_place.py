"""No index of the games names a column a move changes, so that PostgreSQL rewrites a move's
row in place (a "HOT" update, no index touched): the active games get a partial index of
their own (the sweeper's deadlines and the reminders' last moves are read through it), the
finished ones an index on `ended_at`, a new column set once as a game ends and backfilled
here in batches outside any transaction; the new indexes are built CONCURRENTLY before the
old ones go. The events lose their index on the game alone (their unique (game, version)
serves every lookup by game)."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F, Q

from games.migration_ops import AddIndexConcurrentlyWherePossible

BATCH = 1000


def ended_when_last_changed(apps: Any, schema_editor: Any) -> None:
    """Games that ended before the column: their last change is their end, or near it."""
    Game = apps.get_model("games", "Game")
    last = 0
    while True:
        ids = list(
            Game.objects.exclude(status="active")
            .filter(pk__gt=last, ended_at__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)[:BATCH]
        )
        if not ids:
            return
        Game.objects.filter(pk__in=ids).update(ended_at=F("updated_at"))
        last = ids[-1]


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("games", "0011_against_computer_marked"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="ended_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(ended_when_last_changed, migrations.RunPython.noop),
        AddIndexConcurrentlyWherePossible(
            model_name="game",
            index=models.Index(
                condition=Q(("status", "active")), fields=["id"], name="games_active"
            ),
        ),
        AddIndexConcurrentlyWherePossible(
            model_name="game",
            index=models.Index(
                condition=Q(("ended_at__isnull", False)), fields=["-ended_at"], name="games_ended"
            ),
        ),
        migrations.RemoveIndex(model_name="game", name="games_game_status_9c5036_idx"),
        migrations.AlterField(
            model_name="game",
            name="deadline",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="game",
            name="moved_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # The field's index only: Django's AlterField would drop and add again the foreign
        # key, checking every event under the lock.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="gameevent",
                    name="game",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="games.game",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "games_gameevent_game_id_57c09de4"',
                    'CREATE INDEX "games_gameevent_game_id_57c09de4" ON "games_gameevent" '
                    '("game_id")',
                ),
            ],
        ),
    ]
