"""The test settings with tests/log_urls.py's failing view (tests/test_logs.py)."""

from tests.settings import *  # noqa: F403

ROOT_URLCONF = "tests.log_urls"
