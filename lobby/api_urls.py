from django.urls import path

from lobby import api, commands

urlpatterns = [
    path("api/lobby", api.lobby, name="api-lobby"),
    # Every operation of the lobby's command table, at its route.
    *(path(op.route, api.view(op), name=op.url_name) for op in commands.OPERATIONS),
]
