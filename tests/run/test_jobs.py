"""`--jobs N`: several tasks at once, each in its own workspace, their candidates landing one
at a time on the run branch. A candidate built on a base the branch moved past is replayed
onto it and gated again; one that conflicts goes back for a new attempt from the new head.
With one job nothing changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskhand import config as runconfig
from taskhand.plan import schedule, validate
from taskhand.plan.model import Status
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script

LINES = "".join(f"line {n}\n" for n in range(1, 9))


def neighbours(tmp_path: Path, count: int = 4) -> Path:
    """A plan of `count` independent tasks, task N changing line N of one file (the lines
    next to each other), each checked by its own acceptance command."""
    files = {"notes.txt": LINES, "plan/overview.md": "# Lines\n\n## Goal\nEdit lines.\n"}
    for n in range(1, count + 1):
        body = (
            f"## Description\nChange line {n}.\n\n## Acceptance criteria\n"
            f"- `$ grep -qx 'LINE {n} CHANGED' notes.txt` passes\n"
        )
        files[f"plan/T-00{n}-line.md"] = md_task(f"T-00{n}", f"Line {n}", body)
    return make_repo(tmp_path / "repo", files)


def edit_line(n: int) -> dict[str, Any]:
    return attempt(
        {"edit": "notes.txt", "old": f"line {n}\n", "new": f"LINE {n} CHANGED\n"},
        {"sleep": 0.5},  # long enough for the others to start meanwhile
    )


def test_four_jobs_land_every_task_on_neighbouring_lines(tmp_path: Path) -> None:
    repo = neighbours(tmp_path)
    replay = script(tmp_path, {f"T-00{n}": [edit_line(n)] for n in range(1, 5)})
    summary, recorder = run_plan(repo / "plan", repo, replay, settings={"jobs": 4})
    assert summary.status == "completed", summary.message
    # They ran side by side: a second task's unit started before the first one's ended.
    kinds = [
        (e.kind, e.task_id) for e in recorder.events if e.kind in ("unit_started", "unit_finished")
    ]
    first_end = next(i for i, (k, _) in enumerate(kinds) if k == "unit_finished")
    assert len({t for k, t in kinds[:first_end] if k == "unit_started"}) >= 2
    # One commit per task on the run branch, and the final tree passes every task's check.
    log = git(repo, "log", "--format=%s", f"main..{summary.run_branch}").splitlines()
    assert len(log) == 4, log
    final = git(repo, "show", f"{summary.run_branch}:notes.txt")
    assert all(f"LINE {n} CHANGED\n" in final for n in range(1, 5)), final
    # The neighbours conflicted: some were replayed or attempted again from the new head.
    with Store.open(StateDir.for_repo(repo).database) as store:
        attempts = store.attempts(summary.run_id)
    redone = [a for a in attempts if a.status == "requeued"]
    assert redone, "four tasks from one base, on touching lines: some must conflict"
    assert all(
        "its change conflicts with that work, in notes.txt" in (a.reason or "") for a in redone
    )
    passed = {a.task_id for a in attempts if a.status == "passed"}
    assert passed == {f"T-00{n}" for n in range(1, 5)}
    # The user's checkout is as it was: main, the file, the index.
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "notes.txt").read_text() == LINES


def test_a_candidate_on_an_older_base_is_replayed_and_gated_again(tmp_path: Path) -> None:
    """Changes to files far apart replay cleanly: no task is attempted twice, and each
    replayed candidate's checks run again on the tree it lands as."""
    files = {"plan/overview.md": "# Files\n\n## Goal\nWrite files.\n"}
    for n in range(1, 4):
        check = f"- `$ test -f f{n}.txt` passes\n"
        body = f"## Description\nWrite f{n}.\n\n## Acceptance criteria\n{check}"
        files[f"plan/T-00{n}-file.md"] = md_task(f"T-00{n}", f"File {n}", body)
    repo = make_repo(tmp_path / "repo", files)
    tasks = {
        f"T-00{n}": [attempt({"write": f"f{n}.txt", "text": "x\n"}, {"sleep": 0.5})]
        for n in range(1, 4)
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 3})
    assert summary.status == "completed", summary.message
    replayed = recorder.of("replayed")
    assert replayed, "every candidate landed on its own base: nothing ran at once"
    task_id, sha = replayed[0].task_id, replayed[0].data["sha"]
    gated = [e.data["name"] for e in recorder.of("gate") if e.task_id == task_id]
    # Its own checks, and its command once more on the replayed tree, beside them and so in
    # no fixed order (the replay moved neither the paths scope judges nor the lines
    # whitespace reads).
    assert sorted(gated) == ["command", "command", "scope", "whitespace"]
    queue_checks = [e for e in recorder.of("gating") if e.task_id == task_id]
    assert sha in [e.data["sha"] for e in queue_checks]
    verdicts = [e.data["ok"] for e in recorder.of("gated") if e.task_id == task_id]
    assert verdicts and verdicts[-1] is True
    with Store.open(StateDir.for_repo(repo).database) as store:
        assert all(a.status == "passed" for a in store.attempts(summary.run_id))
    shown = git(repo, "ls-tree", "--name-only", summary.run_branch).split()
    assert {"f1.txt", "f2.txt", "f3.txt"} <= set(shown)


