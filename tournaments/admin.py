"""Staff set up recurring tournaments here (an hourly arena per game, a weekly Swiss): the
sweeper lists each one an hour before it starts (tournaments/services/clock.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from realtime.errors import ServiceError
from tournaments.models import Schedule, Tournament
from tournaments.services import creation


class ScheduleForm(forms.ModelForm):
    class Meta:
        model = Schedule
        fields = (
            "name",
            "kind",
            "slug",
            "options",
            "time_control",
            "rated",
            "minutes",
            "rounds",
            "max_players",
            "every_minutes",
            "next_at",
            "active",
        )

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        try:
            # The same checks as a player's tournament: a schedule that could not make one is
            # refused here, not an hour before its start.
            creation.check_format(
                kind=data.get("kind"),
                slug=data.get("slug"),
                options=data.get("options") or {},
                time_control=data.get("time_control") or "",
                minutes=data.get("minutes"),
                rounds=data.get("rounds"),
                max_players=data.get("max_players"),
            )
        except ServiceError as error:
            raise forms.ValidationError(error.message) from None
        return data


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = ("name", "kind", "slug", "time_control", "every_minutes", "next_at", "active")
    list_filter = ("kind", "slug", "active")


class HeldFilter(admin.SimpleListFilter):
    """Tournaments set aside because their work failed (tournaments/services/holding.py)."""

    title = "held"
    parameter_name = "held"

    def lookups(self, request: Any, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "held"), ("no", "not held")]

    def queryset(self, request: Any, queryset: Any) -> Any:
        if self.value() == "yes":
            return queryset.exclude(problem="")
        if self.value() == "no":
            return queryset.filter(problem="")
        return queryset


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "slug", "status", "starts_at", "creator", "winner", "problem")
    list_filter = (HeldFilter, "kind", "status", "slug")
    search_fields = ("name",)
    readonly_fields = ("version", "round", "winner", "first_colour", "invite_token", "problem")
    actions = ("try_again",)

    @admin.action(description="Try again: clear the problem of the held tournaments chosen")
    def try_again(self, request: Any, queryset: Any) -> None:
        # The sweeper's next pass counts their waiting results and pairs them again.
        cleared = queryset.exclude(problem="").update(problem="")
        self.message_user(request, f"{cleared} tournament(s) no longer held.")
