"""Screenshots of every dashboard page, taken in Debian's Chromium with Playwright.

    python bench/screenshots.py [--url http://127.0.0.1:8000] [--out DIR] [--docs]

Without --url it starts `taxonomist serve` on a free port with a throw-away
SQLite database (TAXONOMY_DIR must point at the taxonomies, or the reference
folder beside the repository is used). It signs up a new account, creates a
key, runs the playground, and saves one PNG per page, desktop and phone, in
DIR (default .cache/screenshots). --docs also writes docs/dashboard.png, the
picture the README shows.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.dashboard.browser import Dashboard, launch  # noqa: E402
from tests.servers import Service  # noqa: E402

DEFAULT_OUT = REPO_ROOT / ".cache" / "screenshots"
DOCS_PNG = REPO_ROOT / "docs" / "dashboard.png"
DEFAULT_TAXONOMY_DIR = REPO_ROOT.parent / "shared" / "taxonomies"
# The README picture: the playground's form and its marked answer, small enough for git.
DOCS_CLIP = {"x": 0, "y": 0, "width": 1280, "height": 1300}
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PRODUCTS = [
    ("Ceramic coffee mug, 350 ml, dishwasher safe", "Google", True),
    ("Organic cotton baby bodysuit, short sleeves, 6-12 months", "Shopify", False),
    ("<script>alert('hi')</script> stainless steel chef's knife, 20 cm blade", "Google", False),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running service; default: start one")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--docs", action="store_true", help=f"also write {DOCS_PNG}")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        service = None if args.url else start_service(Path(folder))
        try:
            shoot(args.url or service.url, args.out, args.docs)
        finally:
            if service is not None:
                service.stop()
    return 0


def start_service(folder: Path) -> Service:
    env = dict(os.environ)
    env.setdefault("TAXONOMY_DIR", str(DEFAULT_TAXONOMY_DIR))
    env.setdefault("TAXONOMIST_CACHE_DIR", str(REPO_ROOT / ".cache" / "index"))
    env["DATABASE_URL"] = f"sqlite:///{folder / 'screenshots.sqlite3'}"
    env["PYTHONPATH"] = str(REPO_ROOT)
    return Service(env, folder / "serve.log")


def shoot(url: str, out: Path, docs: bool) -> None:
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for device, viewport in VIEWPORTS.items():
            context = browser.new_context(viewport=viewport, is_mobile=device == "phone")
            dashboard = Dashboard(context.new_page(), url)
            prefix = out / device
            tour(dashboard, lambda name, shown=dashboard, at=prefix: save(shown, Path(f"{at}-{name}.png")))
            if docs and device == "desktop":
                dashboard.classify(PRODUCTS[0][0], taxonomy=PRODUCTS[0][1], fallback=PRODUCTS[0][2])
                dashboard.page.screenshot(path=str(DOCS_PNG), full_page=True, clip=DOCS_CLIP)
            context.close()
        browser.close()
    print(f"screenshots in {out}" + (f"; README picture {DOCS_PNG}" if docs else ""))


def tour(dashboard: Dashboard, snap) -> None:
    """Visit every page in the state a new customer would see it, taking a picture of each."""
    dashboard.open("/dashboard/signin")
    snap("signin")
    dashboard.open("/dashboard/signup")
    snap("signup")
    dashboard.sign_up()
    dashboard.create_key("production")
    snap("keys-new-key")
    dashboard.page.get_by_role("link", name="Delete key production").click()
    snap("keys-delete")
    for product, taxonomy, fallback in PRODUCTS:
        dashboard.classify(product, taxonomy=taxonomy, fallback=fallback)
    snap("playground")
    with tempfile.TemporaryDirectory() as folder:
        dashboard.upload_job(products_csv(Path(folder)), fallback=True)
    for page in ("overview", "jobs", "billing"):
        dashboard.open("/dashboard/" + ("" if page == "overview" else page))
        snap(page)


def products_csv(folder: Path) -> Path:
    path = folder / "products.csv"
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["id", "product"])
        writer.writerows((n, product) for n, (product, _, _) in enumerate(PRODUCTS, 1))
    return path


def save(dashboard: Dashboard, path: Path) -> None:
    dashboard.page.screenshot(path=str(path), full_page=True)


if __name__ == "__main__":
    sys.exit(main())
