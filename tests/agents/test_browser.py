"""The unit's browser: what it may load (the app, the workspace's files) and what it refuses,
screenshot names kept inside the shots folder, and a real headless chromium driving a real
app started as the runner starts it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from taskhand.agents.browser import BrowserSession, refusal, save, shot_name
from taskhand.agents.tool_paths import ToolError
from taskhand.config import AppConfig
from taskhand.host.allowlist import child_env
from taskhand.host.app import running
from taskhand.unit import Browser
from tests.agents.pictures import (
    APP,
    PYTHON,
    app_worktree,
    assert_shows_the_app,
    needs_browser,
)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/",
        "http://localhost:3000/settings?q=1",
        "https://localhost/",
        "http://[::1]:8080/",
        "ws://127.0.0.1:8000/live",
        "data:text/html,<p>hi</p>",
        "about:blank",
    ],
)
def test_the_app_and_what_a_page_makes_itself_may_load(tmp_path: Path, url: str) -> None:
    assert refusal(url, tmp_path) == ""


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "http://10.0.0.1:8000/",
        "http://localhost.example.com/",
        "http://127.0.0.1@example.com/",
        "http://127.0.0.2/",
        "file:///etc/passwd",
        "file://server/share/page.html",
        "ftp://127.0.0.1/file",
        "javascript:alert(1)",
        "chrome://settings",
    ],
)
def test_anything_else_is_refused(tmp_path: Path, url: str) -> None:
    assert refusal(url, tmp_path)


def test_files_load_only_from_inside_the_workspace(tmp_path: Path) -> None:
    worktree = app_worktree(tmp_path)
    (tmp_path / "secret.html").write_text("secret", encoding="utf-8")
    (worktree / "escape.html").symlink_to(tmp_path / "secret.html")
    (worktree / ".git").mkdir()
    (worktree / ".git" / "config").write_text("[core]", encoding="utf-8")
    assert refusal((worktree / "index.html").as_uri(), worktree) == ""
    assert "outside the workspace" in refusal((tmp_path / "secret.html").as_uri(), worktree)
    assert "outside the workspace" in refusal((worktree / "escape.html").as_uri(), worktree)
    assert "outside the workspace" in refusal((worktree / ".git/config").as_uri(), worktree)


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("prototype", "prototype"),
        ("prototype-2.png", "prototype-2"),
        ("../../x", "x"),
        ("/etc/cron.d/job", "job"),
        ("..\\..\\evil", "evil"),
        ("found 1: search box", "found-1-search-box"),
    ],
)
def test_a_screenshot_name_keeps_only_a_plain_last_part(name: str, kept: str) -> None:
    assert shot_name(name) == kept


@pytest.mark.parametrize("name", ["", "..", "../", "/", "***"])
def test_a_name_without_letters_is_refused(name: str) -> None:
    with pytest.raises(ToolError, match="refused: the name"):
        shot_name(name)


def test_a_picture_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    shots, target = tmp_path / "shots", tmp_path / "target.txt"
    shots.mkdir()
    target.write_text("keep", encoding="utf-8")
    (shots / "prototype.png").symlink_to(target)
    with pytest.raises(ToolError):
        save(shots, "prototype", ".png", b"\x89PNG")
    assert target.read_text() == "keep"
    os.link(target, shots / "found-1.png")
    with pytest.raises(ToolError, match="hard links"):
        save(shots, "found-1", ".png", b"\x89PNG")
    assert target.read_text() == "keep"
    assert save(shots, "../../found-2.svg", ".svg", b"<svg/>") == "found-2.svg"
    assert (shots / "found-2.svg").read_bytes() == b"<svg/>"


def test_without_chromium_the_tools_say_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium on it
    session = BrowserSession(Browser("", tmp_path / "shots"), tmp_path)
    with pytest.raises(ToolError, match="chromium is not installed") as caught:
        session.open("index.html")
    assert "(fix: apt-get install chromium" in str(caught.value)


@needs_browser
def test_the_browser_drives_the_running_app_and_screenshots_it(tmp_path: Path) -> None:
    worktree, shots = app_worktree(tmp_path), tmp_path / "artifacts" / "T-001"
    with (
        running(APP, worktree, child_env()) as url,
        BrowserSession(Browser(url, shots), worktree) as session,
    ):
        opened = session.open(url)
        assert opened.startswith(f"opened {url} (HTTP 200): Bookmarks")
        assert "2 saved bookmarks" in session.text()
        assert session.text("#list li") == "taskhand docs\nPlaywright"
        session.type("input[name=q]", "docs")
        session.click("text=Search")
        assert session.text("#result") == "Results for docs"
        assert session.open("/index.html").startswith("opened")  # a path on the app
        assert session.screenshot("found-1") == "found-1.png"
    assert sorted(p.name for p in shots.iterdir()) == ["found-1.png"]
    assert_shows_the_app(shots / "found-1.png")


@needs_browser
def test_a_hostile_page_reaches_neither_the_internet_nor_files_outside(tmp_path: Path) -> None:
    worktree = app_worktree(tmp_path)
    (tmp_path / "secret.txt").write_text("the harness's secret", encoding="utf-8")
    secret = (tmp_path / "secret.txt").as_uri()
    (worktree / "hostile.html").write_text(
        f'<p>hostile</p><iframe src="{secret}"></iframe><img src="https://example.com/x.png">'
        f'<script>setTimeout(() => location.href = "{secret}", 1500)</script>',
        encoding="utf-8",
    )
    (worktree / "links.html").write_text(
        '<a id="out" href="https://example.com/">out</a>', encoding="utf-8"
    )
    with BrowserSession(Browser("", tmp_path / "shots"), worktree) as session:
        for target in ("https://example.com/", "file:///etc/passwd", "../secret.txt", secret):
            with pytest.raises(ToolError, match="refused"):
                session.open(target)
        assert session.open("hostile.html").startswith("opened file://")
        # The script's redirect, which the browser refuses; late enough that a loaded machine
        # has opened the page before it comes.
        time.sleep(2.0)
        assert "secret" not in session.text() and "blocked" in session.text()
        session.open("links.html")
        with pytest.raises(ToolError, match="did not load"):
            session.click("#out")  # the internet is out of reach, through a link as well
        with pytest.raises(ToolError, match="no app to open a path on"):
            session.open("/settings")


REDIRECTING = """
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

TARGETS = {"/out": "https://example.com/", "/secret": "file:///etc/passwd", "/home": "/"}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path in TARGETS:
            self.send_response(302)
            self.send_header("Location", TARGETS[self.path])
            self.end_headers()
            return
        body = b"<title>Home</title><p>home page</p>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""


@needs_browser
def test_an_app_that_redirects_out_of_bounds_is_not_followed(tmp_path: Path) -> None:
    worktree = app_worktree(tmp_path)
    (worktree / "redirecting.py").write_text(REDIRECTING, encoding="utf-8")
    app = AppConfig(start=f"exec {PYTHON} redirecting.py")
    with (
        running(app, worktree, child_env()) as url,
        BrowserSession(Browser(url, tmp_path / "shots"), worktree) as session,
    ):
        assert session.open("/home").startswith(f"opened {url} (HTTP 200): Home")
        for path in ("/out", "/secret"):
            with pytest.raises(ToolError):
                session.open(path)
            assert "root:" not in session.text()
