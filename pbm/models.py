"""The mail door's records: every mail received (stored before it is acted on), every reply
and notice to send (sent once, by whoever takes it first), and the mail passwords."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class MailPassword(models.Model):
    """The password a player puts in mailed commands: never the site's, revocable, hashed."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="mail_password",
    )
    password = models.CharField(max_length=128)  # django.contrib.auth.hashers' encoding
    changed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"mail password of user {self.user_id}"


class InboundMail(models.Model):
    class Status(models.TextChoices):
        RECEIVED = "received"  # stored, not yet acted on
        ANSWERED = "answered"  # acted on; its replies are in OutboundMail
        IGNORED = "ignored"  # a robot's mail (auto-reply, bounce, list): never answered

    # The sender's Message-ID (or, without one, a digest of the mail): a mail delivered twice
    # is stored and answered once.
    message_id = models.CharField(max_length=255, unique=True)
    sender = models.CharField(max_length=254)
    recipient = models.CharField(max_length=254, blank=True, default="")
    subject = models.CharField(max_length=1000, blank=True, default="")
    body = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RECEIVED)
    note = models.CharField(max_length=200, blank=True, default="")  # why it was ignored
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "id"], name="pbm_inbound_pending")]

    def __str__(self) -> str:
        return f"{self.sender}: {self.subject[:60]}"


class OutboundMail(models.Model):
    """A reply or a notice, stored in the transaction that decided it; `sent_at` once handed
    to the outgoing mail server."""

    inbound = models.ForeignKey(InboundMail, null=True, blank=True, on_delete=models.SET_NULL)
    to = models.CharField(max_length=254)
    subject = models.CharField(max_length=300)
    body = models.TextField()
    # Fixed when stored, so a reply sent twice after a crash is one mail to the reader's client.
    message_id = models.CharField(max_length=255, unique=True)
    in_reply_to = models.CharField(max_length=255, blank=True, default="")
    reply_to = models.CharField(max_length=254, blank=True, default="")
    # Pictures to attach, [[game id, ply, language], ...]: the boards the reply shows, for a
    # reader who asked for them (User.mail_pictures). Drawn when the mail is sent.
    pictures = models.JSONField(default=list, blank=True, db_default=[])
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["sent_at", "id"], name="pbm_outbound_pending")]

    def __str__(self) -> str:
        return f"to {self.to}: {self.subject[:60]}"
