"""The terminal board's frame over a real plan run by the replay agent: each task in its
status's column (the one `show --json` gives), with what it waits for and its cost so far; a
title planted with escape sequences and rich markup shows as inert text; a move shows in the
next frame; the merge queue shows over the columns and on each queued card while it has
entries."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from taskhand.board.reader import plan_data
from taskhand.run import moves
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle
from taskhand.views.board import Frame, card
from tests import ROOT
from tests.conftest import RunCli
from tests.pipeline.test_full import plan_repo, replay
from tests.runs import run_plan
from tests.views.test_queue import gate_on_top, plan_run, queue_repo
from tests.views.test_terminal import EVIL, assert_clean

HEADING = re.compile(r"╭─+ (\S+) \((\d+)\) ─*╮")
CARD = re.compile(r"│ ([A-Z]+-\d+)\b")


def waiting_plan(tmp_path: Path) -> Path:
    """A repository whose full-pipeline plan has T-001 waiting for its plan's approval (its
    writer and planner cost $0.75 between them) and T-002 a person's draft."""
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    roles = {"writer": [{"resolution": "# Spec", "cost": 0.5}], "planner": [{"cost": 0.25}]}
    summary, _ = run_plan(
        repo / "plan", repo, replay(tmp_path, "T-001", roles), settings={"pipeline": "full"}
    )
    assert summary.status == "waiting"
    moves.new(repo / "plan", "Export as CSV", "A button that downloads the list.", "logic", repo)
    return repo


def draw(repo: Path, width: int = 32, color: bool = False) -> str:
    """A frame as the terminal would show it (`width` 32: one column a row, read top down)."""
    console = Console(
        file=io.StringIO(), width=width, record=True, force_terminal=color, color_system="truecolor"
    )
    console.print(Frame(plan_data(repo / "plan", repo), datetime.now(UTC)))
    if color:
        output = console.file.getvalue()  # type: ignore[attr-defined]
        assert isinstance(output, str)
        return output
    return console.export_text()


def placed(text: str) -> dict[str, str]:
    """Each task's column, as the frame shows it: under the heading whose box holds it."""
    found: dict[str, str] = {}
    boxes: list[tuple[int, int, str]] = []  # where each column of the row starts and ends
    for line in text.splitlines():
        headings = list(HEADING.finditer(line))
        if headings:
            boxes = [(h.start(), h.end(), h[1]) for h in headings]
        for shown in CARD.finditer(line):
            found[shown[1]] = next(c for start, end, c in boxes if start <= shown.start() < end)
    return found


def head(text: str) -> str:
    """The lines above the first column, as one line."""
    lines = []
    for line in text.splitlines():
        if HEADING.match(line):
            break
        lines.append(line)
    return " ".join(" ".join(lines).split())


