"""The Bot API's bot accounts (docs/API.md, "Bot accounts")."""

from django.urls import path

from botapi import accounts

urlpatterns = [
    path("api/bot/account/upgrade", accounts.upgrade, name="api-bot-upgrade"),
]
