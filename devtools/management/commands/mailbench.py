"""The mail door under load: mailed commands through the real SMTP listener, answered through a
real outgoing SMTP server, on PostgreSQL and Redis; prints its figures.

    python -m devtools mailbench [--commands 1000] [--seconds 60] [--players 40]

`manage.py mailserver` runs as its own process on this environment's database and Redis; this
command is the players' mail programs (one SMTP connection a mail, as a mail server would) and
the outgoing mail server (an aiosmtpd sink). The commands are paced evenly over `--seconds`:
moves in games between the players (each game's next move mailed once the last is answered,
with `#MOVENO`), and otherwise `show`, `games` and `list`. Figures: from the listener's 250
(the mail stored) to the reply handed to the outgoing server, p50 / p99 / max, for all the
mails and apart for the cold ones (each player's first move, whose mail password the server
checks with its slow hash), the ones behind them (mailed by a player whose first move was not
answered yet: a sender's mails are answered in order) and the warm ones (every other); mails
lost (no answer 30 s after the last was sent) and doubled (two different answers to one mail).
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import smtplib
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from devtools.servers import free_port, percentile, process_cpu_seconds, wait_for_smtp
from games.engine import client_moves, pick_client_move
from games.rules import get_rules
from games.services import create_game
from pbm.identity import set_mail_password

SLUG = "zigzag"
LATE_SECONDS = 30.0


class Sink:
    """The outgoing mail server: when each answer arrived, by the mail it answers."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.answers: dict[str, list[tuple[float, str, str]]] = {}

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        arrived = time.monotonic()
        mail = message_from_bytes(
            envelope.original_content or envelope.content, policy=policy.default
        )
        answering = str(mail["In-Reply-To"] or "")
        if answering:
            with self.lock:
                self.answers.setdefault(answering, []).append(
                    (arrived, str(mail["Message-ID"]), str(mail["Subject"]))
                )
                self.lock.notify_all()
        return "250 OK"

    def wait(self, message_id: str, timeout: float) -> tuple[float, str, str] | None:
        deadline = time.monotonic() + timeout
        with self.lock:
            while message_id not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)
            return self.answers[message_id][0]


class Table:
    """One game between two bench players, played by mail one move at a time."""

    def __init__(self, game_id: int, seats: dict[int, tuple[str, str]], seed: int) -> None:
        self.game_id = game_id
        self.seats = seats  # seat -> (user name, address)
        self.rules = get_rules(SLUG)
        self.state = self.rules.initial_state()
        self.number = 0
        self.busy = False
        self.rng = random.Random(seed)

    @property
    def over(self) -> bool:
        return self.rules.outcome(self.state) is not None

    def next_command(self, password: str) -> tuple[str, str, str]:
        """(sender, subject, the move) for the next move."""
        move = pick_client_move(client_moves(self.rules, self.state), self.rng)
        name, address = self.seats[self.rules.to_move(self.state)]
        subject = f"{SLUG} move {self.game_id} {name} {password} {move}#{self.number + 1}"
        return address, subject, move


