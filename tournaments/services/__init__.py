"""What changes a tournament, one module per concern; every door (the HTTP API, the pages, the
sweeper's tick, the end of a game) calls these. Each locks the tournament's row, checks,
writes, bumps the version and publishes after commit (tournaments/services/publish.py)."""
