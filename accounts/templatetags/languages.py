"""`{% catalog_url %}`: the address of the client's strings in the page's language."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from accounts.language import catalog_version

register = template.Library()


@register.simple_tag
def catalog_url() -> str:
    language = translation.get_language() or settings.LANGUAGE_CODE
    return reverse("javascript-catalog", args=[language, catalog_version(language)])
