"""Imported plans run: a Spec Kit tasks.md (Markdown dialect) and a Taskmaster tasks.json
(TaskTrack) go through `taskhand run` with the replay agent to the end, each task's change
landing inside the paths the import gave it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskhand.plan.formats import load
from taskhand.plan.imports import import_plan
from taskhand.plan.model import Dialect, Plan, Status
from tests.plan.imports import FIXTURES
from tests.runs import attempt, git, make_repo, run_plan, script, write


def imported_repo(tmp_path: Path, fixture: str, dialect: Dialect) -> tuple[Path, Plan]:
    repo = make_repo(tmp_path / "repo")
    import_plan(FIXTURES / fixture, repo / "plan", dialect, code="SHOP")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "imported plan")
    plan, _ = load(repo / "plan")
    assert plan is not None
    return repo, plan


def changes(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    """One attempt per open task, writing a file where its paths allow."""
    tasks = {}
    for task in (t for t in plan.tasks if t.status is Status.OPEN):
        target = task.paths[0] if task.paths else f"work/{task.id}.txt"
        if target.endswith("/"):
            target += f"{task.id}.md"
        tasks[task.id] = [attempt(write(target, f"{task.id}: {task.title}\n"))]
    return tasks


def test_an_imported_spec_kit_plan_runs_to_the_end(tmp_path: Path) -> None:
    repo, plan = imported_repo(tmp_path, "speckit-kanban.md", Dialect.MARKDOWN)
    tasks = changes(plan)
    summary, record = run_plan(repo / "plan", repo, script(tmp_path, tasks))
    assert summary.status == "completed", record.steps()
    concluded = [e.task_id for e in record.of("task_concluded")]
    assert sorted(concluded) == sorted(t.id for t in plan.tasks)
    board = git(repo, "show", f"{summary.run_branch}:frontend/src/components/Board.tsx")
    assert board == "T-010: Persist moves through the API in frontend/src/components/Board.tsx\n"
    # a task ran only once everything it depends on had landed
    order = {task_id: n for n, task_id in enumerate(concluded)}
    for task in plan.tasks:
        assert all(order[dep] < order[task.id] for dep in task.dependencies), task.id


def test_an_imported_taskmaster_plan_runs_to_the_end(tmp_path: Path) -> None:
    repo, plan = imported_repo(tmp_path, "taskmaster-tagged.json", Dialect.TASKTRACK)
    tasks = changes(plan)
    assert len(tasks) == 8  # 1, 2.1 and the cancelled 5 are DONE already
    summary, record = run_plan(repo / "plan", repo, script(tmp_path, tasks))
    assert summary.status == "completed", record.steps()
    assert sorted(e.task_id for e in record.of("task_concluded")) == sorted(tasks)
    after, _ = load(repo / "plan")
    assert after is not None and all(t.status is Status.DONE for t in after.tasks)


@pytest.mark.parametrize(
    ("fixture", "dialect"),
    [
        ("speckit-albums.md", Dialect.TASKTRACK),
        ("speckit-weather-cli.md", Dialect.MARKDOWN),
        ("speckit-kanban.md", Dialect.TASKTRACK),
        ("taskmaster-checkout.json", Dialect.MARKDOWN),
        ("taskmaster-legacy.json", Dialect.TASKTRACK),
        ("taskmaster-tagged.json", Dialect.MARKDOWN),
    ],
)
def test_every_imported_fixture_runs_with_its_dependencies_in_order(
    tmp_path: Path, fixture: str, dialect: Dialect
) -> None:
    """Each fixture, in the dialect the tests above do not give it: every task it left to
    do is concluded once, never before what it depends on."""
    repo, plan = imported_repo(tmp_path, fixture, dialect)
    tasks = changes(plan)
    assert tasks, f"{fixture}: nothing left to run"
    summary, record = run_plan(repo / "plan", repo, script(tmp_path, tasks))
    assert summary.status == "completed", record.steps()
    concluded = [e.task_id for e in record.of("task_concluded")]
    assert sorted(concluded) == sorted(tasks)
    order = {task_id: n for n, task_id in enumerate(concluded)}
    for task_id in tasks:
        deps = [d for d in plan.by_id()[task_id].dependencies if d in order]
        assert all(order[d] < order[task_id] for d in deps), task_id
