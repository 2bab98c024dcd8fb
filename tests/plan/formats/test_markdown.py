"""Our extensions to the Markdown tasks dialect, and writing new task files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskhand.plan import formats
from taskhand.plan.formats import markdown
from taskhand.plan.model import Check, Criterion, Status, Task
from tests.conftest import WritePlan
from tests.plans import md_plan, md_task


def test_extension_keys(write_plan: WritePlan) -> None:
    files = md_plan(("T-001", {}))
    files["T-002-x.md"] = md_task(
        "T-002",
        phase="2",
        depends="T-001",
        paths="src/cli/**, tests/test_cli.py",
        kind="ui",
        agent="codex",
        model="gpt-5",
        timeout="10m",
        max_attempts="4",
        owner="ada",
    )
    plan, problems = formats.load(write_plan(files))
    assert plan is not None
    task = plan.task("T-002")
    assert task is not None
    assert (task.phase, task.dependencies, task.paths) == (
        2,
        ["T-001"],
        ["src/cli/**", "tests/test_cli.py"],
    )
    assert (task.kind, task.agent, task.model) == ("ui", "codex", "gpt-5")
    assert (task.timeout_seconds, task.max_attempts) == (600.0, 4)
    assert task.extra == {"owner": "ada"}
    assert [p.rule for p in problems] == ["unknown-key"]
    assert [p.number for p in plan.phases] == [1, 2]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("phase", "0", "phase: '0' is not a whole number from 1 to 999999"),
        ("depends", "task-one", "is not a task id"),
        ("kind", "backend", "'backend' is not one of logic, ui, vague"),
        ("timeout", "forever", "not a duration"),
        ("max_attempts", "-1", "not a whole number"),
        ("agent", "", "agent: is empty"),
    ],
)
def test_bad_extension_values(write_plan: WritePlan, key: str, value: str, message: str) -> None:
    files = md_plan(("T-001", {key: value}))
    _, problems = formats.load(write_plan(files))
    [problem] = [p for p in problems if p.is_error]
    assert message in problem.message
    assert problem.line == 4


def test_typo_in_a_key_suggests_the_right_one(write_plan: WritePlan) -> None:
    _, problems = formats.load(write_plan(md_plan(("T-001", {"depend": "T-002"}))))
    [problem] = problems
    assert not problem.is_error
    assert "did you mean 'depends'?" in problem.render()


def test_command_criteria_become_checks(write_plan: WritePlan) -> None:
    body = "## Description\nx\n\n## Acceptance criteria\n- `$ pytest -q` (exit 1)\n- prose\n"
    plan, _ = formats.load(write_plan({"overview.md": "o", "T-1.md": md_task("T-1", body=body)}))
    assert plan is not None
    assert plan.tasks[0].checks == [Check(("pytest", "-q"), expected_exit_code=1)]


def test_rendered_task_reads_back_the_same(write_plan: WritePlan) -> None:
    task = Task(
        "T-007",
        "Render me",
        "## Problem\nIt breaks.\n\n## Description\nFix it.",
        [Criterion("`$ pytest` passes", Check(("pytest",))), Criterion("no regressions")],
        phase=3,
        dependencies=["T-001"],
        paths=["src/**"],
        kind="logic",
        timeout_seconds=90.0,
        max_attempts=2,
    )
    files = {
        "overview.md": "o",
        "T-001-a.md": md_task("T-001", phase="3"),
        "T-007-render-me.md": markdown.render_task(task),
    }
    plan, problems = formats.load(write_plan(files))
    assert plan is not None and not [p for p in problems if p.is_error]
    read = plan.task("T-007")
    assert read is not None
    for name in (
        "title",
        "description",
        "criteria",
        "phase",
        "dependencies",
        "paths",
        "kind",
        "timeout_seconds",
        "max_attempts",
    ):
        assert getattr(read, name) == getattr(task, name), name


def test_status_overlay(tmp_path: Path) -> None:
    path = tmp_path / "task-status.json"
    path.write_text(json.dumps({"T-001": "done", "T-002": "failed", "T-003": "WAIT"}))
    assert markdown.read_status_overlay(path) == {
        "T-001": Status.DONE,
        "T-002": Status.FAIL,
        "T-003": Status.WAIT,
    }
    path.write_text('{"T-001": "finished"}')
    with pytest.raises(ValueError, match="fix: use pending, done, failed"):
        markdown.read_status_overlay(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        markdown.read_status_overlay(path)
