from django.urls import path

from lobby import api, commands

urlpatterns = [
    path("api/lobby", api.lobby, name="api-lobby"),
    # Every operation of the lobby's command table, at its route; but `command`'s route is
    # the mail door's (pbm/views.py), which answers pbmserv's read commands as mail does and
    # hands `challenge` to this table.
    *(
        path(op.route, api.view(op), name=op.url_name)
        for op in commands.OPERATIONS
        if op.route != "api/command"
    ),
]