class Command(BaseCommand):
    help = "The mail door's latency and loss under a steady stream of mailed commands."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--commands", type=int, default=1000)
        parser.add_argument("--seconds", type=float, default=60.0)
        parser.add_argument("--players", type=int, default=40)
        parser.add_argument("--profile", help="write the mail server's cProfile output here")

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") or not settings.REDIS_URL:
            raise CommandError(
                "The figures are for production's shape: set DATABASE_URL and REDIS_URL."
            )
        run = secrets.token_hex(3)
        password = f"bench-{run}"
        tables = self.prepare(run, password, options["players"])
        sink = Sink()
        outgoing = Controller(sink, hostname="127.0.0.1", port=free_port())
        outgoing.start()
        port = free_port()
        log = Path(tempfile.mkstemp(prefix="mailbench-", suffix=".log")[1])
        env = {
            **os.environ,
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(outgoing.port),
            "EMAIL_USE_TLS": "0",
            "PBM_SMTP_PORT": str(port),
        }
        with log.open("wb") as out:
            profile = ["-m", "cProfile", "-o", options["profile"]] if options["profile"] else []
            server = subprocess.Popen(
                [sys.executable, *profile, "manage.py", "mailserver"],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            try:
                wait_for_smtp(port, server, log)
            except RuntimeError as error:
                raise CommandError(str(error)) from None
            cpu_before = process_cpu_seconds(server.pid)
            figures = self.drive(port, sink, tables, password, options)
            cpu = process_cpu_seconds(server.pid) - cpu_before
        finally:
            server.send_signal(signal.SIGINT)  # a clean stop (cProfile writes its file)
            server.wait(timeout=20)
            outgoing.stop()
        self.report(figures, cpu, log)

    def prepare(self, run: str, password: str, players: int) -> list[Table]:
        users = []
        for n in range(players - players % 2):
            user = User.objects.create_user(
                f"mb{run}{n}"[:20], email=f"mb{run}{n}@bench.test", password=None
            )
            set_mail_password(user, password)
            users.append(user)
        tables = []
        for n in range(0, len(users), 2):
            game = create_game(slug=SLUG, options={}, player1=users[n], player2=users[n + 1])
            seats = {
                1: (users[n].username, users[n].email),
                2: (users[n + 1].username, users[n + 1].email),
            }
            tables.append(Table(game.pk, seats, seed=n))
        return tables

    def drive(
        self, port: int, sink: Sink, tables: list[Table], password: str, options: dict[str, Any]
    ) -> dict[str, Any]:
        count, seconds = options["commands"], options["seconds"]
        accepted: dict[str, float] = {}
        cold: set[str] = set()  # each player's first mail with its password: hashed
        behind: set[str] = set()  # mailed while its sender's cold mail was unanswered
        proven: set[str] = set()
        proving: set[str] = set()  # senders whose cold mail is unanswered
        refused: list[str] = []
        moves = reads = 0
        lock = threading.Lock()
        rng = random.Random(1)

        def send(sender: str, subject: str, *, first: bool = False) -> str | None:
            mail = EmailMessage()
            mail["From"], mail["To"], mail["Subject"] = sender, settings.PBM_ADDRESS, subject
            mail["Message-ID"] = f"<{secrets.token_hex(12)}@bench.test>"
            mail.set_content("\n")
            try:
                with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
                    smtp.send_message(mail)
            except (OSError, smtplib.SMTPException) as error:
                with lock:
                    refused.append(f"{subject}: {error}")
                return None
            with lock:
                accepted[str(mail["Message-ID"])] = time.monotonic()
                if first:
                    cold.add(str(mail["Message-ID"]))
                elif sender in proving:
                    behind.add(str(mail["Message-ID"]))
            return str(mail["Message-ID"])

        def play(table: Table) -> None:
            sender, subject, move = table.next_command(password)
            with lock:
                first = sender not in proven
                proven.add(sender)
                if first:
                    proving.add(sender)
            sent = send(sender, subject, first=first)
            answer = sink.wait(sent, LATE_SECONDS) if sent else None
            with lock:
                proving.discard(sender)
            if answer is not None and answer[2].endswith(f"played {move}"):
                table.state = table.rules.play(table.state, move)
                table.number += 1
            table.busy = False

        def read() -> None:
            table = rng.choice(tables)
            name, address = table.seats[1]
            subject = rng.choice([f"{SLUG} show {table.game_id}", f"{SLUG} games {name}", "list"])
            send(address, subject)

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(tables) + 8) as pool:
            for n in range(count):
                due = started + n * seconds / count
                time.sleep(max(0.0, due - time.monotonic()))
                idle = [t for t in tables if not t.busy and not t.over]
                if idle and rng.random() < 0.75:
                    table = rng.choice(idle)
                    table.busy = True
                    pool.submit(play, table)
                    moves += 1
                else:
                    pool.submit(read)
                    reads += 1
            sending = time.monotonic() - started
        latencies, lost, doubled = [], 0, 0
        colds: list[float] = []
        behinds: list[float] = []
        warms: list[float] = []
        for message_id, at in accepted.items():
            answer = sink.wait(message_id, LATE_SECONDS)
            if answer is None:
                lost += 1
                continue
            latencies.append((answer[0] - at) * 1000)
            if message_id in cold:
                colds.append(latencies[-1])
            else:
                (behinds if message_id in behind else warms).append(latencies[-1])
            if len({reply_id for _, reply_id, _ in sink.answers[message_id]}) > 1:
                doubled += 1
        return {
            "sent": count,
            "accepted": len(accepted),
            "refused": refused,
            "moves": moves,
            "reads": reads,
            "sending": sending,
            "latencies": latencies,
            "cold": colds,
            "behind": behinds,
            "warm": warms,
            "lost": lost,
            "doubled": doubled,
            "moves_played": sum(t.number for t in tables),
        }

    def report(self, figures: dict[str, Any], cpu: float, log: Path) -> None:
        def spread(latencies: list[float]) -> str:
            p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
            most = max(latencies, default=float("nan"))
            return f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {most:.0f} ms"

        self.stdout.write(
            f"mail door on PostgreSQL + Redis: {figures['sent']:,} commands in "
            f"{figures['sending']:.0f} s ({figures['moves']} moves, {figures['reads']} reads); "
            f"accepted {figures['accepted']:,}, refused at SMTP {len(figures['refused'])}\n"
            f"stored -> reply handed to the outgoing server: {spread(figures['latencies'])}\n"
            f"  cold, {len(figures['cold'])} mails (a player's first move: its password "
            f"hashed): {spread(figures['cold'])}\n"
            f"  behind them, {len(figures['behind'])} mails (their sender's first move not "
            f"answered yet): {spread(figures['behind'])}\n"
            f"  warm, {len(figures['warm'])} mails (every other): {spread(figures['warm'])}\n"
            f"lost {figures['lost']}, doubled {figures['doubled']}; moves played "
            f"{figures['moves_played']}; the mail server's CPU {cpu:.1f} s "
            f"({cpu / max(figures['accepted'], 1) * 1000:.0f} ms a command)\n"
            f"log: {log}"
        )
        for line in figures["refused"][:5]:
            self.stdout.write(f"  refused: {line}")
        if "Traceback" in log.read_text(errors="replace"):
            self.stdout.write("tracebacks in the mail server's log: see the log")
