"""The mail door's pages: the mail password (set, rotate, revoke) and the commands' help."""

from __future__ import annotations

from pathlib import Path

import markdown
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.language import in_language
from pbm import identity
from pbm.models import MailPassword
from realtime.errors import ServiceError

HELP_PAGE = Path(settings.BASE_DIR) / "docs" / "PBMSERV.md"


@require_POST
@login_required
def mail_password(request: HttpRequest) -> HttpResponse:
    """Set (or rotate) one's mail password, or revoke it: mailed commands then fail."""
    if request.POST.get("action") == "revoke":
        MailPassword.objects.filter(user=request.user).delete()
        messages.success(request, _("Mail commands are off: no mail password works now."))
    else:
        try:
            identity.set_mail_password(request.user, str(request.POST.get("mail_password", "")))
            messages.success(request, _("Your mail password is set."))
        except ServiceError as error:
            messages.error(request, error.message)
    return redirect("profile", username=request.user.username)


@require_GET
def pbmserv_help(request: HttpRequest) -> HttpResponse:
    """docs/PBMSERV.md as a page: every command, with an example mail and its answer."""
    text = in_language(HELP_PAGE).read_text()
    html = markdown.markdown(text, extensions=["tables", "fenced_code"])
    # The mails and tables scroll sideways in their own box on a phone: reachable by keyboard.
    html = html.replace("<pre>", '<pre tabindex="0">').replace("<table>", '<table tabindex="0">')
    return render(request, "pbm/help.html", {"content": html, "address": settings.PBM_ADDRESS})
