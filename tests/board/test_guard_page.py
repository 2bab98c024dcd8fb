"""The page with the token in a header, in a real headless Chromium: opened at the address the
board printed, it loads, shows the cards and the drawer's pictures, follows the event stream
and makes a move, and no request of it carries the token in an address or sends a Referer.
When the board is stopped and started again (a new token), the page says in plain words what
to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.pictures import needs_browser
from tests.board.pages import browser
from tests.board.test_app import TOKEN, call, serving
from tests.board.test_details import drawn
from tests.plans import md_task
from tests.runs import make_repo

__all__ = ["browser", "drawn"]
MS = 30_000


@needs_browser
def test_the_page_reads_moves_and_follows_with_the_token_from_its_address(
    drawn: tuple[int, Path], browser: Any, tmp_path: Path
) -> None:
    port, _ = drawn
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sent: list[Any] = []
    page.on("request", lambda request: sent.append(request))
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("[data-status=done] [data-task=T-001]").wait_for(timeout=MS)
    waiting = page.locator("[data-status=needs-input] [data-task=T-002]")
    waiting.wait_for(timeout=MS)
    assert "#token" not in page.url
    # The drawer's pictures come through the token's header too.
    page.locator("[data-task=T-001] .title").click()
    page.locator("#drawer-tabs button[data-tab=Evidence]").click()
    page.wait_for_function(
        "() => { const i = document.querySelector('#drawer-tab figure.evidence img');"
        " return i && i.complete && i.naturalWidth === 360; }",
        timeout=MS,
    )
    page.screenshot(path=str(tmp_path / "drawer-evidence.png"))
    page.locator("#close").click()
    # Live: a move made elsewhere (another client, with the token) shows without a reload.
    json_only = {"Content-Type": "application/json"}
    status, moved = call(port, "POST", "/api/tasks/T-002/park", {"why": "later"}, **json_only)
    assert status == 200, moved
    parked = page.locator("[data-status=parked] [data-task=T-002]")
    parked.wait_for(timeout=MS)
    page.locator("#live-events [data-kind=task_moved]").first.wait_for(timeout=MS)
    # A move made on the page, by its button.
    parked.locator("button[data-move=reopen]").click()
    page.locator("[data-status=needs-input] [data-task=T-002]").wait_for(timeout=MS)
    page.screenshot(path=str(tmp_path / "board-with-token.png"))
    assert call(port, "GET", "/api/plan")[1]["tasks"][1]["lifecycle"] == "needs-input"
    # Every read of the board's data carried the token in its header, none in its address,
    # and no request named the page it came from.
    api = [r for r in sent if "/api/" in r.url]
    assert {r.url.split("?")[0].rsplit("/", 1)[-1] for r in api} >= {"plan", "events", "reopen"}
    for request in sent:
        assert TOKEN not in request.url, request.url
        assert not request.headers.get("referer"), request.url
    for request in api:
        assert request.headers.get("authorization") == f"Bearer {TOKEN}", request.url
    assert page.locator("#trouble").is_hidden()
    assert errors == []


@needs_browser
def test_a_restarted_board_tells_the_page_what_to_do(browser: Any, tmp_path: Path) -> None:
    files = {
        "plan/overview.md": "# Feature\n\n## Goal\nShip it.\n",
        "plan/T-001-task.md": md_task("T-001", "Dark mode toggle"),
    }
    repo = make_repo(tmp_path / "repo", files)
    page = browser.new_page(viewport={"width": 1280, "height": 600})
    trouble = page.locator("#trouble")
    with serving(repo) as port:
        page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
        page.locator("[data-task=T-001]").wait_for(timeout=MS)
        assert trouble.is_hidden()
    # Stopped: the page says the board does not answer, and keeps trying.
    trouble.wait_for(state="visible", timeout=MS)
    assert trouble.inner_text().startswith("The board does not answer.")
    page.screenshot(path=str(tmp_path / "board-stopped.png"))
    # Started again, as `taskhand board` does, with a new token: the page's is refused, and
    # it says why and what to do, in words, not an HTTP header.
    with serving(repo, token="a-new-token-0123456789", port=port):
        page.wait_for_function(
            "() => document.getElementById('trouble').textContent.includes('new key')",
            timeout=MS,
        )
        said = trouble.inner_text()
        assert said.startswith("This page's key no longer opens the board: the board was stopped")
        assert "Open the address the board printed in the terminal" in said
        assert "Authorization" not in said and "Bearer" not in said
        page.screenshot(path=str(tmp_path / "board-restarted.png"))
        # The address it printed opens the board again.
        page.goto(f"http://127.0.0.1:{port}/#token=a-new-token-0123456789")
        page.locator("[data-task=T-001]").wait_for(timeout=MS)
        assert page.locator("#trouble").is_hidden()
