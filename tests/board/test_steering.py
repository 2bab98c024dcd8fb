"""A person steers the full demo's plan from the board, in headless Chromium, while the run
goes on beside it (`taskhand run --board`, the replay agent, the stand-in gh): answers the
interview in the card's picker, revises a plan, approves one by dragging it onto the column
it lands in (a drag against the rules is refused, saying why), accepts the prototype by
key, parks a task and reopens it, approves by button, and sees each task delivered with its
pull request. A second page (another browser's, with the token) sees every move live; at
each step the page, `show --json` and `stats` say the same of every task."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.demo import full
from tests.agents.pictures import needs_browser
from tests.board.pages import DOCS, RECORD_NOTIFICATIONS, SHOTS, browser, columns
from tests.board.test_drawer_page import pick
from tests.cli.test_board import start, stop
from tests.run.test_supervisor import WAIT_SECONDS, read_until

__all__ = ["browser"]
ADDRESS = re.compile(r"board: (http://127\.0\.0\.1:\d+/)#token=(\S+)")
MS = int(WAIT_SECONDS * 1000)


class Steered:
    """The demo's repository, its run with the board beside it, and a page of each kind."""

    def __init__(self, repo: Path, env: dict[str, str], person: Any, watcher: Any) -> None:
        self.repo, self.env, self.person, self.watcher = repo, env, person, watcher

    def card(self, page: Any, task: str, status: str) -> Any:
        found = page.locator(f".column[data-status={status}] .card[data-task={task}]")
        found.wait_for(timeout=MS)
        return found

    def both_see(self, task: str, status: str) -> Any:
        """The card in `status` on both pages; then the three readers agree."""
        self.card(self.watcher, task, status)
        shown = self.card(self.person, task, status)
        self.agree()
        return shown

    def cli(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "taskhand", *args],
            cwd=self.repo, env=self.env, capture_output=True, text=True, timeout=WAIT_SECONDS,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def agree(self) -> None:
        """The board's page, `show --json` and `stats --json` put every task in one place
        (the page a moment later: it reads the plan again when an event arrives)."""
        deadline = time.monotonic() + 10
        while True:
            shown = {t["id"]: t["lifecycle"] for t in self.cli("show", "plan", "--json")["tasks"]}
            stats = {t["task_id"]: t["status"] for t in self.cli("stats", "--json")["tasks"]}
            page = columns(self.person)
            if (page, {t: stats.get(t, shown[t]) for t in shown}) == (shown, shown):
                return
            assert time.monotonic() < deadline, (page, shown, stats)
            time.sleep(0.2)

    def moved(self, line: str, times: int = 1) -> None:
        """The Live dock of both pages lists `line` (a move, as 'plan → planned') `times`."""
        for page in (self.person, self.watcher):
            page.wait_for_function(
                "([line, times]) => [...document.querySelectorAll('#live-events .what')]"
                ".filter(e => e.textContent.startsWith(line)).length >= times",
                arg=[line, times],
                timeout=MS,
            )


@pytest.fixture
def steered(tmp_path: Path, isolated_home: Path, browser: Any) -> Iterator[Steered]:
    repo, _, script, gh_state = full.build(tmp_path)
    env = {
        **os.environ,
        "TASKHAND_HOME": str(isolated_home),
        "TASKHAND_GH": f"{shlex.quote(sys.executable)} -m taskhand.demo.gh",
        "FAKE_GH_STATE": str(gh_state),
        "FAKE_GH_REMOTE": str(tmp_path / "remote.git"),
    }
    process = start(repo, env, "run", "plan", "--board", "--script", str(script))
    seen: list[str] = []
    try:
        read_until(process, "board: ", seen)
        found = ADDRESS.search("".join(seen))
        assert found, "".join(seen)
        address, token = found[1], found[2]
        person_context = browser.new_context(viewport={"width": 1600, "height": 1000})
        person_context.add_init_script(RECORD_NOTIFICATIONS)
        person = person_context.new_page()
        person.on("dialog", lambda dialog: dialog.accept(ANSWERS[dialog.message]))
        person.goto(f"{address}#token={token}")
        watcher = browser.new_context().new_page()
        watcher.goto(f"{address}#token={token}")
        yield Steered(repo, env, person, watcher)
    finally:
        stop(process, seen)


