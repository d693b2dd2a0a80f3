from django.urls import path

from push import views

urlpatterns = [
    path("api/push/key", views.public_key, name="api-push-key"),
    path("api/push/subscriptions", views.subscription, name="api-push-subscriptions"),
    path("api/push/kinds", views.kinds, name="api-push-kinds"),
    path("settings/push/", views.settings_form, name="push-settings"),
    path("sw.js", views.service_worker, name="service-worker"),
    path("manifest.webmanifest", views.manifest, name="manifest"),
]
