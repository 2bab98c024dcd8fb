"""The headless browser a designer or qa unit drives in our own loop and the replay agent:
Debian's chromium through Playwright's sync API, one per unit, started on first use and closed
with the unit. It reaches only the app (http on 127.0.0.1 or localhost) and files inside the
unit's workspace, and saves screenshots only into the unit's shots folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

from taskhand.agents.tool_paths import ToolError, refuse, resolve, show, store, touches_git
from taskhand.host.allowlist import child_env
from taskhand.text import cap
from taskhand.unit import Browser, Unit

if TYPE_CHECKING:
    from playwright.sync_api import Browser as Chromium
    from playwright.sync_api import Page, Playwright, Route

WIDTH, HEIGHT = 1440, 900  # the size every screenshot is taken at
TEXT_LIMIT = 8000  # characters of page text a call returns
ACTION_MS = 10_000  # a click or a fill waits this long for its element
NAVIGATION_MS = 30_000
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# Every address that is not local goes to a proxy nobody runs, so it fails: redirects and a
# page's own requests included, which a check of the opened address alone would miss.
NO_PROXY = {"server": "http://127.0.0.1:9", "bypass": "127.0.0.1,localhost,[::1]"}
INSTALL = "apt-get install chromium, and pip install playwright"
NAME_CHARS = 80


def chromium() -> str | None:
    """Debian's chromium, where it is installed."""
    return shutil.which("chromium")


def problem() -> str:
    """Why no browser can run here, or "" when one can."""
    if chromium() is None:
        return "chromium is not installed"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed"
    return ""


def shot_name(name: str) -> str:
    """`name` as a file name of the shots folder: its last part, letters, digits, - and _."""
    stem = name.strip().replace("\\", "/")
    stem = re.sub(r"\.(png|svg)$", "", stem, flags=re.IGNORECASE)
    stem = PurePosixPath(stem).name if stem else ""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-")[:NAME_CHARS]
    if not safe:
        raise refuse(f"the name {show(name)} has no letters or digits; try prototype or found-1")
    return safe


def save(shots: Path, name: str, suffix: str, data: bytes) -> str:
    """Write `data` as `<shots>/<name><suffix>`, never through a link; the file's name."""
    shots.mkdir(parents=True, exist_ok=True)
    filename = f"{shot_name(name)}{suffix}"
    try:
        store(shots / filename, filename, data)
    except OSError as exc:  # a link planted in its place: never followed
        raise refuse(f"{filename} could not be written ({exc.strerror or exc})") from None
    return filename