# What the person types into each prompt the page shows.
ANSWERS = {
    "T-001: What should the plan change?": "Say which file the filter goes in.",
    "T-002: Why park it?": "Waiting for the copy from design.",
}


def shot(page: Any, name: str) -> None:
    if os.environ.get(SHOTS) == "1":
        page.screenshot(path=str(DOCS / name))


@needs_browser
def test_a_person_steers_the_whole_plan_from_the_board(steered: Steered) -> None:
    s, person = steered, steered.person
    # The writer asks: the card shows the question's options, the recommended one first.
    card = s.both_see("T-001", "needs-input")
    assert "Q1: Where should the search box live?" in card.inner_text()
    options = card.locator("button.option")
    assert options.first.inner_text().endswith("— recommended")
    assert person.title() == "(1) taskhand board"
    options.first.click()  # (a), in the picker

    # The planner's plan waits for approval; a person asks for changes first.
    card = s.both_see("T-001", "planned")
    assert "waits for approval of the plan" in card.inner_text()
    card.locator("button[data-move=revise]").click()
    s.moved("planned → plan · revise")
    s.moved("plan → planned", times=2)  # the planner's second plan
    card = s.both_see("T-001", "planned")
    person.wait_for_function("window.shown.some(n => n.title === 'T-001 waits for you')")

    # A drag against the rules is refused with its reason, and nothing moves.
    card.drag_to(person.locator(".column[data-status=done]"))
    notice = person.locator("#notice")
    notice.wait_for(state="visible")
    assert notice.inner_text() == (
        "T-001 cannot go from planned to done: the moves open are "
        "approve → prototype, revise → plan, park → parked"
    )
    assert columns(person)["T-001"] == "planned"
    # Dragged onto the prototype column: approve, which lands a ui task there.
    card.drag_to(person.locator(".column[data-status=prototype]"))
    card = person.locator(".column[data-status=prototype] .card[data-task=T-001].waiting")
    card.filter(has_text="waits for review of the prototype").wait_for(timeout=MS)
    card = s.both_see("T-001", "prototype")
    shot(person, "board.png")

    # Accepted by key, on the focused card.
    card.focus()
    person.keyboard.press("e")
    s.both_see("T-001", "delivered")

    # T-002's plan: parked by button (saying why), reopened, approved.
    card = s.both_see("T-002", "planned")
    card.locator("button[data-move=park]").click()
    card = s.both_see("T-002", "parked")
    assert "Waiting for the copy from design." in card.inner_text()
    card.locator("button[data-move=reopen]").click()
    card = s.both_see("T-002", "planned")
    card.locator("button[data-move=approve]").click()
    s.both_see("T-002", "delivered")

    for task, number in (("T-001", "1"), ("T-002", "2")):
        link = s.card(s.watcher, task, "delivered").locator("a.pr")
        assert link.inner_text() == f"pull request {number}"
        assert link.get_attribute("href", timeout=MS).endswith(f"/pull/{number}")
    assert person.title() == "taskhand board"
    live = person.locator("#live-events")
    assert live.locator("[data-kind=delivered]").count() >= 2
    assert "planned → prototype" in live.inner_text()
    shot(person, "board-delivered.png")

    # T-001's drawer: the judge's rejection in the ledger, the change, the units, qa's evidence.
    s.card(person, "T-001", "delivered").locator(".title").click()
    attempts = pick(person, "Attempts")
    assert "check.py search passes without any filtering" in attempts.inner_text()
    diff = pick(person, "Diff")
    diff.locator("section.file .path", has_text="check.py").wait_for(timeout=MS)
    assert any("function filter" in line for line in diff.locator("span.add").all_inner_texts())
    units = pick(person, "Units")
    for role in ("writer", "planner", "designer", "qa", "judge"):
        assert role in units.locator("table").inner_text()
    evidence = pick(person, "Evidence")
    figure = evidence.locator("figure.evidence", has_text="a search box shows above the list")
    figure.locator("img").wait_for(timeout=MS)
    person.wait_for_function(
        "() => [...document.querySelectorAll('#drawer-tab figure.evidence img')]"
        ".every(i => i.naturalWidth > 0)"
    )
    shot(person, "board-evidence.png")
