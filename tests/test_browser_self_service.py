"""A player's own account in the browser: confirming an address and resetting a forgotten
password by the links mailed (read from the server's console mail), and signing in with a
second factor."""

from __future__ import annotations

import re
import time
import uuid

import pyotp
import pytest

from tests.browsers import Problems, Site, keep_screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.sqlite(reason="the pages and their flows, not the database, are under test"),
]

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("Playwright is missing: run `make dev`", pytrace=False)

PASSWORD = "a-long-enough-password-42"
NEW_PASSWORD = "another-quiet-evening-7"


def sign_up(browser: Browser, site: Site, problems: Problems) -> tuple[Page, str]:
    name = f"p{uuid.uuid4().hex[:10]}"
    page = problems.watch(name, browser.new_context().new_page())
    page.goto(f"{site.url}/signup/")
    page.fill("#id_username", name)
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.locator("form.stacked button[type=submit]").click()
    expect(page.locator("[data-testid=username]")).to_have_text(name)
    return page, name


def mailed_link(site: Site, address: str, path: str, timeout: float = 15) -> str:
    """The newest link to `path` in a mail to `address` that the server wrote to its console
    (the shared site has no SMTP server: EMAIL_HOST is unset)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = "".join(p.read_text(errors="replace") for p in site.scratch.glob("daphne-*.log"))
        mails = [m for m in text.split("\nSubject: ")[1:] if f"To: {address}" in m]
        links = [re.findall(rf"http://\S+(/{path}\S+)", m) for m in mails]
        found = [link[-1] for link in links if link]
        if found:
            return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"no mail to {address} with a /{path} link within {timeout} s")


def log_out(page: Page) -> None:
    page.locator("nav.account button", has_text="Log out").click()
    expect(page.locator("nav.account a", has_text="Log in")).to_be_visible()


def log_in(page: Page, site: Site, name: str, password: str) -> None:
    page.goto(f"{site.url}/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", password)
    page.locator("form.stacked button[type=submit]").click()


def test_a_player_confirms_an_address_then_resets_a_forgotten_password_by_mail(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        page, name = sign_up(browser, site, problems)
        address = f"{name}@players.test"
        page.goto(f"{site.url}/@{name}/")
        page.click("#account-settings-link")
        page.locator(".settings-nav a", has_text="E-mail").click()
        page.fill("#id_email", address)
        page.fill("#id_password", PASSWORD)
        page.locator("#email-form button").click()
        expect(page.locator("#pending-email")).to_contain_text(address)
        page.goto(site.url + mailed_link(site, address, "settings/email/confirm/"))
        page.locator("#email-confirm-form button").click()
        expect(page.locator("#email-confirmed")).to_contain_text(address)

        log_out(page)
        page.goto(f"{site.url}/login/")
        page.click("#forgot-password")
        page.fill("#id_email", address)
        page.locator("#reset-form button").click()
        expect(page.locator("#reset-sent")).to_be_visible()
        link = site.url + mailed_link(site, address, "password-reset/")
        page.goto(link)
        page.fill("#id_new_password1", NEW_PASSWORD)
        page.fill("#id_new_password2", NEW_PASSWORD)
        keep_screenshot(page, "reset-new-password")
        page.locator("#new-password-form button").click()
        expect(page.locator("#reset-done")).to_be_visible()
        page.goto(link)  # once only
        expect(page.locator("#reset-link-dead")).to_be_visible()

        log_in(page, site, name, PASSWORD)
        expect(page.locator(".errorlist")).to_be_visible()
        log_in(page, site, name, NEW_PASSWORD)
        expect(page.locator("[data-testid=username]")).to_have_text(name)


def test_a_player_turns_on_two_factor_sign_in_and_signs_in_with_a_code(
    browser: Browser, site: Site, problems: Problems
) -> None:
    with site.serve():
        page, name = sign_up(browser, site, problems)
        page.goto(f"{site.url}/settings/account/")
        page.locator(".settings-nav a", has_text="Two-factor").click()
        page.locator("#start-form button").click()
        expect(page.locator("#two-factor-qr svg")).to_be_visible()
        keep_screenshot(page, "two-factor-setup")
        totp = pyotp.TOTP(page.locator("#two-factor-secret").inner_text())
        page.fill("#id_code", totp.now())
        page.locator("#enable-form button").click()
        expect(page.locator("#recovery-codes li")).to_have_count(10)

        log_out(page)
        log_in(page, site, name, PASSWORD)
        expect(page.locator("#two-factor-form")).to_be_visible()
        expect(page.locator("[data-testid=username]")).to_have_count(0)  # not signed in yet
        page.fill("#id_code", "000000")
        page.locator("#two-factor-form button").click()
        expect(page.locator("#two-factor-error")).to_be_visible()
        # The code of the next step: the one that turned it on is spent.
        page.fill("#id_code", totp.at(time.time() + 30))
        page.locator("#two-factor-form button").click()
        expect(page.locator("[data-testid=username]")).to_have_text(name)
