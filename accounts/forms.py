from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from accounts.models import Circle, User


class SignUpForm(UserCreationForm):
    """Name and password; names are unique regardless of case."""

    class Meta:
        model = User
        fields = ("username",)

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That name is taken.", code="taken")
        return username


class NotificationsForm(forms.Form):
    """Correspondence "your move" e-mails: where to, and whether at all."""

    email = forms.EmailField(required=False, label="E-mail address")
    email_on_move = forms.BooleanField(
        required=False, label="E-mail me when it is my move in a correspondence game"
    )
    email_on_follow = forms.BooleanField(
        required=False,
        label="E-mail me when a correspondence game I follow ends, or a player I follow starts one",
    )


class ControlsForm(forms.Form):
    """The player's own controls, on top of blocks (docs/MODERATION.md)."""

    may_challenge = forms.ChoiceField(choices=Circle.choices, label="Who may challenge me")
    may_chat = forms.ChoiceField(
        choices=Circle.choices, label="Whose chat I see when we play (the players' room)"
    )
    may_follow = forms.ChoiceField(choices=Circle.choices, label="Who may follow me")
