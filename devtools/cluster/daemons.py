"""What every service of the cluster drill shares: a process started on a host, a directory
of its own for its configuration, logs and data, and the ways to wait for it and to stop it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from devtools.cluster.hosts import Host


class DaemonError(RuntimeError):
    pass


def answers(address: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections at `address:port`."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_until(
    ready: Callable[[], bool],
    what: str,
    seconds: float = 10.0,
    process: subprocess.Popen[Any] | None = None,
    why: Callable[[], str] = lambda: "",
) -> None:
    """Until `ready()`; DaemonError if `process` ends first or `seconds` pass (with `why()`,
    a log's tail, in the message)."""
    deadline = time.monotonic() + seconds
    while not ready():
        ended = process is not None and process.poll() is not None
        if ended or time.monotonic() > deadline:
            state = "ended" if ended else f"not ready within {seconds:g} s"
            raise DaemonError(f"{what}: {state} {why()}".rstrip())
        time.sleep(0.05)


class Daemon:
    """A process of the drill on `host`, with a directory of its own (`kind` names it)."""

    def __init__(self, host: Host, kind: str) -> None:
        self.host = host
        self.directory = Path(tempfile.mkdtemp(prefix=f"diffusion-{kind}-{host.name}-"))
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        """`argv` started on the host (output dropped unless `popen` says otherwise), in a
        session of its own: what it starts (runuser's child, nginx's workers) is killed with
        it, and holds no pipe of the drill's open after it."""
        popen.setdefault("stdout", subprocess.DEVNULL)
        self.process = subprocess.Popen(self.host.command(argv), start_new_session=True, **popen)
        return self.process

    def kill(self) -> None:
        """kill -9 the process and everything it started, as a crash would."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        """The process killed and waited for, its directory removed."""
        self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)
