"""Players: the bottom of the app tree (games and the lobby build on accounts)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser, UserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Cast, Lower, Upper
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.usernames import validate_username


def is_retired(name: str) -> bool:
    """Whether `name` was a closed account's, in any case."""
    return RetiredName.objects.filter(name__iexact=name).exists()


def validate_not_retired(value: str) -> None:
    """Every sign-up and rename passes the name field's validators: the sign-up form's, the
    admin's; the mail door's sign-up asks is_retired itself."""
    if is_retired(value):
        # Said as for any taken name: that the account was closed is nobody else's business.
        raise ValidationError(_("That name is taken."), code="retired_username")


class Circle(models.TextChoices):
    """Who may do something to a player (challenge them, chat with them, follow them)."""

    EVERYONE = "everyone", gettext_lazy("Everyone")
    FOLLOWED = "followed", gettext_lazy("People I follow")
    NOBODY = "nobody", gettext_lazy("Nobody")


def _circle() -> models.CharField:
    return models.CharField(
        max_length=8, choices=Circle.choices, default=Circle.EVERYONE, db_default=Circle.EVERYONE
    )


class User(AbstractUser):
    """A player. Guests are real accounts with a generated name and no password."""

    username = models.CharField(
        gettext_lazy("username"),
        max_length=20,
        unique=True,
        validators=[validate_username, validate_not_retired],
        help_text=gettext_lazy("3 to 20 letters, digits, '_' or '-', starting with a letter."),
        error_messages={"unique": gettext_lazy("That name is taken.")},
    )
    is_guest = models.BooleanField(default=False)
    # Correspondence: "your move" e-mails when no socket of theirs is on the game.
    email_on_move = models.BooleanField(default=True)
    # Correspondence players may also hear of followed games and players by e-mail.
    email_on_follow = models.BooleanField(default=False, db_default=False)
    # Mails that show a board (your move, replies to the mail door) attach its picture too.
    mail_pictures = models.BooleanField(default=False, db_default=False)
    # The computer's accounts (bots/): they play through the services like anyone else.
    is_bot = models.BooleanField(default=False, db_default=False)
    # A new or changed address waits here until its link is opened (accounts/emails.py): the
    # mails keep going to `email` meanwhile, and the pending one gets nothing but its link.
    pending_email = models.EmailField(blank=True, default="", db_default="")
    # When `email` was proven by its link; None for an address set before links existed, or
    # by the mail door's `change address` (docs/ACCOUNTS.md says what each is used for).
    email_confirmed_at = models.DateTimeField(null=True, blank=True)
    # Closed accounts (privacy/closure.py) keep their games under a neutral name.
    closed_at = models.DateTimeField(null=True, blank=True)
    # The player's own controls (docs/MODERATION.md), on top of blocks: who may challenge
    # them, whose lines they see in the players' room, who may follow them.
    may_challenge = _circle()
    may_chat = _circle()
    may_follow = _circle()
    # Restrictions a moderator sets (moderation/): kept here so that games and the lobby,
    # which enforce them, need not import the app above them.
    chat_muted_until = models.DateTimeField(null=True, blank=True)
    rated_forbidden = models.BooleanField(default=False, db_default=False)
    # The language chosen with the switcher (a code of settings.LANGUAGES), or "" for the
    # browser's: pages, socket messages and the e-mails sent to them (accounts/language.py).
    language = models.CharField(max_length=8, blank=True, default="", db_default="")
    # A bot account (docs/BOTS.md): an outside program plays as it through the Bot API. Set
    # once, when an account with no games is upgraded, and never cleared. Not the computer's
    # accounts (is_bot), which the site's own worker plays.
    bot_since = models.DateTimeField(null=True, blank=True)

    objects = UserManager()

    class Meta:
        constraints = [
            # "Alice" and "alice" are one player to the people who read the names.
            models.UniqueConstraint(Lower("username"), name="lobby_user_username_ci_unique"),
        ]
        indexes = [
            # What Django's `username__iexact` compares (UPPER of the name as text), which the
            # lower() of the constraint above does not answer: a name looked up any case (a
            # challenge, a mail command, a report, a sign-up's check) reads one index entry,
            # not every account.
            models.Index(
                Upper(Cast("username", output_field=models.TextField())),
                name="accounts_user_name_any_case",
            ),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def is_bot_account(self) -> bool:
        return self.bot_since is not None


class Block(models.Model):
    """`blocker` wants nothing from `blocked`: no challenges, no chat lines."""

    blocker = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocks")
    blocked = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocked_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="accounts_block_once"),
            models.CheckConstraint(
                condition=~models.Q(blocker=models.F("blocked")), name="accounts_block_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.blocker_id} blocks {self.blocked_id}"


class TwoFactor(models.Model):
    """A player's authenticator (TOTP, RFC 6238): on once `confirmed_at` is set, after a right
    code; until then a setup in progress that sign-in ignores."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="two_factor")
    # Base32, as authenticator apps take it. The app must compute the same codes, so it is
    # kept as such (a database dump holds it: docs/SECURITY.md).
    secret = models.CharField(max_length=64)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # The time step of the last code accepted: a code is good once (no replay within its
    # 30 seconds), and never for an older step.
    last_step = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"two-factor of {self.user_id} ({'on' if self.confirmed_at else 'setting up'})"


class RecoveryCode(models.Model):
    """One single-use code that stands in for the authenticator; only its keyed hash is kept."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="recovery_codes")
    digest = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "digest"])]

    def __str__(self) -> str:
        return f"recovery code of {self.user_id}{' (used)' if self.used_at else ''}"


class RetiredName(models.Model):
    """A name nobody may take again, whatever its case: a closed account's, or an offensive
    one a moderator replaced."""

    name = models.CharField(max_length=150)
    # The account that bore it, now under its neutral name.
    user = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="retired_names"
    )
    reason = models.CharField(max_length=200, blank=True)
    # The moderator who closed the account or replaced the name; None when its player closed it.
    closed_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    retired_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("name"), name="accounts_retired_name_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class ApiToken(models.Model):
    """A personal access token (accounts/tokens.py): a program acts for the account with the
    scopes its owner gave it. Only the secret's SHA-256 is kept: the secret is shown once."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=60)
    digest = models.CharField(max_length=64, unique=True)
    # The secret's last characters, so that its owner can tell their tokens apart.
    hint = models.CharField(max_length=8)
    scopes = models.CharField(max_length=100)  # space-separated names of tokens.SCOPES
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Why: "owner", "password", "closed", "moderator" (tokens.REVOKED).
    revoked_why = models.CharField(max_length=20, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["user", "revoked_at"], name="accounts_token_live")]

    def __str__(self) -> str:
        return f"{self.name} (…{self.hint})"
