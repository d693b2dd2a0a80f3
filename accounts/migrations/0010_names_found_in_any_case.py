"""An index for names looked up in any case (`username__iexact`), built CONCURRENTLY on
PostgreSQL so that sign-ups and renames never wait for it (a plain index elsewhere)."""

from typing import Any

import django.db.models.functions.comparison
import django.db.models.functions.text
from django.db import migrations, models

INDEX = models.Index(
    django.db.models.functions.text.Upper(
        django.db.models.functions.comparison.Cast("username", output_field=models.TextField())
    ),
    name="accounts_user_name_any_case",
)


def build(apps: Any, schema_editor: Any) -> None:
    model = apps.get_model("accounts", "User")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.add_index(model, INDEX, concurrently=True)
    else:
        schema_editor.add_index(model, INDEX)


def drop(apps: Any, schema_editor: Any) -> None:
    model = apps.get_model("accounts", "User")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.remove_index(model, INDEX, concurrently=True)
    else:
        schema_editor.remove_index(model, INDEX)


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run inside a transaction.
    atomic = False

    dependencies = [
        ("accounts", "0009_api_tokens"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(build, drop)],
            state_operations=[migrations.AddIndex(model_name="user", index=INDEX)],
        ),
    ]
