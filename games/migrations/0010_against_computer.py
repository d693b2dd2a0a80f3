from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0009_moderation"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="against_computer",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
