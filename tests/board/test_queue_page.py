"""The merge queue on the board's page in a real headless Chromium: while candidates wait to
land, a strip over the columns lists them front first (one gating on top of another, one
waiting), each queued card says where it stands, both follow the run's events live, and the
strip goes when the run ends; a task id planted with markup shows as text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.state.events import EventKind
from tests.agents.pictures import needs_browser
from tests.board.pages import browser
from tests.board.test_app import TOKEN, serving
from tests.views.test_queue import Run, gate_on_top, plan_run, queue_repo

__all__ = ["browser"]
PLANT = "<img src=x onerror=window.__pwned=1>"
MS = 30_000  # the most a wait here takes on a loaded machine


@pytest.fixture
def queued(tmp_path: Path) -> Iterator[tuple[int, Run]]:
    """A plan of three tasks whose run's queue has T-001 gating at the front, T-002 gating on
    top of it and T-003 waiting; its board, and the run to write more of the queue's events."""
    repo = queue_repo(tmp_path)
    with plan_run(repo) as run, serving(repo) as port:
        gate_on_top(run)
        yield port, run


def strip(page: Any) -> list[str]:
    """The strip's entries as the page shows them, front first, spaces made single."""
    shown = page.locator("#queue li").all_inner_texts()
    return [" ".join(text.split()) for text in shown]


@needs_browser
def test_the_strip_and_the_cards_show_what_gates_on_top_of_what_and_what_waits(
    queued: tuple[int, Run], browser: Any, tmp_path: Path
) -> None:
    port, run = queued
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    queue = page.locator("#queue")
    queue.wait_for(state="visible", timeout=MS)
    assert queue.get_attribute("aria-label") == "Merge queue"
    assert page.locator("#queue h2").inner_text().lower() == "merge queue"
    front, second, third = strip(page)
    assert re.fullmatch(r"T-001 gating \d+s", front), front
    assert re.fullmatch(r"T-002 gating on top of T-001 \d+s", second), second
    assert third == "T-003 waits"
    card = page.locator("[data-task=T-002].card .queue")
    assert re.fullmatch(r"merge queue: gating on top of T-001 \d+s", card.inner_text())
    assert page.locator("[data-task=T-003].card .queue").inner_text() == "merge queue: waits"
    # The gate's time counts up between reads, as a working unit's does.
    page.wait_for_function(
        "() => document.querySelector('#queue li[data-task=T-002] .elapsed').textContent !== '0s'",
        timeout=MS,
    )
    page.screenshot(path=str(tmp_path / "queue-gating.png"))

    # Live: T-001 lands, T-002's checks pass on top of it; then the run ends.
    run.log(EventKind.INTEGRATED, "T-001", sha="c3")
    run.gated("T-002", "T-001")
    page.wait_for_function("() => document.querySelectorAll('#queue li').length === 2", timeout=MS)
    assert strip(page) == ["T-002 passed", "T-003 waits"]
    assert page.locator("[data-task=T-001].card .queue").count() == 0
    assert page.locator("[data-task=T-002].card .queue").inner_text() == "merge queue: passed"
    page.screenshot(path=str(tmp_path / "queue-passed.png"))
    run.log(EventKind.RUN_FINISHED, status="completed", message="done")
    queue.wait_for(state="hidden", timeout=MS)
    assert page.locator(".card .queue").count() == 0
    assert errors == []


@needs_browser
def test_a_queued_task_id_with_markup_shows_as_text(
    queued: tuple[int, Run], browser: Any, tmp_path: Path
) -> None:
    port, run = queued
    run.queued(PLANT, "T-001", "T-002", "T-003")
    page = browser.new_page(viewport={"width": 1280, "height": 400})
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("#queue li").nth(3).wait_for(timeout=MS)
    assert strip(page)[3] == f"{PLANT} waits"
    assert page.locator("#queue img").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.screenshot(path=str(tmp_path / "queue-planted.png"))
