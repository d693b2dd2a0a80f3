from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import blocks, language, reset, settings_views, views

urlpatterns = [
    path("language/", language.choose, name="language"),
    # The client's strings in the page's language (static/js reads them through gettext()).
    path("jsi18n/<str:language>/<str:version>.js", language.catalog, name="javascript-catalog"),
    path("settings/notifications/", settings_views.notifications, name="notifications"),
    path("settings/account/", settings_views.account, name="settings-account"),
    path("settings/password/", settings_views.password, name="settings-password"),
    path("settings/email/", settings_views.email, name="settings-email"),
    path("settings/email/confirm/<str:token>/", settings_views.email_confirm, name="email-confirm"),
    path("settings/two-factor/", settings_views.two_factor, name="settings-two-factor"),
    path("settings/tokens/", settings_views.api_tokens, name="settings-tokens"),
    path("settings/privacy/", views.privacy, name="privacy"),
    path("signup/", views.sign_up, name="signup"),
    path("guest/", views.play_as_guest, name="guest"),
    path("login/", views.ThrottledLoginView.as_view(), name="login"),
    path("login/two-factor/", views.login_two_factor, name="login-two-factor"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password-reset/", reset.ResetView.as_view(), name="password-reset"),
    path("password-reset/sent/", reset.ResetSentView.as_view(), name="password-reset-sent"),
    path(
        "password-reset/<uidb64>/<token>/",
        reset.ResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path("password-reset/done/", reset.ResetDoneView.as_view(), name="password-reset-done"),
    path("api/blocks", blocks.blocks, name="api-blocks"),
    path("api/blocks/remove", blocks.unblock, name="api-unblock"),
    path("@<str:username>/block/", blocks.block_form, name="block"),
]
