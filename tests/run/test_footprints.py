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


def test_files_an_earlier_attempt_changed_hold_a_task_back(tmp_path: Path) -> None:
    """T-002 declares no paths, but its first attempt changed notes.txt (and conflicted with
    T-001's line): while its second attempt runs, T-003, which declares notes.txt and becomes
    eligible meanwhile (its dependency T-005 lands), waits for it instead of conflicting."""
    files = {"notes.txt": "one\ntwo\nthree\n", "plan/overview.md": "# Lines\n\n## Goal\nLines.\n"}
    for task_id, check, keys in (
        ("T-001", "grep -q ONE notes.txt", {}),
        ("T-002", "grep -q TWO notes.txt", {}),
        ("T-003", "grep -q THREE notes.txt", {"paths": "notes.txt", "depends": "T-005"}),
        ("T-005", "test -f f5.txt", {"paths": "f5.txt"}),
    ):
        body = f"## Description\nWork.\n\n## Acceptance criteria\n- `$ {check}` passes\n"
        files[f"plan/{task_id}-work.md"] = md_task(task_id, "Work", body, **keys)
    repo = make_repo(tmp_path / "repo", files)

    def edit(old: str, new: str, seconds: float) -> dict[str, object]:
        return attempt(
            {"edit": "notes.txt", "old": f"{old}\n", "new": f"{new}\n"}, {"sleep": seconds}
        )

    tasks = {
        "T-001": [edit("one", "ONE", 0.1)],
        "T-002": [edit("two", "TWO", 0.8), edit("two", "TWO", 3.0)],
        "T-003": [edit("three", "THREE", 0.1)],
        "T-005": [attempt({"write": "f5.txt", "text": "x\n"}, {"sleep": 2.5})],
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 3})
    assert summary.status == "completed", summary.message
    held = recorder.of("task_held")
    assert [(e.task_id, e.data["behind"], e.data["paths"]) for e in held] == [
        ("T-003", ["T-002"], ["notes.txt"])
    ]
    order = [(e.kind, e.task_id) for e in recorder.events]
    assert order.index(("integrated", "T-002")) < order.index(("unit_started", "T-003"))
    with Store.open(StateDir.for_repo(repo).database) as store:
        ended = [(a.task_id, a.status) for a in store.attempts(summary.run_id)]
    # T-002's own first conflict, requeued; no other attempt lost, none failed.
    assert [t for t, status in ended if status != "passed"] == ["T-002"]
    assert ("T-002", "requeued") in ended
