"""What the board's browser tests share: headless Debian Chromium through Playwright, a page
that records the notifications it would show, and what a page shows of the board."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Set to 1 to write the screenshots the docs show (docs/board*.png) from the tests' browser.
SHOTS = "TASKHAND_SCREENSHOTS"
DOCS = Path(__file__).resolve().parents[2] / "docs"

# Each notification the page makes is kept in window.shown, for a test to read.
RECORD_NOTIFICATIONS = """
window.shown = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.shown.push({ title, body: (options || {}).body }); }
};
"""


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=shutil.which("chromium"))
        try:
            yield chromium
        finally:
            chromium.close()


def columns(page: Any) -> dict[str, str]:
    """Each card's task and the column it shows in, as the page shows them now."""
    found = page.eval_on_selector_all(
        ".column .card",
        "cards => cards.map(c => [c.dataset.task, c.closest('.column').dataset.status])",
    )
    return dict(found)
