from __future__ import annotations

from typing import Any, ClassVar

from config.ws import JsonConsumer

LOBBY_GROUP = "lobby"


class LobbyConsumer(JsonConsumer):
    """The lobby socket: everyone on the home page listens to the lobby group."""

    handlers: ClassVar[dict[str, str]] = {"ping": "handle_ping"}

    async def connect(self) -> None:
        await self.channel_layer.group_add(LOBBY_GROUP, self.channel_name)
        await self.accept()
        user = self.scope.get("user")
        signed_in = bool(user and user.is_authenticated)
        await self.send_json(
            {
                "type": "hello",
                "user": (
                    {"username": user.username, "is_guest": user.is_guest} if signed_in else None
                ),
            }
        )

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(LOBBY_GROUP, self.channel_name)

    async def handle_ping(self, content: dict[str, Any]) -> None:
        await self.send_json({"type": "pong", "id": content.get("id")})

    async def lobby_event(self, event: dict[str, Any]) -> None:
        """A broadcast to the lobby group: forward its payload as it is."""
        await self.send_json(event["payload"])
