"""Reporting (any signed-in player, guests too) and the moderators' pages. Views decode the
form, call one service and answer; every moderation page checks the role."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import User
from moderation import actions, reports, roles, selectors
from moderation.forms import ActionForm, DismissForm, ReportForm
from moderation.models import Action, Report
from realtime import limits
from realtime.errors import ServiceError, http_status

View = Callable[..., HttpResponse]


def moderators_only(view: View) -> View:
    """Visitors are sent to log in; signed-in players who are not moderators get a 403."""

    @login_required
    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not roles.is_moderator(request.user):
            raise PermissionDenied(_("Only moderators can see this page."))
        return view(request, *args, **kwargs)

    return checked


# --- reporting --------------------------------------------------------------------------

TARGETS = (str(Report.Kind.CHAT), str(Report.Kind.USER), str(Report.Kind.GAME))


def _asked_target(request: HttpRequest) -> tuple[str, str]:
    data = request.POST if request.method == "POST" else request.GET
    for kind in TARGETS:
        if data.get(kind):
            return kind, str(data[kind])[:40]
    raise ServiceError("bad_message", _("Report a chat line, a user or a game."))


@login_required
@require_http_methods(["GET", "POST"])
def report(request: HttpRequest) -> HttpResponse:
    """/report/?chat=<line id> | ?user=<name> | ?game=<id>: the report form, and sending it."""
    form = ReportForm(request.POST if request.method == "POST" else None)
    try:
        kind, value = _asked_target(request)
        target = reports.check_target(reporter=request.user, kind=kind, target=value)
        if request.method == "POST" and form.is_valid():
            reports.do_report(
                reporter=request.user,
                kind=kind,
                target=value,
                reason=form.cleaned_data["reason"],
                text=form.cleaned_data["text"],
                address=limits.address(request),
            )
            return render(request, "moderation/reported.html", {"target": target})
    except ServiceError as error:
        return render(
            request,
            "moderation/report.html",
            {"error": error},
            status=http_status(error.code),
        )
    return render(
        request,
        "moderation/report.html",
        {"form": form, "target": target, "kind": kind, "value": value},
        status=400 if request.method == "POST" else 200,
    )


# --- the moderators' pages --------------------------------------------------------------


@moderators_only
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "moderation/queue.html", {"reports": selectors.open_reports()})


@moderators_only
@require_GET
def report_detail(request: HttpRequest, report_id: int) -> HttpResponse:
    found = get_object_or_404(
        Report.objects.select_related("reporter", "user", "game", "line", "closed_by"),
        pk=report_id,
    )
    context = selectors.report_context(found)
    context.update(action_form=ActionForm(), dismiss_form=DismissForm(), mute=actions.MUTE_MINUTES)
    return render(request, "moderation/report_detail.html", context)


@moderators_only
@require_GET
def user_detail(request: HttpRequest, username: str) -> HttpResponse:
    player = User.objects.filter(username__iexact=username).first()
    if player is None:
        raise Http404("There is no such user.")
    context = {
        "player": player,
        "record": selectors.user_record(player),
        "mute": actions.MUTE_MINUTES,
    }
    return render(request, "moderation/user.html", context)


@moderators_only
@require_GET
def log(request: HttpRequest) -> HttpResponse:
    return render(request, "moderation/log.html", {"actions": selectors.audit_log()})


def _back(request: HttpRequest) -> HttpResponse:
    target = str(request.POST.get("next") or "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("moderation-queue")


@moderators_only
@require_POST
def act(request: HttpRequest) -> HttpResponse:
    form = ActionForm(request.POST)
    if not form.is_valid():
        messages.error(
            request,
            _("Nothing done: %(errors)s")
            % {
                "errors": " ".join(
                    f"{name}: {' '.join(errors)}" for name, errors in form.errors.items()
                )
            },
        )
        return _back(request)
    data = form.cleaned_data
    try:
        done = actions.act(
            actions.Request(
                moderator=request.user,
                kind=data["kind"],
                reason=data["reason"],
                username=data["username"] or "",
                game_id=data["game_id"],
                line_id=data["line_id"],
                minutes=data["minutes"],
                new_name=data["new_name"] or "",
                report_id=data["report_id"],
            )
        )
    except ServiceError as error:
        messages.error(request, _("Nothing done: %(errors)s") % {"errors": error.message})
        return _back(request)
    messages.success(
        request,
        _("Done: %(action)s. It is in the log.") % {"action": Action.Kind(done.kind).label.lower()},
    )
    return _back(request)


@moderators_only
@require_POST
def dismiss(request: HttpRequest, report_id: int) -> HttpResponse:
    form = DismissForm(request.POST)
    try:
        if not form.is_valid():
            raise ServiceError("reason_required", _("Write why: every action is logged."))
        reports.do_dismiss(
            moderator=request.user, report_id=report_id, reason=form.cleaned_data["reason"]
        )
    except ServiceError as error:
        messages.error(request, _("Nothing done: %(errors)s") % {"errors": error.message})
        return redirect("moderation-report", report_id=report_id)
    messages.success(request, _("Report dismissed."))
    return redirect("moderation-queue")
