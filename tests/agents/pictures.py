"""For the browser tests: a tiny web app to look at, the marker that skips a test where no
browser can run (saying why), and what a PNG shows, decoded by chromium itself."""

from __future__ import annotations

import base64
import shlex
import shutil
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from taskhand.agents import browser
from taskhand.config import AppConfig

BLUE = (29, 78, 216)  # the app's header, at the top left of every screenshot of it
APP_PAGE = """<!doctype html>
<html><head><title>Bookmarks</title><style>
  body { margin: 0; font: 18px sans-serif; }
  header { background: rgb(29, 78, 216); color: white; padding: 24px; height: 80px; }
  main { padding: 24px; }
</style></head><body>
<header><h1>Bookmarks</h1></header>
<main>
  <p id="count">2 saved bookmarks</p>
  <ul id="list"><li>taskhand docs</li><li>Playwright</li></ul>
  <input name="q" placeholder="Search"> <button id="search">Search</button>
  <p id="result"></p>
</main>
<script>
  document.getElementById("search").onclick = () => {
    const q = document.querySelector("input[name=q]").value;
    document.getElementById("result").textContent = "Results for " + q;
  };
</script>
</body></html>
"""
PYTHON = shlex.quote(sys.executable)
SERVE = f"exec {PYTHON} -m http.server $PORT --bind 127.0.0.1"
APP = AppConfig(start=SERVE)

needs_browser = pytest.mark.skipif(
    bool(browser.problem()),
    reason=f"no browser here: {browser.problem()} (fix: {browser.INSTALL})",
)


def app_worktree(root: Path) -> Path:
    """A worktree holding the app's page (served from it by APP)."""
    worktree = root / "worktree"
    worktree.mkdir(parents=True, exist_ok=True)
    (worktree / "index.html").write_text(APP_PAGE, encoding="utf-8")
    return worktree


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@dataclass
class Look:
    """What a picture shows: its size, how many colours a sample of its pixels has, and the
    colour of its top left corner."""

    width: int
    height: int
    colours: int
    corner: tuple[int, int, int]


_LOOK = """async (b64) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.width; canvas.height = img.height;
  const context = canvas.getContext("2d");
  context.drawImage(img, 0, 0);
  const data = context.getImageData(0, 0, img.width, img.height).data;
  const colours = new Set();
  for (let i = 0; i < data.length; i += 4 * 37) {
    colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  }
  return {width: img.width, height: img.height, colours: colours.size,
          corner: Array.from(context.getImageData(5, 5, 1, 1).data.slice(0, 3))};
}"""


def look(path: Path) -> Look:
    """Decode the PNG in a browser of the test's own (nothing of the code under test)."""
    from playwright.sync_api import sync_playwright

    encoded = base64.b64encode(path.read_bytes()).decode()
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=shutil.which("chromium"))
        try:
            seen = chromium.new_page().evaluate(_LOOK, encoded)
        finally:
            chromium.close()
    return Look(seen["width"], seen["height"], seen["colours"], tuple(seen["corner"]))


def assert_shows_the_app(path: Path) -> None:
    """The screenshot is 1440x900, shows more than one colour, and has the app's header."""
    assert png_size(path) == (1440, 900)
    seen = look(path)
    assert (seen.width, seen.height) == (1440, 900)
    assert seen.colours > 2, f"{path.name} is blank"
    assert seen.corner == BLUE, f"{path.name} does not show the app's header: {seen.corner}"
