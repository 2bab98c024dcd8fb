"""Conflicts predicted before dispatch: with several jobs, a task that may change what a
running task changes (its declared `paths`, or the files its earlier attempts changed) waits
for it instead of running beside it, the longest remaining path still first; tasks apart run
side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan import schedule
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.plans import md_task
from tests.runs import Recorder, attempt, make_repo, run_plan, script


def plan_of(tmp_path: Path, tasks: dict[str, dict[str, str]]) -> Path:
    """A plan whose task X writes the file its `writes` key names, checked by `test -f`."""
    files = {"plan/overview.md": "# Files\n\n## Goal\nWrite files.\n"}
    for task_id, keys in tasks.items():
        target = keys.pop("writes")
        body = (
            f"## Description\nWrite {target}.\n\n## Acceptance criteria\n"
            f"- `$ test -f {target}` passes\n"
        )
        files[f"plan/{task_id}-file.md"] = md_task(task_id, f"Write {target}", body, **keys)
    return make_repo(tmp_path / "repo", files)


def spans(recorder: Recorder) -> dict[str, tuple[int, int]]:
    """Each task's implementer unit as (start, end) positions in the run's log."""
    found: dict[str, list[int]] = {}
    for index, event in enumerate(recorder.events):
        if event.kind in ("unit_started", "unit_finished") and event.task_id:
            found.setdefault(event.task_id, []).append(index)
    return {t: (marks[0], marks[-1]) for t, marks in found.items()}


def side_by_side(first: tuple[int, int], second: tuple[int, int]) -> bool:
    return first[0] < second[1] and second[0] < first[1]


@pytest.mark.parametrize("jobs", [2, 4])
def test_tasks_whose_paths_overlap_wait_and_the_rest_run_beside(tmp_path: Path, jobs: int) -> None:
    """T-002 has a task waiting on it, so it starts first; T-001 may change what T-002
    changes (shared/** holds shared/a.txt), so it waits for T-002; T-003 is apart and runs
    beside T-002. Nothing conflicts, so no unit is wasted."""
    repo = plan_of(
        tmp_path,
        {
            "T-001": {"writes": "shared/b.txt", "paths": "shared/**"},
            "T-002": {"writes": "shared/a.txt", "paths": "shared/a.txt"},
            "T-003": {"writes": "other.txt", "paths": "other.txt"},
            "T-004": {"writes": "later.txt", "paths": "later.txt", "depends": "T-002"},
        },
    )
    writes = {"T-001": "shared/b.txt", "T-002": "shared/a.txt", "T-003": "other.txt"}
    tasks = {t: [attempt({"write": f, "text": "x\n"}, {"sleep": 0.6})] for t, f in writes.items()}
    tasks["T-004"] = [attempt({"write": "later.txt", "text": "x\n"})]
    summary, recorder = run_plan(
        repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": jobs}
    )
    assert summary.status == "completed", summary.message
    ran = spans(recorder)
    assert not side_by_side(ran["T-001"], ran["T-002"]), recorder.events
    assert ran["T-002"][0] < ran["T-001"][0]  # the longest remaining path went first
    assert side_by_side(ran["T-002"], ran["T-003"])
    held = recorder.of("task_held")
    assert [(e.task_id, e.data["behind"], e.data["paths"]) for e in held] == [
        ("T-001", ["T-002"], ["shared/**"])
    ]
    with Store.open(StateDir.for_repo(repo).database) as store:
        assert all(a.status == "passed" for a in store.attempts(summary.run_id))


def test_tasks_without_paths_are_not_held(tmp_path: Path) -> None:
    """Nothing predicts a conflict between tasks that declare no paths and have no earlier
    attempts: they run side by side as before."""
    repo = plan_of(tmp_path, {"T-001": {"writes": "a.txt"}, "T-002": {"writes": "b.txt"}})
    tasks = {
        t: [attempt({"write": f, "text": "x\n"}, {"sleep": 0.6})]
        for t, f in (("T-001", "a.txt"), ("T-002", "b.txt"))
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 2})
    assert summary.status == "completed", summary.message
    ran = spans(recorder)
    assert side_by_side(ran["T-001"], ran["T-002"])
    assert recorder.of("task_held") == []


def test_apart_keeps_the_order_and_never_leaves_nothing_running() -> None:
    """Files earlier attempts changed count as the task's own; the best task starts when
    nothing runs whatever it meets; a held task does not block the ones after it."""
    prints = {
        "A": ["src/app.py"],  # changed by an earlier attempt
        "B": ["src/**"],
        "C": ["docs/guide.md"],
        "D": ["src/app.py"],
    }
    assert schedule.apart(["B", "A", "C", "D"], 3, prints, []) == (
        ["B", "C"],
        {"A": ["B"], "D": ["B"]},
    )
    assert schedule.apart(["A", "C"], 2, prints, ["D"]) == (["C"], {"A": ["D"]})
    assert schedule.apart(["A", "C"], 1, prints, []) == (["A"], {})
