"""The Live dock in a real headless Chromium: while a run goes beside the board, a pane shows
the working unit's transcript as the harness writes it (its tail, read again as events come
and every two seconds), text planted with markup in it stays text, and when no unit works the
pane says so."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.pictures import needs_browser
from tests.board.pages import browser
from tests.board.test_app import TOKEN, serving
from tests.plans import md_task
from tests.runs import attempt, make_repo, run_plan, script, write

__all__ = ["browser"]
PLANT = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
SECONDS = 60  # the most a wait here takes on a loaded machine
MS = SECONDS * 1000


@pytest.fixture
def board_beside(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A one-task plan that has not run yet, and its board."""
    files = {
        "plan/overview.md": "# Feature\n\n## Goal\nShip it.\n",
        "plan/T-001-task.md": md_task("T-001", "Slow work"),
    }
    repo = make_repo(tmp_path / "repo", files)
    with serving(repo) as port:
        yield port, repo


def pane_lines(page: Any) -> list[tuple[str, str]]:
    found = page.eval_on_selector_all(
        "#live-working section.working[data-task=T-001] li.line",
        "lines => lines.map(l => [l.querySelector('.role').textContent,"
        " l.querySelector('.text').textContent])",
    )
    return [(role, text) for role, text in found]


@needs_browser
def test_the_dock_shows_the_working_units_transcript_as_it_is_written(
    board_beside: tuple[int, Path], browser: Any, tmp_path: Path
) -> None:
    port, repo = board_beside
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    idle = page.locator("#live-working .idle")
    idle.wait_for(timeout=MS)
    assert idle.inner_text() == "No unit is working."
    # The implementer's command takes a while, its text planted with markup.
    slow = {"run": ["sh", "-c", f"sleep 6 # {PLANT}"]}
    replayed = script(tmp_path, {"T-001": [attempt(slow, write("done.txt", "done\n"))]})
    ran: dict[str, Any] = {}

    def run() -> None:
        ran["summary"], _ = run_plan(repo / "plan", repo, replayed)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    # (Between its claim and its first unit a task works with no unit yet.)
    pane = page.locator("#live-working section.working[data-task=T-001][data-unit]")
    pane.wait_for(timeout=MS)
    assert pane.locator("h3").inner_text() == "Working: T-001 implementer"
    # The command's line shows while it sleeps: before the unit has said more.
    page.wait_for_function(
        "() => [...document.querySelectorAll('#live-working li.line .text')]"
        ".some(t => t.textContent.includes('sleep 6'))",
        timeout=MS,
    )
    lines = pane_lines(page)
    assert [role for role, _ in lines] == ["user", "tool"], lines
    assert lines[1][1] == f"action: run · target: ['sh', '-c', 'sleep 6 # {PLANT}']"
    assert page.locator("#live-working script, #live-working img").count() == 0
    assert page.evaluate("window.__pwned") is None  # the plant is text: nothing of it ran
    page.screenshot(path=str(tmp_path / "live.png"))
    runner.join(SECONDS)
    assert ran["summary"].status == "completed"
    idle.wait_for(timeout=MS)  # the run is over: no unit works
    assert page.locator("#live-working section.working").count() == 0
    assert errors == []
