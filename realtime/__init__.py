"""The ground floor: what every door of the site stands on, and no app.

Errors every service raises and how they read over HTTP, the typed protocol edge (msgspec),
the websocket consumer base, database work from async code, presence of server processes,
channel layers, per-client limits, websocket auth and the health check. Nothing here imports
an app (tests/test_architecture.py); the apps and config/ import it.
"""
