"""The base of every websocket consumer: decoding, size limits, dispatch and error frames.

Consumers stay thin: a subclass lists its message handlers in ``handlers`` and each handler
calls one service. Whatever a client sends, it gets a clear ``error`` frame back and the
socket stays open; nothing a client sends can crash the consumer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

logger = logging.getLogger(__name__)

Handler = Callable[[Any, dict[str, Any]], Awaitable[None]]


class ClientError(Exception):
    """A request the server refuses; its code and message go back to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class JsonConsumer(AsyncJsonWebsocketConsumer):
    """Decodes JSON frames of the form {"type": ..., ...} and dispatches on type."""

    # message type -> name of the coroutine method that handles it
    handlers: ClassVar[dict[str, str]] = {}

    async def send_error(self, code: str, message: str, **extra: Any) -> None:
        await self.send_json({"type": "error", "code": code, "message": message, **extra})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            await self.send_error("bad_frame", "Send JSON text frames, not binary ones.")
            return
        limit = settings.WEBSOCKET_MAX_MESSAGE_BYTES
        if len(text_data.encode("utf-8", errors="replace")) > limit:
            await self.send_error("too_large", f"Messages are limited to {limit} bytes.")
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self.send_error("bad_json", "That message is not valid JSON.")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            await self.send_error(
                "bad_message", 'A message must be a JSON object with a string "type".'
            )
            return
        method_name = self.handlers.get(content["type"])
        if method_name is None:
            known = ", ".join(sorted(self.handlers)) or "none"
            await self.send_error(
                "unknown_type",
                f"Unknown message type {content['type'][:40]!r}; this socket accepts: {known}.",
            )
            return
        try:
            await getattr(self, method_name)(content)
        except ClientError as error:
            await self.send_error(error.code, error.message)
        except Exception:
            # The traceback stays in the server log; the client gets a plain message and the
            # socket stays usable.
            logger.exception("websocket handler %s failed", method_name)
            await self.send_error("server_error", "Something went wrong on the server.")
