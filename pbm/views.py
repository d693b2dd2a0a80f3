"""The mail door's pages: the mail password (set, rotate, revoke) and the commands' help;
and pbmserv's commands over HTTP, `POST /api/command`, answered by the mail door's handlers."""

from __future__ import annotations

from pathlib import Path

import markdown
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.language import in_language
from lobby import commands as lobby_commands
from lobby import protocol as lobby_protocol
from pbm import handlers, identity
from pbm.grammar import BadCommand, is_challenge
from pbm.models import MailPassword
from realtime.api_errors import refuse
from realtime.errors import ServiceError, http_status
from realtime.protocol import decode, decoder, encode

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


_COMMAND_BODY = decoder(lobby_protocol.CommandBody)


@require_POST
def api_command(request: HttpRequest) -> HttpResponse:
    """`POST /api/command` `{"text"}`: a pbmserv command over HTTP, signed in as for the rest
    of the API. A read command (handlers.read) answers as the mail door does, its reply's
    subject and text as JSON; `challenge` stays the lobby's operation (lobby/commands.py,
    which the lobby socket's `command` shares) and answers `{"challenge"}`."""
    try:
        text = decode(request.body or b"{}", _COMMAND_BODY).text
        if is_challenge(text):
            message = lobby_protocol.Command(text=text)
            done = lobby_commands.run(request.user, message, socket=False)
            return HttpResponse(encode(done.answer), content_type="application/json")
        lobby_commands.signed_in(request.user)
        reply = handlers.read(text)
    except BadCommand as error:
        # The mail's refusal, with the command's right form in a field of its own.
        refused = {"code": error.code, "message": error.message}
        if error.form:
            refused["form"] = error.form
        return JsonResponse({"error": refused}, status=http_status(error.code))
    except ServiceError as error:
        return refuse(error)
    return JsonResponse({"subject": reply.subject, "text": reply.text})
