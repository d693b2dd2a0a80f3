"""The mail door's three steps, each safe to repeat after a crash:

1. `store`: a received mail is written down (once per Message-ID) before anything is done;
2. `process`: under a lock on its row, its commands run and their replies are stored in the
   same transaction as the mail's new status, so a mail is answered once or not at all;
3. `deliver`: stored replies go to the outgoing mail server, each taken by one sender only.

A robot's mail (RFC 3834 `Auto-Submitted`, a bounce, a mailing list, our own replies) is
stored and never answered, so two robots cannot mail each other forever.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import logging
import uuid
from email.message import EmailMessage as ParsedMail
from email.utils import parseaddr

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.language import for_user
from accounts.models import User
from games.picture_cache import picture_name, png_of
from games.reply_address import looks_like_reply_address, read_reply_address
from pbm import board, handlers
from pbm.identity import HashDue, address_of
from pbm.mailtext import body_text
from pbm.models import InboundMail, OutboundMail
from realtime import logs, metrics
from realtime.errors import is_outage
from realtime.outgoing_mail import ONE_MAIL_ERRORS

logger = logging.getLogger(__name__)

MAX_BODY_CHARS = 20_000
# Replies sent per pass of `deliver`, on one connection to the outgoing server.
DELIVER_BATCH = 50
ROBOT_SENDERS = ("mailer-daemon@", "postmaster@", "noreply@", "no-reply@")
# Pictures attached to one reply at most (a `show` of many boards shows them all as text).
MAX_PICTURES = 5


def _one_line(text: str, limit: int) -> str:
    """Header text on one line: a decoded subject may hold encoded line breaks."""
    return " ".join(str(text).split())[:limit]


def _plain_body(message: ParsedMail) -> str:
    # The plain part, or the HTML one read as text when there is no plain text (mailtext).
    return body_text(message)[:MAX_BODY_CHARS]


def robot_reason(message: ParsedMail, envelope_sender: str) -> str:
    """Why this mail must not be answered (a robot's), or "" for a person's."""
    auto = str(message.get("Auto-Submitted", "no")).strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto[:40]}"
    if not envelope_sender or envelope_sender == "<>":
        return "a bounce (empty envelope sender)"
    sender = address_of(str(message.get("From", "")) or envelope_sender)
    if sender.startswith(ROBOT_SENDERS):
        return f"a robot's address ({sender[:60]})"
    if sender == address_of(settings.PBM_ADDRESS):
        return "our own address"
    if message.get("List-Id") or message.get("List-Unsubscribe"):
        return "a mailing list"
    if str(message.get("Precedence", "")).strip().lower() in {"bulk", "list", "junk"}:
        return f"Precedence: {message.get('Precedence')}"
    return ""


def _recipient(recipients: list[str]) -> str:
    """The recipient that matters: a signed reply address (a "your move" mail answered) if
    the mail went to one, else one that only looks like one (answered as not valid), else
    the first."""
    signed = [r for r in recipients if read_reply_address(r) is not None]
    shaped = [r for r in recipients if looks_like_reply_address(r)]
    return (signed or shaped or recipients or [""])[0]


def store(raw: bytes, envelope_sender: str, recipients: list[str]) -> InboundMail | None:
    """Write a received mail down; None if it was stored before (a mail delivered twice)."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, ParsedMail)
    message_id = _one_line(str(message.get("Message-ID", "")), 255)
    if not message_id:
        message_id = "sha256:" + hashlib.sha256(raw).hexdigest()
    robot = robot_reason(message, envelope_sender)
    sender = str(message.get("Reply-To") or message.get("From") or envelope_sender)
    _name, address = parseaddr(_one_line(sender, 254))
    try:
        with transaction.atomic():
            return InboundMail.objects.create(
                message_id=message_id,
                sender=address[:254],
                recipient=_recipient(recipients)[:254],
                subject=_one_line(str(message.get("Subject", "")), 1000),
                body=_plain_body(message),
                status=InboundMail.Status.IGNORED if robot else InboundMail.Status.RECEIVED,
                note=robot[:200],
            )
    except IntegrityError:
        return None


def _message_id() -> str:
    domain = address_of(settings.PBM_ADDRESS).partition("@")[2] or "localhost"
    return f"<pbm-{uuid.uuid4().hex}@{domain}>"


def reader(sender: str, recipient: str) -> User | None:
    """Whose reply it is: the account a signed reply address names, else the one at the
    sender's address; None for a stranger."""
    signed = read_reply_address(recipient)
    user = None
    if signed is not None:
        user = User.objects.filter(pk=signed[0]).only("language", "mail_pictures").first()
    address = address_of(sender)
    if user is None and address:
        user = (
            User.objects.filter(email__iexact=address, is_active=True)
            .only("language", "mail_pictures")
            .order_by("pk")
            .first()
        )
    return user


def reader_language(sender: str, recipient: str) -> str:
    """The language of a mail's reply: its reader's account's, else English. The commands'
    words stay English whatever it is: they are pbmserv's."""
    return for_user(reader(sender, recipient))


def process(mail_id: int) -> int:
    """Run a stored mail's commands and store the replies; how many mails were stored."""
    with logs.context(), transaction.atomic():
        mail = (
            InboundMail.objects.select_for_update()
            .filter(pk=mail_id, status=InboundMail.Status.RECEIVED)
            .first()
        )
        if mail is None:
            return 0  # answered already, or a robot's
        # The lines logged while it is answered name the mail (and its user, once checked).
        logs.add(mail=mail.message_id)
        # Answered in its sender's language; the mails to other players (reply.notices) are
        # written in theirs by the handlers. The boards the reply shows are attached as
        # pictures too for a reader who asked for them.
        who = reader(mail.sender, mail.recipient)
        with translation.override(for_user(who)), board.shown() as boards:
            try:
                reply = handlers.answer(mail.subject, mail.body, mail.sender, mail.recipient)
            except HashDue:
                raise  # a password's hash first, away from this transaction (pbm/smtp.py)
            except Exception as error:
                if is_outage(error):
                    raise  # the database is away: the mail stays stored and is answered later
                # A bug: answered (once) with the documented code, rather than retried forever.
                logger.exception("mail %s could not be answered; it gets server_error", mail.pk)
                reply = handlers.refusal(
                    "server_error",
                    _(
                        "Something went wrong on our side, and it is logged. Nothing was "
                        "changed: send the command again later."
                    ),
                    mail.subject,
                )
        outgoing = [
            OutboundMail(
                inbound=mail,
                to=mail.sender,
                subject=_one_line(reply.subject, 300),
                body=reply.text,
                message_id=_message_id(),
                in_reply_to=mail.message_id,
                pictures=[[game, ply, for_user(who)] for game, ply in boards[:MAX_PICTURES]]
                if who is not None and who.mail_pictures and reply.ok
                else [],
            )
        ]
        outgoing += [
            OutboundMail(
                inbound=mail,
                to=notice.user.email,
                subject=_one_line(notice.subject, 300),
                body=notice.body,
                message_id=_message_id(),
            )
            for notice in reply.notices
            if notice.user.email
        ]
        OutboundMail.objects.bulk_create(outgoing)
        mail.status = InboundMail.Status.ANSWERED
        mail.answered_at = timezone.now()
        mail.save(update_fields=["status", "answered_at"])
    return len(outgoing)


def pending_mails(limit: int = 200) -> list[tuple[int, str]]:
    """(id, sender) of the stored mails not yet answered, oldest first."""
    return list(
        InboundMail.objects.filter(status=InboundMail.Status.RECEIVED)
        .order_by("pk")
        .values_list("pk", "sender")[:limit]
    )


def _as_email(row: OutboundMail) -> EmailMessage:
    headers = {
        "Message-ID": row.message_id,
        # RFC 3834: a robot's reply; mail programs and other robots do not answer it.
        "Auto-Submitted": "auto-replied" if row.in_reply_to else "auto-generated",
    }
    if row.in_reply_to:
        headers["In-Reply-To"] = row.in_reply_to
        headers["References"] = row.in_reply_to
    message = EmailMessage(
        subject=row.subject,
        body=row.body,
        from_email=settings.PBM_ADDRESS,
        to=[row.to],
        reply_to=[row.reply_to or settings.PBM_ADDRESS],
        headers=headers,
    )
    for game_id, ply, language in row.pictures:
        with translation.override(language):  # what the picture says: the reader's language
            png = png_of(int(game_id), int(ply))
        if png is not None:  # a game deleted since: its text board is still in the mail
            message.attach(picture_name(int(game_id), int(ply)), png, "image/png")
    return message


class OutgoingServerFailed(Exception):
    """The outgoing mail server took no more mail (unreachable, or refusing every mail: its
    error is the cause); the replies not sent stay stored, their attempts not counted."""


def deliver(limit: int = DELIVER_BATCH) -> int:
    """Hand stored replies to the outgoing mail server; how many went. OutgoingServerFailed
    (after the ones that went are recorded) if the server failed rather than one mail."""
    sent = 0
    failure: OSError | None = None
    with transaction.atomic():
        rows = list(
            OutboundMail.objects.select_for_update(skip_locked=True)
            .filter(sent_at__isnull=True, attempts__lt=settings.PBM_SEND_ATTEMPTS)
            .order_by("pk")[:limit]
        )
        if not rows:
            return 0
        connection = get_connection()
        try:
            connection.open()
            for row in rows:
                try:
                    connection.send_messages([_as_email(row)])
                except ONE_MAIL_ERRORS as error:  # this mail's recipient or content
                    metrics.MAILS.labels("pbm", "failed").inc()
                    logger.warning("mail to %s not sent yet (%s)", row.to, error)
                    row.attempts += 1
                    row.save(update_fields=["attempts"])
                    continue
                row.sent_at = timezone.now()
                row.save(update_fields=["sent_at"])
                sent += 1
                metrics.MAILS.labels("pbm", "sent").inc()
        except OSError as error:
            metrics.MAILS.labels("pbm", "failed").inc(len(rows) - sent)
            failure = error
        finally:
            connection.close()
    if failure is not None:
        raise OutgoingServerFailed(str(failure)) from failure
    return sent
