from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from lobby import views

urlpatterns = [
    path("", views.home, name="home"),
    path("live/", views.live, name="live"),
    path("settings/notifications/", views.notifications, name="notifications"),
    path("@<str:username>/", views.profile, name="profile"),
    path("users/<str:username>/", RedirectView.as_view(pattern_name="profile")),
    path("signup/", views.sign_up, name="signup"),
    path("guest/", views.play_as_guest, name="guest"),
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
