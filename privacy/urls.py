from django.urls import path

from privacy import views

urlpatterns = [
    path("settings/close/", views.close, name="settings-close"),
    path("settings/export.json", views.export, name="settings-export"),
]
