"""The fault-injection suite (`manage.py chaos`): hostile clients and killed services
against real server processes."""
