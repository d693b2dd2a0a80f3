"""A move's record is its `move` event: GameEvent gains `ply` and the Move table goes."""

from typing import Any

from django.db import migrations, models


def mark_move_events(apps: Any, schema_editor: Any) -> None:
    Move = apps.get_model("games", "Move")
    GameEvent = apps.get_model("games", "GameEvent")
    for game_id, ply in Move.objects.values_list("game_id", "ply").iterator():
        # The move event of ply n is the one announcing n + 1 moves played.
        GameEvent.objects.filter(
            game_id=game_id, payload__type="move", payload__ply=ply + 1
        ).update(ply=ply)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_both_moved"),
    ]

    operations = [
        migrations.AddField(
            model_name="gameevent",
            name="ply",
            field=models.PositiveIntegerField(
                blank=True, help_text="move events: the moves played before this one", null=True
            ),
        ),
        migrations.RunPython(mark_move_events, migrations.RunPython.noop),
        migrations.DeleteModel(name="Move"),
        migrations.AddConstraint(
            model_name="gameevent",
            constraint=models.UniqueConstraint(
                fields=("game", "ply"), name="games_move_one_per_ply"
            ),
        ),
    ]
