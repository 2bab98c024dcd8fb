"""The drawer's Units tab in a real headless Chromium shows each unit's usage as its agent
reported it: cache writes and thinking tokens get a column only on a task where some unit
reported them, so the table stays compact for the agents that report neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.pictures import needs_browser
from tests.board.pages import browser
from tests.board.test_app import TOKEN, call, serving
from tests.board.test_drawer_page import pick, shot_path
from tests.plans import md_plan
from tests.runs import attempt, make_repo, run_plan, script, write

__all__ = ["browser"]


def reported_repo(tmp_path: Path) -> Path:
    """A run where T-001's implementer and reviewer report cache writes and thinking, and
    T-002's report neither."""
    files = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {}), ("T-002", {})).items()}
    repo = make_repo(tmp_path / "repo", files)
    review = {"verdict": "accept", "tokens_in": 800, "tokens_out": 60, "tokens_thinking": 25}
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(
                    write("a.txt", "a\n"),
                    tokens_in=9000,
                    tokens_out=700,
                    tokens_cached=5000,
                    tokens_cache_write=2500,
                    tokens_thinking=300,
                    cost=0.5,
                    review=review,
                )
            ],
            "T-002": [attempt(write("b.txt", "b\n"), tokens_in=100, tokens_out=10)],
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay)
    assert summary.status == "completed"
    return repo


def rows(page: Any) -> list[list[str]]:
    table = page.locator("#drawer-tab table")
    return [
        [str(cell) for cell in row.locator("th, td").all_inner_texts()]
        for row in table.locator("tr").all()
    ]


def open_units(page: Any, port: int, task: str) -> Any:
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator(f"[data-task={task}] .title").click()
    page.locator("#drawer").wait_for(state="visible")
    page.locator("#drawer-tabs button[data-tab=Units]").wait_for()
    return pick(page, "Units")


@needs_browser
def test_units_show_cache_writes_and_thinking_only_where_reported(
    tmp_path: Path, browser: Any
) -> None:
    repo = reported_repo(tmp_path)
    with serving(repo) as port:
        status, found = call(port, "GET", "/api/tasks/T-001")
        assert status == 200, found
        reported = [(u["tokens_cache_write"], u["tokens_thinking"]) for u in found["units"]]
        assert reported == [(2500, 300), (0, 25)]

        page = browser.new_page(viewport={"width": 1440, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        open_units(page, port, "T-001")
        head, implementer, reviewer = rows(page)
        assert head[5:10] == ["time", "tokens", "cache\xa0w", "thinking", "$"]
        assert implementer[6:9] == ["9000 in / 700 out (5000 cached)", "2500", "300"]
        assert reviewer[7:9] == ["0", "25"]
        page.screenshot(path=str(shot_path(tmp_path, "board-units-usage.png")))

        other = browser.new_page(viewport={"width": 1440, "height": 900})
        other.on("pageerror", lambda error: errors.append(str(error)))
        open_units(other, port, "T-002").locator("table").wait_for()
        head, *_ = rows(other)
        assert "cache\xa0w" not in head and "thinking" not in head
        assert head[5:8] == ["time", "tokens", "$"]
        assert errors == []
