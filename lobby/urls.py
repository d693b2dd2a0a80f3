from django.urls import path
from django.views.generic import RedirectView

from lobby import views

urlpatterns = [
    path("", views.home, name="home"),
    path("live/", views.live, name="live"),
    path("tv/", views.tv, name="tv"),
    path("tv/<slug:slug>/", views.tv, name="tv-game"),
    path("api/tv", views.api_tv, name="api-tv"),
    path("@<str:username>/", views.profile, name="profile"),
    path("users/<str:username>/", RedirectView.as_view(pattern_name="profile")),
]
