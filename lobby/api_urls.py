from django.urls import path

from lobby import api

urlpatterns = [
    path("api/lobby", api.lobby, name="api-lobby"),
    path("api/seeks", api.create_seek, name="api-seeks"),
    path("api/seeks/<int:seek_id>/cancel", api.cancel_seek, name="api-seek-cancel"),
    path("api/challenges", api.create_challenge, name="api-challenges"),
    *(
        path(
            f"api/challenges/<int:challenge_id>/{action}",
            api.answer_challenge,
            {"action": action},
            name=f"api-challenge-{action}",
        )
        for action in ("accept", "decline", "cancel")
    ),
    path("api/command", api.command, name="api-command"),
    path("api/computer", api.play_computer, name="api-computer"),
]
