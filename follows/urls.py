from django.urls import path

from follows import views

urlpatterns = [
    path("api/follows", views.follows, name="api-follows"),
    path("api/follows/unfollow", views.unfollow, name="api-unfollow"),
    path("settings/follow/", views.follow_form, name="follow"),
]
