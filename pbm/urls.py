from django.urls import path

from pbm import views

urlpatterns = [
    path("settings/mail-password/", views.mail_password, name="mail-password"),
    path("help/mail/", views.pbmserv_help, name="pbmserv-help"),
]
