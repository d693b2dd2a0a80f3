from django.urls import path

from pbm import views

urlpatterns = [
    path("settings/mail-password/", views.mail_password, name="mail-password"),
    path("help/mail/", views.pbmserv_help, name="pbmserv-help"),
    # pbmserv's commands over HTTP; `challenge` goes on to the lobby's table (lobby/commands.py).
    path("api/command", views.api_command, name="api-command"),
]
