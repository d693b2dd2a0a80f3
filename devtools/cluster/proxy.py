"""nginx in front of the drill's web processes: Debian's nginx on a host of its own, running
the site's part of the configuration the Docker shape ships (docker/nginx-site.conf, the same
file) over an upstream of the drill's processes.

Health: open-source nginx checks nothing by itself (active health checks are NGINX Plus's);
it only passes a failed connection on to the next process. So a checker asks each process's
/readyz every CHECK_SECONDS and, when the set of ready processes changes, writes the upstream
again with the others marked `down` and reloads nginx (gracefully: the sockets open through
the old workers stay open). A process that drains for a deploy (/readyz 503) gets no new
connections within a check; a host cut off, within a check plus its timeout.
"""

from __future__ import annotations

import subprocess
import threading
import urllib.request
from pathlib import Path

from devtools.cluster.daemons import Daemon, answers, wait_until
from devtools.cluster.hosts import Host

SITE = Path(__file__).resolve().parents[2] / "docker" / "nginx-site.conf"
PORT = 80  # as docker/nginx-site.conf listens: the proxy has its host to itself
CHECK_SECONDS = 0.5
CHECK_TIMEOUT = 1.0


class ProxyError(RuntimeError):
    pass


def ready(address: str, port: int) -> bool:
    """Whether the process at `address:port` says it should get traffic (/readyz 200)."""
    try:
        with urllib.request.urlopen(
            f"http://{address}:{port}/readyz", timeout=CHECK_TIMEOUT
        ) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


class Proxy(Daemon):
    def __init__(self, host: Host, upstreams: list[tuple[str, int]]) -> None:
        super().__init__(host, "nginx")
        self.upstreams = upstreams
        self.up = set(upstreams)
        self._stop = threading.Event()
        self._checker: threading.Thread | None = None
        self.reloads = 0

    @property
    def url(self) -> str:
        return f"http://{self.host.address}:{PORT}"

    def _conf(self) -> Path:
        servers = "\n".join(
            f"        server {address}:{port} max_fails=1 fail_timeout=2s"
            f"{'' if (address, port) in self.up else ' down'};"
            for address, port in self.upstreams
        )
        d = self.directory
        conf = d / "nginx.conf"
        conf.write_text(
            f"""daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream diffusion {{
        least_conn;
{servers}
    }}
    include {SITE};
}}
"""
        )
        return conf

    def start(self, check: bool = True) -> None:
        conf = self._conf()
        done = subprocess.run(
            self.host.command(["nginx", "-t", "-c", str(conf), "-p", str(self.directory)]),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise ProxyError(f"nginx refuses the configuration: {done.stderr.strip()}")
        process = self.spawn(
            ["nginx", "-c", str(conf), "-p", str(self.directory)],
            stdout=None,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: answers(self.host.address, PORT), "nginx", process=process)
        if check:
            self._checker = threading.Thread(target=self._check, daemon=True)
            self._checker.start()

    def set_up(self, up: set[tuple[str, int]]) -> None:
        """Send traffic to `up` only, from the reload on."""
        if up == self.up:
            return
        self.up = set(up)
        self._conf()
        subprocess.run(
            self.host.command(["nginx", "-s", "reload", "-c", str(self.directory / "nginx.conf"),
                               "-p", str(self.directory)]),
            capture_output=True,
            check=True,
        )  # fmt: skip
        self.reloads += 1

    def _check(self) -> None:
        while not self._stop.wait(CHECK_SECONDS):
            found = {(a, p) for a, p in self.upstreams if ready(a, p)}
            # With none ready, keep the last set: a proxy with no upstream answers nothing.
            if found:
                self.set_up(found)

    def stop(self) -> None:
        self._stop.set()
        if self._checker is not None:
            self._checker.join()
        super().stop()
