from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy

from moderation.actions import MUTE_MINUTES
from moderation.models import Action, Report


class ReportForm(forms.Form):
    reason = forms.ChoiceField(
        choices=Report.Reason.choices, widget=forms.RadioSelect, label=gettext_lazy("Reason")
    )
    text = forms.CharField(
        required=False,
        max_length=500,
        label=gettext_lazy("What happened (optional)"),
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class ActionForm(forms.Form):
    """One moderator's action; the service checks the fields the action needs."""

    kind = forms.ChoiceField(choices=[c for c in Action.Kind.choices if c[0] != "dismiss"])
    reason = forms.CharField(
        max_length=500, label=gettext_lazy("Reason (logged; shown to the user)")
    )
    username = forms.CharField(required=False, max_length=40)
    game_id = forms.IntegerField(required=False, min_value=1)
    line_id = forms.IntegerField(required=False, min_value=1)
    minutes = forms.TypedChoiceField(
        required=False, coerce=int, choices=list(MUTE_MINUTES.items()), empty_value=None
    )
    new_name = forms.CharField(required=False, max_length=40)
    report_id = forms.IntegerField(required=False, min_value=1)


class DismissForm(forms.Form):
    reason = forms.CharField(max_length=500, label=gettext_lazy("Why dismiss it"))
