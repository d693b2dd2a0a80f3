from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import blocks, views

urlpatterns = [
    path("settings/notifications/", views.notifications, name="notifications"),
    path("settings/privacy/", views.privacy, name="privacy"),
    path("signup/", views.sign_up, name="signup"),
    path("guest/", views.play_as_guest, name="guest"),
    path("login/", views.ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/blocks", blocks.blocks, name="api-blocks"),
    path("api/blocks/remove", blocks.unblock, name="api-unblock"),
    path("@<str:username>/block/", blocks.block_form, name="block"),
]
