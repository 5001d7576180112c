"""Driving the dashboard in Debian's Chromium with Playwright, as a person would.

Shared by the browser tests and bench/screenshots.py. Playwright's own browser
download does not work here: it drives /usr/bin/chromium instead.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright

CHROMIUM_PATH = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling home, and a
# closed network refuses it; Playwright gives every launch a fresh profile.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple"
ACTION_TIMEOUT_MS = 20_000


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=str(CHROMIUM_PATH), args=CHROMIUM_ARGS)


def new_email() -> str:
    return f"{uuid.uuid4().hex[:10]}@example.test"


class Dashboard:
    """One visitor's tab: every step goes through the pages' links and forms."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")
        page.set_default_timeout(ACTION_TIMEOUT_MS)

    def open(self, path: str) -> None:
        self.page.goto(self.base_url + path)

    def sign_up(self, email: str | None = None) -> str:
        email = email or new_email()
        self.open("/dashboard/signup")
        self.page.get_by_label("Email").fill(email)
        self.page.get_by_label("Password").fill(PASSWORD)
        self.page.get_by_role("button", name="Sign up").click()
        # Sign-up does not sign in (it must not tell whether the email was new).
        self.page.wait_for_url(re.compile(r"/dashboard/signin\?signed-up$"))
        self.sign_in(email)
        self.page.wait_for_url(re.compile(r"/dashboard/?$"))
        return email

    def sign_in(self, email: str, password: str = PASSWORD) -> None:
        self.open("/dashboard/signin")
        self.page.get_by_label("Email").fill(email)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Sign in").click()

    def sign_out(self) -> None:
        self.page.get_by_role("button", name="Sign out").click()

    def total_credits(self) -> int:
        self.open("/dashboard/")
        return int(self.page.locator("#total-credits").inner_text())

    def create_key(self, name: str) -> str:
        """The new key's full value, read from the page that shows it once."""
        self.open("/dashboard/keys")
        self.page.locator("#name").fill(name)
        self.page.get_by_role("button", name="Create key").click()
        return self.page.locator("#new-key").input_value()

    def delete_key(self, name: str) -> None:
        self.open("/dashboard/keys")
        self.page.get_by_role("link", name=f"Delete key {name}").click()
        self.page.get_by_role("button", name="Delete key").click()
        self.page.wait_for_url(re.compile(r"/dashboard/keys$"))

    def classify(
        self,
        product: str,
        *,
        taxonomy: str = "Google",
        instructions: str = "",
        leafs_only: bool = False,
        fallback: bool = False,
    ) -> None:
        self.open("/dashboard/playground")
        self.page.get_by_label("Product description").fill(product)
        self.page.get_by_label("Taxonomy").select_option(taxonomy)
        self.page.get_by_label("Custom instructions").fill(instructions)
        self.page.get_by_label("Leaf categories only").set_checked(leafs_only)
        self.page.get_by_label("Fall back to the best guess").set_checked(fallback)
        self.page.get_by_role("button", name="Classify").click()
        self.page.wait_for_selector("#response-json, .error")

    def upload_job(self, file: Path, *, fallback: bool = False) -> str:
        """Upload a CSV or JSON Lines file; the id of the job it made (the newest)."""
        self.open("/dashboard/jobs")
        self.page.get_by_label("File").set_input_files(str(file))
        self.page.get_by_label("Fall back to the best guess").set_checked(fallback)
        self.page.get_by_role("button", name="Upload and start").click()
        self.page.wait_for_url(re.compile(r"/dashboard/jobs$"))
        return self.page.locator("#jobs tbody tr").first.get_attribute("data-job")

    def job_status(self, job_id: str) -> str:
        return self.page.locator(f'tr[data-job="{job_id}"] .status').inner_text()
