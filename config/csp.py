"""The Content-Security-Policy header on every page.

The site's pages load their scripts and styles from its own origin only, with nothing inline,
and talk to its own websockets: a script injected into a page would not run, and could not
send what it read elsewhere. CONTENT_SECURITY_POLICY in settings is the policy.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
