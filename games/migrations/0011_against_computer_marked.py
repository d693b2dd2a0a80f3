"""Games made before `against_computer` are marked, in batches outside any transaction, and
the bots worker's partial index is built CONCURRENTLY on PostgreSQL: live games go on
meanwhile."""

from typing import Any

from django.db import migrations, models
from django.db.models import Q

from games.migration_ops import AddIndexConcurrentlyWherePossible

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
