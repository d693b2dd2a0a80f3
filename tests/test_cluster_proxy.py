"""The drill's proxy (devtools/cluster/proxy.py): Debian's nginx running the site's shipped
configuration (docker/nginx-site.conf) over processes on two hosts, spreading requests over
both, and leaving out a process whose /readyz says it is draining, within a check."""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from devtools.cluster.daemons import answers, wait_until
from devtools.cluster.hosts import network
from devtools.cluster.proxy import CHECK_SECONDS, Proxy

pytestmark = pytest.mark.sqlite(reason="no database: nginx and two small servers")

# Answers / with its host's name, /readyz with 200, or 503 once the file `argv[3]` exists.
SERVER = """
import http.server, os, sys
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        draining = self.path == "/readyz" and os.path.exists(sys.argv[3])
        body = b"draining" if draining else sys.argv[2].encode()
        self.send_response(503 if draining else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer((sys.argv[1], 8000), Answer).serve_forever()
"""


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return str(answer.read().decode())


def test_nginx_spreads_requests_over_both_hosts_and_leaves_out_one_that_drains() -> None:
    with network(["web1", "web2", "edge"]) as net, tempfile.TemporaryDirectory() as scratch:
        flags = {name: Path(scratch) / f"{name}.draining" for name in ("web1", "web2")}
        servers = [
            subprocess.Popen(
                net[name].command(
                    [sys.executable, "-c", SERVER, net[name].address, name, str(flags[name])]
                )
            )
            for name in ("web1", "web2")
        ]
        proxy = Proxy(net["edge"], [(net[name].address, 8000) for name in ("web1", "web2")])
        try:
            # The small servers take a moment to listen: nginx, finding one refusing, would
            # leave it out for its fail_timeout (2 s).
            for address in (net["web1"].address, net["web2"].address):
                wait_until(functools.partial(answers, address, 8000), address)
            proxy.start()
            assert {get(proxy.url + "/") for _ in range(20)} == {"web1", "web2"}
            flags["web2"].touch()  # web2 drains: /readyz 503
            time.sleep(CHECK_SECONDS * 4 + 1)
            assert proxy.reloads >= 1
            assert {get(proxy.url + "/") for _ in range(20)} == {"web1"}
            flags["web2"].unlink()  # and comes back
            time.sleep(CHECK_SECONDS * 4 + 1)
            assert {get(proxy.url + "/") for _ in range(20)} == {"web1", "web2"}
        finally:
            proxy.stop()
            for server in servers:
                server.kill()
                server.wait()
