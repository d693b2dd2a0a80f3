"""The fault-injection suite (`python -m devtools chaos`): hostile clients and killed services
against real server processes."""
