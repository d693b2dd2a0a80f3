from django.urls import path

from moderation import views

urlpatterns = [
    path("report/", views.report, name="report"),
    path("moderation/", views.queue, name="moderation-queue"),
    path("moderation/reports/<int:report_id>/", views.report_detail, name="moderation-report"),
    path("moderation/reports/<int:report_id>/dismiss", views.dismiss, name="moderation-dismiss"),
    path("moderation/@<str:username>/", views.user_detail, name="moderation-user"),
    path("moderation/act", views.act, name="moderation-act"),
    path("moderation/log/", views.log, name="moderation-log"),
]
