"""The Bot API's description (docs/openapi.json, served as the code makes it) and the
developers' pages, which render docs/API.md and docs/BOTS.md."""

from django.urls import path

from botapi import developers, openapi

urlpatterns = [
    path("api/openapi.json", openapi.openapi_json, name="api-openapi"),
    path("developers/", developers.index, name="developers"),
    path("developers/api/", developers.api_page, name="developers-api"),
    path("developers/bots/", developers.bots_page, name="developers-bots"),
]
