"""docs/PROTOCOL.md and the server agree: the frame checker that every socket test runs
(tests/protocol_check.py) can fail, and the document's lists match the source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lobby.models import Challenge
from tests.protocol_check import (
    SERVER_PACKAGES,
    UndocumentedFrame,
    check,
    code_mentions,
    documented,
    parse,
)

ROOT = Path(__file__).resolve().parent.parent


def test_the_checker_refuses_a_frame_the_document_does_not_list() -> None:
    with pytest.raises(UndocumentedFrame, match="'batch'"):
        check("game", {"type": "batch", "events": []})  # batches are the lobby's only
    with pytest.raises(UndocumentedFrame, match="gossip"):
        check("lobby", {"type": "gossip"})
    with pytest.raises(UndocumentedFrame, match="undocumented error code"):
        check("game", {"type": "error", "code": "oops", "message": "?"})
    with pytest.raises(UndocumentedFrame, match="not a public feed event"):
        check("lobby", {"type": "batch", "events": [{"type": "pong"}]})
    with pytest.raises(UndocumentedFrame, match="without a type"):
        check("lobby", ["not", "an", "object"])


def test_the_checker_lets_documented_frames_through() -> None:
    check("lobby", {"type": "batch", "events": [{"type": "seek_added", "v": 3, "seek": {}}]})
    check("game", {"type": "error", "code": "stale_ply", "message": "resync"})
    check("game", {"type": "move", "v": 1})


def test_the_tables_are_read_from_the_document() -> None:
    protocol = parse(
        "## Every frame the server sends\n\n| socket | type |\n|---|---|\n| game | `move` |\n"
        "\n## Error codes\n\n| code | where |\n|---|---|\n| `game_over` | game |\n"
    )
    assert protocol.frames == {("game", "move")}
    assert protocol.codes == {"game_over"}


def test_every_documented_frame_type_is_one_the_server_sends() -> None:
    frames = documented().frames
    assert len(frames) >= 20
    missing = sorted(kind for _, kind in frames if not code_mentions(kind))
    assert not missing, f"documented but never sent: {missing}"


def challenge_codes() -> set[str]:
    return {f"challenge_{status}" for status in Challenge.Status.values if status != "pending"}


def test_every_documented_error_code_is_one_the_server_uses() -> None:
    codes = documented().codes
    missing = sorted(c for c in codes - challenge_codes() if not code_mentions(c))
    assert not missing, f"documented but never used: {missing}"


def test_every_error_code_in_the_source_is_documented() -> None:
    raised = set()
    for path in [
        *ROOT.glob("realtime/*.py"),
        *(path for package in SERVER_PACKAGES[1:] for path in ROOT.glob(f"{package}/**/*.py")),
    ]:
        text = path.read_text()
        raised |= set(
            re.findall(r'\b(?:ServiceError|BadCommand|send_error|error)\(\s*"([a-z_]+)"', text)
        )
    raised |= challenge_codes()
    assert {"illegal_move", "not_logged_in", "bad_json", "server_error"} <= raised
    assert raised <= documented().codes, sorted(raised - documented().codes)


def test_every_http_status_in_the_document_is_the_one_the_server_answers() -> None:
    from realtime.errors import http_status

    text = (ROOT / "docs" / "PROTOCOL.md").read_text().split("\n## Error codes\n", 1)[1]
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]*) \|", text, re.M)
    documented_statuses = {
        code: int(found.group(1))
        for code, where in rows
        if (found := re.search(r"HTTP (\d{3})", where))
    }
    assert len(documented_statuses) >= 25
    wrong = {c: (s, http_status(c)) for c, s in documented_statuses.items() if http_status(c) != s}
    assert not wrong, f"documented status, served status: {wrong}"


def test_the_published_schema_is_generated_from_the_current_models() -> None:
    from lobby.management.commands.protocol_schema import SCHEMA_FILE, document

    assert SCHEMA_FILE.read_text() == document(), "run: python manage.py protocol_schema"


@pytest.mark.parametrize(
    ("socket", "heading", "next_heading"),
    [("game", "## The game socket", "## HTTP"), ("lobby", "## The lobby socket", "## The game")],
)
def test_every_message_a_socket_accepts_is_described_in_its_section(
    socket: str, heading: str, next_heading: str
) -> None:
    import typing

    from games import protocol as games
    from lobby import protocol as lobby
    from realtime.protocol import tag_of

    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    section = text.split(heading, 1)[1].split(next_heading, 1)[0]
    messages = (games if socket == "game" else lobby).CLIENT_MESSAGES
    tags = {tag_of(kind) for kind in typing.get_args(messages)} - {"ping"}  # ping: at the top
    assert len(tags) >= 7
    missing = sorted(tag for tag in tags if f'"type": "{tag}"' not in section)
    assert not missing, f"the {socket} section does not describe: {missing}"
    assert '{"type": "ping", "id": x}' in text


@pytest.mark.parametrize("socket", ["game", "lobby"])
def test_the_documents_frame_table_and_the_frame_models_agree(socket: str) -> None:
    import typing

    from games import protocol as games
    from lobby import protocol as lobby
    from realtime.protocol import tag_of

    frames = (games if socket == "game" else lobby).SERVER_FRAMES
    modelled = {tag_of(kind) for kind in typing.get_args(frames)}
    listed = {kind for where, kind in documented().frames if where == socket}
    assert modelled == listed


def test_a_frame_with_a_field_its_model_does_not_have_is_refused() -> None:
    from tests.protocol_check import check_text

    check_text("/ws/games/1/", '{"type": "crowd", "spectators": 2, "players": {"1": true}}')
    with pytest.raises(UndocumentedFrame, match="does not match its model"):
        check_text("/ws/games/1/", '{"type": "crowd", "spectators": "two", "players": {}}')
    with pytest.raises(UndocumentedFrame, match="does not match its model"):
        check_text("/ws/lobby/", '{"type": "online", "online": 3, "secret": "leak"}')