def test_one_job_is_the_sequential_run(tmp_path: Path) -> None:
    repo = neighbours(tmp_path, 2)
    replay = script(tmp_path, {f"T-00{n}": [edit_line(n)] for n in range(1, 3)})
    summary, recorder = run_plan(repo / "plan", repo, replay, settings={"jobs": 1})
    assert summary.status == "completed"
    order = [e.task_id for e in recorder.of("unit_started")]
    assert order == sorted(order)  # one after the other, lowest id first
    assert recorder.of("replayed") == []


def test_the_longest_remaining_path_goes_first(tmp_path: Path) -> None:
    """T-002 has two tasks waiting on it, one after the other: it starts first; T-001 and
    T-005 tie, lowest id first; a done task's chain no longer counts."""
    folder = tmp_path / "plan"
    folder.mkdir()
    for name, text in md_plan(
        ("T-001", {}), ("T-002", {}), ("T-003", {"depends": "T-002"}),
        ("T-004", {"depends": "T-003"}), ("T-005", {}),
    ).items():  # fmt: skip
        (folder / name).write_text(str(text))
    plan = validate.validate(folder).require()
    statuses = {t.id: Status.OPEN for t in plan.tasks}
    frontier = ["T-001", "T-002", "T-005"]
    assert schedule.longest_first(plan, statuses, frontier) == ["T-002", "T-001", "T-005"]
    statuses.update({"T-003": Status.DONE, "T-004": Status.DONE})
    assert schedule.longest_first(plan, statuses, frontier) == ["T-001", "T-002", "T-005"]


def test_jobs_in_a_tasktrack_plans_file_need_the_flag(tmp_path: Path) -> None:
    from tests.plans import tt_plan

    folder = tmp_path / "plan"
    folder.mkdir()
    for name, text in tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")]]).items():
        (folder / name).write_text(str(text))
    (folder / "taskhand.toml").write_text("jobs = 4\n")
    with pytest.raises(runconfig.SettingsError) as refused:
        runconfig.build(folder, env={})
    message = str(refused.value)
    assert "taskhand.toml:1" in message and "--jobs 4" in message
    assert runconfig.build(folder, runconfig.Flags(jobs=4), env={}).jobs == 4
    assert runconfig.build(folder, env={"TASKHAND_JOBS": "2"}).jobs == 2


def test_a_tasktrack_plan_run_with_jobs_stays_conformant_and_unconfined_runs_see_no_breach(
    tmp_path: Path,
) -> None:
    """Several tasks BUSY at once, each job writing its statuses into the plan's files while
    the others' agents work: with no sandbox the guard watches the plan folder itself, and
    tells the harness's own writes from an agent's. The files validate afterwards."""
    from tests.plans import tt_plan

    plan = {
        f"plan/{k}": str(v)
        for k, v in tt_plan([[(f"FOO-{n}", "OPEN") for n in range(1, 5)]]).items()
    }
    repo = make_repo(tmp_path / "repo", plan)
    tasks = {
        f"FOO-{n}": [attempt({"write": f"f{n}.txt", "text": "x\n"}, {"sleep": 0.5})]
        for n in range(1, 5)
    }
    summary, recorder = run_plan(
        repo / "plan", repo, script(tmp_path, tasks), sandbox="none", settings={"jobs": 4}
    )
    assert summary.status == "completed", (summary.message, recorder.of("violation"))
    assert recorder.of("violation") == [] and recorder.of("outside_change") == []
    report = validate.validate(repo / "plan")
    assert report.errors == [], [p.render() for p in report.errors]
    assert set(report.require().statuses().values()) == {Status.DONE}


def test_an_agent_that_edits_another_tasks_file_meanwhile_is_caught(tmp_path: Path) -> None:
    """The guard lets the harness's own writes of the plan pass, not an agent's: a hostile
    agent that rewrites a task file while the other job writes its statuses stops the run."""
    from tests.plans import tt_plan

    files = tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")]])
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": str(v) for k, v in files.items()})
    target = repo / "plan" / "FOO-2.md"
    hostile = {"run": ["sh", "-c", f"sleep 0.3; echo '<!-- mine -->' >> {target}"]}
    tasks = {
        "FOO-1": [attempt({"write": "f1.txt", "text": "x\n"}, hostile)],
        "FOO-2": [attempt({"write": "f2.txt", "text": "x\n"}, {"sleep": 0.6})],
    }
    summary, _ = run_plan(
        repo / "plan", repo, script(tmp_path, tasks), sandbox="none", settings={"jobs": 2}
    )
    assert summary.status == "stopped"
    assert "FOO-1 reached outside its workspace" in summary.message
