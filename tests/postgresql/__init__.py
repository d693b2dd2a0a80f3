"""The test suite's PostgreSQL backend: Django's, emptying tables faster between tests."""
