"""Browser fixtures: one Chromium for the session, a fresh context (cookies) per test.

The service is the lead's `embedded` fixture: `taxonomist serve` for real.
"""

from __future__ import annotations

import pytest

from tests.conftest import Stack
from tests.dashboard.browser import CHROMIUM_PATH, Dashboard, launch

PHONE_VIEWPORT = {"width": 390, "height": 844}


# Package scope: the sync API keeps an event loop running in this thread
# until it stops, which would break asyncio.run() in the tests after these.
@pytest.fixture(scope="package")
def browser():
    if not CHROMIUM_PATH.exists():
        pytest.skip(f"no Chromium at {CHROMIUM_PATH} (Debian: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


def open_dashboard(browser, stack: Stack, **context_options):
    context = browser.new_context(**context_options)
    return context, Dashboard(context.new_page(), stack.url)


@pytest.fixture
def dashboard(browser, embedded: Stack):
    context, dashboard = open_dashboard(browser, embedded)
    yield dashboard
    context.close()


@pytest.fixture
def phone(browser, embedded: Stack):
    context, dashboard = open_dashboard(browser, embedded, viewport=PHONE_VIEWPORT, is_mobile=True)
    yield dashboard
    context.close()


@pytest.fixture
def no_javascript(browser, embedded: Stack):
    context, dashboard = open_dashboard(browser, embedded, java_script_enabled=False)
    yield dashboard
    context.close()
