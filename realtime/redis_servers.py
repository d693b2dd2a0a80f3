"""Where the site's Redis servers are: a URL naming one server, or a service that Redis
Sentinel watches, so that the site follows a replica Sentinel promotes when the master is lost.

    redis://[:password@]host:6379/0                     one server
    sentinel://[:password@]host:26379,host:26379/name/0  the master of Sentinel's service
                                                        `name` (database 0, the default)

The password, if any, is the Redis servers'; the sentinels are asked without one. Every
connection to a Sentinel-watched master asks a sentinel where the master is when it connects
(redis-py's SentinelConnectionPool): after a failover the next connection reaches the new
master, and a connection to the old one fails, is dropped and is made again.

Used for the channel layer (one host entry per server, `channel_host`), and for the cache and
the rate limits (Django's RedisCache with `CachePool`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
import redis.sentinel

SENTINEL_SCHEME = "sentinel"
# Asking a sentinel must never hang a connection: one that is cut off is skipped for the next.
SENTINEL_CONNECTION_OPTIONS: dict[str, Any] = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0}


@dataclass(frozen=True)
class RedisServer:
    """One place the site keeps something in Redis."""

    url: str  # as configured: a plain server's URL is handed to redis-py unchanged
    sentinels: tuple[tuple[str, int], ...] = ()  # none: a plain server
    service: str = ""  # Sentinel's name for the master
    db: int = 0
    password: str | None = None

    @property
    def key(self) -> str:
        """The same for every mention of the same server (or service)."""
        if self.sentinels:
            return f"{SENTINEL_SCHEME}:{self.service}/{self.db}"
        return self.url


def parse(text: str) -> RedisServer:
    """One server from its URL; ValueError saying what is wrong."""
    text = text.strip()
    parts = urlsplit(text)
    if parts.scheme in ("redis", "rediss", "unix"):
        return RedisServer(url=text, password=parts.password)
    if parts.scheme != SENTINEL_SCHEME:
        raise ValueError(
            f"a Redis location is redis://host:port/db or "
            f"{SENTINEL_SCHEME}://host:port,host:port/service/db, not {text!r}"
        )
    hosts = parts.netloc.rpartition("@")[2]
    sentinels: list[tuple[str, int]] = []
    for entry in hosts.split(","):
        host, _, port = entry.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a sentinel is host:port, not {entry!r} in {text!r}")
        sentinels.append((host, int(port)))
    path = [piece for piece in parts.path.split("/") if piece]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError(f"a Sentinel location ends in /service or /service/db, not in {text!r}")
    return RedisServer(
        url=text,
        sentinels=tuple(sentinels),
        service=unquote(path[0]),
        db=int(path[1]) if len(path) == 2 else 0,
        password=unquote(parts.password) if parts.password else None,
    )


def parse_list(text: str) -> list[RedisServer]:
    """Servers separated by spaces (a Sentinel location holds commas)."""
    return [parse(piece) for piece in text.split()]


def channel_host(server: RedisServer, options: dict[str, Any]) -> dict[str, Any]:
    """channels_redis's host entry for `server`, with the connection `options`."""
    if not server.sentinels:
        return {"address": server.url, **options}
    return {
        "master_name": server.service,
        "sentinels": list(server.sentinels),
        "sentinel_kwargs": dict(SENTINEL_CONNECTION_OPTIONS),
        "db": server.db,
        "password": server.password,
        **options,
    }


class CachePool(redis.ConnectionPool):
    """The pool class for Django's RedisCache (OPTIONS["pool_class"]): Django makes each pool
    with `from_url(LOCATION, ...)`, which here understands Sentinel locations too."""

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Any:
        server = parse(url)
        if not server.sentinels:
            return redis.ConnectionPool.from_url(url, **options)
        manager = redis.sentinel.Sentinel(
            list(server.sentinels), sentinel_kwargs=dict(SENTINEL_CONNECTION_OPTIONS)
        )
        return redis.sentinel.SentinelConnectionPool(
            server.service, manager, db=server.db, password=server.password, **options
        )


def redis_cache(url: str, prefix: str) -> dict[str, Any]:
    """Django's cache setting for the Redis at `url` (either kind)."""
    return {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        # A list: Django splits a string at commas (its replicas), and a Sentinel location
        # holds commas between its sentinels.
        "LOCATION": [url],
        "KEY_PREFIX": prefix,
        "OPTIONS": {"pool_class": f"{__name__}.CachePool"},
    }
