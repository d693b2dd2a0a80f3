"""The "Moderators" group, holding the permission moderation.moderate: a moderator is a
member of it (`manage.py moderators --add NAME`), not a superuser."""

from typing import Any

from django.db import migrations

GROUP = "Moderators"


def create_group(apps: Any, schema_editor: Any) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    # Permissions are otherwise created after every migration has run: made here so that
    # the group holds it from the start.
    kind, _ = ContentType.objects.get_or_create(app_label="moderation", model="report")
    permission, _ = Permission.objects.get_or_create(
        content_type=kind,
        codename="moderate",
        defaults={"name": "Can read reports and act as a moderator"},
    )
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(permission)


def remove_group(apps: Any, schema_editor: Any) -> None:
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("moderation", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
