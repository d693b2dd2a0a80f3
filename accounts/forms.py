from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import Circle, User


class SignUpForm(UserCreationForm):
    """Name and password; names are unique regardless of case."""

    class Meta:
        model = User
        fields = ("username",)

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(_("That name is taken."), code="taken")
        return username


class NotificationsForm(forms.Form):
    """Correspondence "your move" e-mails: whether at all (the address is changed on its own
    page, /settings/email/, and confirmed by a link)."""

    email_on_move = forms.BooleanField(
        required=False, label=gettext_lazy("E-mail me when it is my move in a correspondence game")
    )
    email_on_follow = forms.BooleanField(
        required=False,
        label=gettext_lazy(
            "E-mail me when a correspondence game I follow ends, or a player I follow starts one"
        ),
    )
    mail_pictures = forms.BooleanField(
        required=False,
        label=gettext_lazy(
            "Attach a picture of the board to the mails that show one (your move, and the "
            "mail door's replies)"
        ),
    )


class CurrentPasswordForm(forms.Form):
    """The account's password, asked again before a change that could lock its player out."""

    password = forms.CharField(
        label=gettext_lazy("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, user: User, *args: object, **kwargs: object) -> None:
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError(_("That is not your password."), code="wrong_password")
        return password


class EmailChangeForm(CurrentPasswordForm):
    email = forms.EmailField(label=gettext_lazy("New e-mail address"))

    field_order = ["email", "password"]


class CodeForm(forms.Form):
    """A code from the authenticator app, or one of the recovery codes."""

    code = forms.CharField(
        label=gettext_lazy("Code"),
        max_length=40,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "text", "autofocus": True}
        ),
    )


class CloseAccountForm(CurrentPasswordForm):
    """Closing asks for the password, and the second factor's code when it is on."""

    code = forms.CharField(
        label=gettext_lazy("Two-factor code"),
        max_length=40,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code"}),
    )
    confirm = forms.BooleanField(
        label=gettext_lazy(
            "I understand: my account closes for good, and its name cannot be used again"
        ),
    )


class ControlsForm(forms.Form):
    """The player's own controls, on top of blocks (docs/MODERATION.md)."""

    may_challenge = forms.ChoiceField(
        choices=Circle.choices, label=gettext_lazy("Who may challenge me")
    )
    may_chat = forms.ChoiceField(
        choices=Circle.choices,
        label=gettext_lazy("Whose chat I see when we play (the players' room)"),
    )
    may_follow = forms.ChoiceField(choices=Circle.choices, label=gettext_lazy("Who may follow me"))
