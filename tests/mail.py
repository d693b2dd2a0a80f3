"""Mail for tests, through real SMTP: `manage.py mailserver` as its own process, an aiosmtpd
sink as the outgoing mail server, and smtplib as the players' mail programs."""

from __future__ import annotations

import os
import signal
import smtplib
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from devtools.servers import wait_for_smtp
from tests.servers import background, free_port, migrated_scratch_database

WAIT_SECONDS = 20.0


class Sink:
    """The outgoing mail server: keeps every mail handed to it."""

    def __init__(self) -> None:
        self.mails: list[EmailMessage] = []
        self.replies: dict[str, EmailMessage] = {}  # by In-Reply-To, read once on arrival
        self.arrived = threading.Condition()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        mail = message_from_bytes(
            envelope.original_content or envelope.content, policy=policy.default
        )
        assert isinstance(mail, EmailMessage)
        mail["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        answering = str(mail["In-Reply-To"] or "")
        with self.arrived:
            self.mails.append(mail)
            if answering:
                self.replies.setdefault(answering, mail)
            self.arrived.notify_all()
        return "250 OK"

    def reply_to(self, message_id: str, timeout: float = WAIT_SECONDS) -> EmailMessage:
        """The answer to the mail sent with `message_id`."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while message_id not in self.replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no answer to {message_id} within {timeout} s")
                self.arrived.wait(left)
            return self.replies[message_id]

    def wait_for(self, match: Any, timeout: float = WAIT_SECONDS) -> EmailMessage:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                found = [mail for mail in self.mails if match(mail)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    subjects = [str(m["Subject"]) for m in self.mails[-10:]]
                    raise AssertionError(f"no such mail within {timeout} s; the last: {subjects}")
                self.arrived.wait(left)

    def to(self, address: str) -> list[EmailMessage]:
        with self.arrived:
            return [m for m in self.mails if address in str(m["X-Envelope-To"])]


class MailSite:
    def __init__(self, port: int, sink: Sink, log: Path, start: Any) -> None:
        self.port = port
        self.sink = sink
        self.log = log
        self._start = start  # starts `manage.py mailserver` again (after `kill`)
        self.process = start()

    def kill(self) -> None:
        """kill -9 the mail server, as a crash or a power cut would."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        self.process = self._start()

    def send(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        headers: dict[str, str] | None = None,
        envelope_sender: str | None = None,
        message_id: str | None = None,
        to: str | None = None,
    ) -> str:
        """Mail the server; the Message-ID sent."""
        mail = EmailMessage()
        mail["From"] = sender
        mail["To"] = to or "pbm@localhost"
        mail["Subject"] = subject
        mail["Message-ID"] = message_id or f"<{uuid.uuid4().hex}@players.test>"
        for name, value in (headers or {}).items():
            mail[name] = value
        mail.set_content(body or "\n")
        with smtplib.SMTP("127.0.0.1", self.port, timeout=10) as smtp:
            smtp.send_message(
                mail, from_addr=sender if envelope_sender is None else envelope_sender
            )
        return str(mail["Message-ID"])

    def ask(self, sender: str, subject: str, body: str = "") -> EmailMessage:
        """Mail a command and wait for its reply."""
        return self.sink.reply_to(self.send(sender, subject, body))

    def send_many(self, mails: list[tuple[str, str]]) -> list[str]:
        """(sender, subject) mails sent on one connection, as fast as SMTP goes: Message-IDs."""
        sent = []
        with smtplib.SMTP("127.0.0.1", self.port, timeout=10) as smtp:
            for sender, subject in mails:
                mail = EmailMessage()
                mail["From"], mail["To"], mail["Subject"] = sender, "pbm@localhost", subject
                mail["Message-ID"] = f"<{uuid.uuid4().hex}@players.test>"
                mail.set_content("\n")
                smtp.send_message(mail)
                sent.append(str(mail["Message-ID"]))
        return sent

    def output(self) -> str:
        logs = sorted(self.log.parent.glob("mailserver*.log"))
        return "".join(path.read_text(errors="replace") for path in logs)


def text_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


@contextmanager
def mail_site(
    directory: Path, database_url: str | None = None, **env: str | None
) -> Iterator[MailSite]:
    """The mail door on a database of its own (or on `database_url`, a web site's), replying
    through a sink."""
    sink = Sink()
    sink_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=sink_port)
    controller.start()
    port = free_port()
    try:
        with ExitStack() as stack:
            url = database_url or stack.enter_context(migrated_scratch_database(directory))
            log = directory / "mailserver.log"
            settings: dict[str, str | None] = {
                "DATABASE_URL": url,
                "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "REDIS_URL": None,
                "EMAIL_HOST": "127.0.0.1",
                "EMAIL_PORT": str(sink_port),
                "EMAIL_USE_TLS": "0",
                "PBM_SMTP_PORT": str(port),
                "PBM_ADDRESS": "Diffusion <pbm@localhost>",
                **env,
            }
            # The sweeper sends the "your move" mails, as in `make run`.
            sweeper = [sys.executable, "manage.py", "sweeper"]
            stack.enter_context(background(sweeper, settings, directory / "sweeper.log"))
            starts = iter(range(1, 100))

            def start() -> Any:
                number = next(starts)
                name = "mailserver.log" if number == 1 else f"mailserver-{number}.log"
                command = [sys.executable, "manage.py", "mailserver"]
                process = stack.enter_context(background(command, settings, directory / name))
                wait_for_smtp(port, process, directory / name)
                return process

            yield MailSite(port, sink, log, start)
    finally:
        controller.stop()