def card_of(text: str, task: str) -> str:
    """The lines of `task`'s card, inner text joined by spaces."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if CARD.match(line) and task in line)
    inner = []
    for line in lines[start:]:
        if not line.startswith("│") or (inner and CARD.match(line)) or not line.strip("│ "):
            break
        inner.append(line.strip("│ "))
    return " ".join(inner)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return waiting_plan(tmp_path)


def test_each_task_shows_in_its_status_column_with_what_it_waits_for(
    repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = draw(repo)
    # As the web board counts: T-001's approval is due, and the draft waits for its submit.
    assert head(text) == "Dark mode 2 tasks; 2 wait for a person"
    assert placed(text) == {"T-002": "draft", "T-001": "planned"}  # in the lifecycle's order
    shown = card_of(text, "T-001")
    assert "Dark mode toggle" in shown and "logic" in shown
    assert "waits for approval of the plan (or a revise)" in shown
    assert "$0.7500 so far" in shown  # what stats gives for it
    assert "waits for a person to submit the draft" in card_of(text, "T-002")
    monkeypatch.chdir(repo)
    listed = json.loads(run_cli("show", "plan", "--json").stdout)["tasks"]
    assert placed(text) == {t["id"]: t["lifecycle"] for t in listed}
    stats = run_cli("stats").stdout  # the latest run's
    assert re.search(r"T-001 .*\$0\.7500", stats), stats


def test_the_columns_sit_side_by_side_when_the_terminal_is_wide(repo: Path) -> None:
    text = draw(repo, width=100)
    heads = [line for line in text.splitlines() if "draft (1)" in line]
    assert len(heads) == 1 and "planned (1)" in heads[0]  # one row of columns


def test_a_title_with_escapes_and_markup_shows_as_inert_text(repo: Path) -> None:
    task = repo / "plan" / "T-001-toggle.md"
    planted = f"[bold]Loud[/bold] {EVIL}"
    task.write_text(task.read_text().replace("title: Dark mode toggle", f"title: {planted}"))
    text = draw(repo, width=200)
    assert_clean(text)
    assert "[bold]Loud[/bold]" in text and "[red]red[/red]" in text  # as typed, not styled
    output = draw(repo, width=200, color=True)
    own = re.sub(r"\x1b\[[0-9;]*m", "", output)  # rich's own colours; nothing else may be left
    assert "\x1b" not in own and "\x9b" not in own and "]52;" not in own
    assert "[bold]Loud[/bold]" in own


def test_after_a_move_the_next_frame_shows_the_task_in_its_new_column(repo: Path) -> None:
    assert placed(draw(repo))["T-001"] == "planned"
    moves.approve("T-001", repo / "plan", repo)
    text = draw(repo)
    assert placed(text) == {"T-002": "draft", "T-001": "ready"}
    assert "waits for" not in card_of(text, "T-001")
    assert head(text) == "Dark mode 2 tasks; 1 waits for a person"  # the draft


def test_a_card_shows_the_working_unit_its_time_and_the_pull_request() -> None:
    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    started = (now - timedelta(seconds=75)).isoformat().replace("+00:00", "Z")
    task = {
        "id": "T-009",
        "title": "Ship it",
        "working": True,
        "unit": {"role": "implementer", "started": started},
        "pr": "https://example.invalid/pull/7",
    }
    shown = card(task, now).plain
    assert shown.splitlines() == ["T-009", "Ship it", "> implementer 1:15", "PR " + task["pr"]]
    assert card({**task, "unit": None}, now).plain.splitlines()[2] == "> working"


def test_a_card_names_the_dependencies_it_waits_on_until_they_are_done() -> None:
    now = datetime.now(UTC)
    task = {"id": "T-003", "title": "Last", "dependencies": ["T-001", "T-002"], "working": False}
    assert card(task, now).plain.splitlines()[-1] == "waits on T-001, T-002"
    assert card(task, now, frozenset({"T-001"})).plain.splitlines()[-1] == "waits on T-002"
    assert "waits" not in card(task, now, frozenset({"T-001", "T-002"})).plain
    asked = {**task, "waits_for": "an answer to Q1"}  # a person's move comes first
    assert card(asked, now).plain.splitlines()[-1] == "waits for an answer to Q1"


def test_the_columns_come_in_the_web_boards_order() -> None:
    script = (ROOT / "src" / "taskhand" / "board" / "static" / "board.js").read_text()
    found = re.search(r"const COLUMNS = \[([^\]]*)\]", script)
    assert found, "board.js names its columns in COLUMNS"
    assert re.findall(r'"([a-z-]+)"', found[1]) == [str(status) for status in Lifecycle]


def test_the_merge_queue_shows_over_the_columns_and_on_each_queued_card(tmp_path: Path) -> None:
    repo = queue_repo(tmp_path)
    assert "merge queue" not in draw(repo, width=200)  # nothing queued: no line for it
    with plan_run(repo) as run:
        gate_on_top(run)
        text = draw(repo, width=200)
        line = next(line for line in text.splitlines() if line.startswith("merge queue: "))
        assert re.fullmatch(
            r"merge queue: T-001 gating 0:0\d · T-002 gating on top of T-001 0:0\d · T-003 waits",
            line.rstrip(),
        ), line
        assert "merge queue: gating on top of T-001" in card_of(text, "T-002")
        assert "merge queue: waits" in card_of(text, "T-003")
        run.log(EventKind.INTEGRATED, "T-001", sha="c3")
        run.gated("T-002", "T-001", current=False)
        text = draw(repo, width=200)
        assert "merge queue: T-002 waits · T-003 waits" in text
        assert "merge queue" not in card_of(text, "T-001")
        run.log(EventKind.RUN_FINISHED, status="completed", message="done")
        assert "merge queue" not in draw(repo, width=200)  # the run is over: the line goes


def test_a_queued_task_id_with_escapes_shows_as_inert_text(tmp_path: Path) -> None:
    repo = queue_repo(tmp_path)
    with plan_run(repo) as run:
        run.queued(f"[bold]T-9[/bold] {EVIL}")
        output = draw(repo, width=300, color=True)
    own = re.sub(r"\x1b\[[0-9;]*m", "", output)
    assert "\x1b" not in own and "\x9b" not in own and "]52;" not in own
    assert "merge queue: [bold]T-9[/bold]" in own