def refusal(url: str, worktree: Path) -> str:
    """Why the browser may not load `url`, or "" when it may: the app on this machine, files
    inside the workspace, and what a page makes itself (data:, blob:, about:)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https", "ws", "wss"):
        if (parts.hostname or "").lower() in LOCAL_HOSTS:
            return ""
        return f"{show(url)} is not on this machine; only the app (127.0.0.1 or localhost) opens"
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            return f"{show(url)} names another host"
        root = Path(os.path.realpath(worktree))
        real = Path(os.path.realpath(unquote(parts.path)))
        if not real.is_relative_to(root) or touches_git(real.relative_to(root).parts):
            return f"{show(url)} is outside the workspace; only its own files open"
        return ""
    if scheme in ("data", "blob", "about"):
        return ""
    return f"{show(url)} is neither the app nor a file of the workspace"


class BrowserSession:
    """One unit's browser. Every failure is a ToolError: the answer the model gets."""

    def __init__(
        self, browser: Browser, worktree: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.browser = browser
        self.worktree = worktree
        self.env = dict(child_env() if env is None else env)
        self._playwright: Playwright | None = None
        self._chromium: Chromium | None = None
        self._page: Page | None = None

    def __enter__(self) -> BrowserSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, target: str) -> str:
        """Open the app's address, a path on the app (/about), or a file of the workspace."""
        url = self._address(target)
        page = self._started()
        with self._playwright_errors("open", target):
            answer = page.goto(url, timeout=NAVIGATION_MS, wait_until="load")
        status = f" (HTTP {answer.status})" if answer is not None else ""
        return f"opened {self._arrived(page)}{status}: {page.title() or '(no title)'}"

    def click(self, selector: str) -> str:
        page = self._started()
        with self._playwright_errors("click", selector):
            page.locator(selector).first.click(timeout=ACTION_MS)
            with contextlib.suppress(Exception):  # a click that starts no navigation
                page.wait_for_load_state("load", timeout=ACTION_MS)
        return f"clicked {show(selector)}; the page is {self._arrived(page)}"

    def type(self, selector: str, text: str) -> str:
        page = self._started()
        with self._playwright_errors("type into", selector):
            page.locator(selector).first.fill(text, timeout=ACTION_MS)
        return f"typed {len(text)} characters into {show(selector)}"

    def text(self, selector: str | None = None) -> str:
        """The visible text of the page, or of the elements `selector` matches."""
        page = self._started()
        with self._playwright_errors("read", selector or "the page"):
            if selector:
                texts = page.locator(selector).all_inner_texts()
                if not texts:
                    raise ToolError(f"nothing on the page matches {show(selector)}")
                said = "\n".join(texts)
            else:
                said = page.locator("body").inner_text(timeout=ACTION_MS)
        return cap(said.strip(), TEXT_LIMIT) or "(the page shows no text)"

    def screenshot(self, name: str) -> str:
        """Save what the page shows (1440x900) as <shots>/<name>.png; the file's name."""
        page = self._started()
        shot_name(name)  # a bad name is refused before the picture is taken
        with self._playwright_errors("screenshot", name):
            data = page.screenshot(type="png", timeout=NAVIGATION_MS)
        return save(self.browser.shots, name, ".png", data)

    def close(self) -> None:
        """Close the browser and Playwright's driver; nothing of them outlives the unit."""
        chromium, driver = self._chromium, self._playwright
        self._page = self._chromium = self._playwright = None
        if chromium is not None:
            with contextlib.suppress(Exception):
                chromium.close()
        if driver is not None:
            with contextlib.suppress(Exception):
                driver.stop()

    def _address(self, target: str) -> str:
        target = target.strip()
        if "://" in target or target.startswith(("about:", "data:")):
            url = target
        elif target.startswith("/"):
            if not self.browser.url:
                raise refuse(
                    f"{show(target)}: there is no app to open a path on; open a file of the "
                    "workspace by its relative path"
                )
            url = urljoin(self.browser.url, target)
        else:
            url = resolve(Path(os.path.realpath(self.worktree)), target).as_uri()
        reason = refusal(url, self.worktree)
        if reason:
            raise refuse(reason)
        return url

    def _arrived(self, page: Page) -> str:
        """Where the page is now; a redirect out of bounds leaves a blank page and a refusal."""
        reason = refusal(page.url, self.worktree)
        if reason:
            with contextlib.suppress(Exception):
                page.goto("about:blank")
            if page.url.startswith("chrome-error:") or reason.startswith("'chrome-error:"):
                raise refuse(
                    "the page did not load: it went somewhere outside the app and the "
                    "workspace, which the browser does not reach, or nothing answered"
                )
            raise refuse(f"the page went to {reason}")
        return page.url

    def _started(self) -> Page:
        if self._page is not None:
            return self._page
        missing = problem()
        if missing:
            raise ToolError(f"no browser is available here: {missing} (fix: {INSTALL})")
        from playwright.sync_api import Error, sync_playwright

        try:
            self._playwright = sync_playwright().start()
            self._chromium = self._playwright.chromium.launch(
                executable_path=chromium(),
                headless=True,
                proxy=NO_PROXY,  # type: ignore[arg-type]
                env=dict[str, "str | float | bool"](self.env),  # the allow-list's: no keys
            )
            context = self._chromium.new_context(
                viewport={"width": WIDTH, "height": HEIGHT},
                accept_downloads=False,
                service_workers="block",  # so that every request passes the route below
                ignore_https_errors=True,  # only the local app is reachable anyway
            )
            context.route("**/*", self._route)
            self._page = context.new_page()
        except Error as exc:
            self.close()
            raise ToolError(f"the browser did not start: {_first_line(exc)}") from None
        return self._page

    def _route(self, route: Route) -> None:
        if refusal(route.request.url, self.worktree):
            route.abort("blockedbyclient")
        else:
            route.continue_()

    @contextlib.contextmanager
    def _playwright_errors(self, doing: str, what: str) -> Iterator[None]:
        from playwright.sync_api import Error

        try:
            yield
        except Error as exc:
            raise ToolError(f"could not {doing} {show(what)}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@contextlib.contextmanager
def session_for(
    unit: Unit, env: Mapping[str, str] | None = None
) -> Iterator[BrowserSession | None]:
    """The browser of `unit` (None when it has none) for the block, closed after it."""
    if unit.browser is None:
        yield None
        return
    with BrowserSession(unit.browser, unit.worktree, env) as session:
        yield session


def take_picture(
    unit: Unit,
    session: BrowserSession | None,
    kind: str,
    name: str,
    url: str,
    text: str,
    fill: tuple[str, str] | None = None,
) -> str:
    """The replay agent's pictures: a `screenshot` of `url` (default: the app), after typing
    into a field when `fill` (selector, text) says so, or the `svg` drawing `text`, saved into
    the unit's shots folder; "" when done, else what went wrong."""
    if unit.browser is None or session is None:
        return f"{kind} {name!r}: this unit has no browser to keep pictures with"
    try:
        if kind == "svg":
            save(unit.browser.shots, name, ".svg", text.encode())
            return ""
        if not (url or unit.browser.url):
            return f"screenshot {name!r}: the unit has no app (fix: give url, or draw an svg)"
        session.open(url or unit.browser.url)
        if fill is not None:
            session.type(*fill)
        session.screenshot(name)
    except ToolError as exc:
        return f"{kind} {name!r}: {exc}"
    return ""


# The browser tools as the model calls them, by name, with their checked arguments.
TOOLS: dict[str, Callable[[BrowserSession, dict[str, Any]], str]] = {
    "browser_open": lambda b, a: b.open(a["url"]),
    "browser_click": lambda b, a: b.click(a["selector"]),
    "browser_type": lambda b, a: b.type(a["selector"], a["text"]),
    "browser_text": lambda b, a: b.text(a.get("selector")),
    "browser_screenshot": lambda b, a: f"saved {b.screenshot(a['name'])} ({WIDTH}x{HEIGHT})",
}
