"""A person's moves between runs, from the command line, in both dialects: reopen a failed
task, answer a waiting one, what a stopped run says, and statuses that tell the truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.plan.formats import tasktrack_edit
from taskhand.plan.model import Status
from taskhand.run.feedback import shown_plan
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_plan, md_task, tt_plan, tt_task
from tests.runs import attempt, git, make_repo, script, write

CHECK = "`$ test -f ok.txt` ok.txt exists"
QUESTION = attempt(outcome="question", question="Which separator?", options=["comma", "tab"])
REQUEST = "Which separator? Options: (A) comma (B) tab (the first is recommended)."


IDS = {"markdown": ("T-001", "T-002"), "tasktrack": ("FOO-1", "FOO-2")}


def plan_repo(tmp_path: Path, dialect: str, criteria: str = "- it works") -> tuple[Path, Path]:
    """A repository holding a committed plan of two tasks, the first with `criteria`, the
    second depending on it; IDS[dialect] are their ids."""
    one, two = IDS[dialect]
    if dialect == "markdown":
        body = f"## Description\nDo it.\n\n## Acceptance criteria\n{criteria}\n"
        files = {str(k): str(v) for k, v in md_plan().items()}
        files[f"{one}-task.md"] = md_task(one, f"Task {one}", body=body)
        files[f"{two}-task.md"] = md_task(two, f"Task {two}", depends_on=f"[{one}]")
    else:
        files = {str(k): str(v) for k, v in tt_plan([[(one, "OPEN"), (two, "OPEN")]]).items()}
        files[f"{one}.md"] = tt_task(one, f"Task {one}", criteria=criteria)
        files[f"{two}.md"] = tt_task(two, f"Task {two}", deps=one)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    return repo, repo / "plan"


def replay(tmp_path: Path, dialect: str, first: list[dict[str, Any]]) -> Path:
    one, two = IDS[dialect]
    return script(tmp_path, {one: first, two: [attempt(write("two.txt", "2\n"))]})


def ledger(run_cli: RunCli, repo: Path, task_id: str) -> list[tuple[int, str]]:
    result = run_cli("ledger", task_id, "--repo", repo, "--json")
    assert result.exit_code == 0, result.output
    return [(e["iteration"], e["outcome"]) for e in json.loads(result.output)["entries"]]


def prompts(repo: Path, task_id: str) -> list[str]:
    """The prompt of every implementer unit of `task_id` in the latest run, as the replay
    agent recorded it in its transcript."""
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.latest_run()
        assert run is not None
        units = [u for u in store.units(run.id, task_id) if u.role == "implementer"]
    return [
        json.loads(Path(str(u.transcript)).read_text().splitlines()[0])["content"] for u in units
    ]


def runs(run_cli: RunCli, repo: Path) -> list[dict[str, Any]]:
    result = run_cli("runs", "--repo", repo, "--json")
    return list(json.loads(result.output))


def one_line_error(output: str, *parts: str) -> None:
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith("taskhand: error: ") and "(fix: " in lines[0], output
    for part in parts:
        assert part in lines[0], output


# -- reopen ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_a_reopened_task_gets_its_attempts_again_in_the_same_run(
    tmp_path: Path, run_cli: RunCli, dialect: str
) -> None:
    repo, plan = plan_repo(tmp_path, dialect, f"- {CHECK}")
    one, _ = IDS[dialect]
    bad = attempt(write("a.txt", "a\n"))
    steps = replay(tmp_path, dialect, [bad, bad, bad, attempt(write("ok.txt", "ok\n"))])
    first = run_cli("run", plan, "--script", steps, "--max-attempts", "2")
    assert first.exit_code == 1, first.output
    assert "TaskTrack EXIT: Failed Tasks" in first.output
    # Which task failed, why, and how to retry it, not a bare "Failed Tasks".
    assert f"{one} failed: 2 attempts failed; the last: `test -f ok.txt` exited 1" in first.output
    assert f"  to retry it: taskhand reopen {one} {shown_plan(plan)}" in first.output

    # Running it again changes nothing and says the same.
    again = run_cli("run", plan, "--script", steps, "--max-attempts", "2")
    assert again.exit_code == 1 and f"to retry it: taskhand reopen {one}" in again.output
    assert ledger(run_cli, repo, one) == [(1, "checks_failed"), (2, "checks_failed")]
    assert "Failure: 2 attempts failed" in run_cli("show", plan, one).output

    moved = run_cli("reopen", one, plan)
    assert moved.exit_code == 0, moved.output
    assert f"reopened {one}" in moved.output and "taskhand resume" in moved.output
    assert f"[ ] OPEN {one}" in run_cli("show", plan).output
    assert "Failure" not in run_cli("show", plan, one).output
    if dialect == "tasktrack":
        assert run_cli("validate", plan, "--strict").exit_code == 0
        text = (plan / f"{one}.md").read_text()
        assert "**Status**: OPEN" in text and "**Failure**" not in text
        assert f"* [OPEN] {one}" in (plan / "FOO-TaskTrack.md").read_text()

    [run] = runs(run_cli, repo)
    resumed = run_cli("resume", "--repo", repo)
    assert resumed.exit_code == 0, resumed.output
    assert "TaskTrack EXIT: Plan Completed" in resumed.output
    assert [(r["id"], r["status"]) for r in runs(run_cli, repo)] == [(run["id"], "completed")]
    # Attempt 3 failed again and 4 passed: the cap of 2 counted from the reopen, and the
    # earlier attempts are still in the ledger, numbered on.
    assert ledger(run_cli, repo, one) == [
        (1, "checks_failed"),
        (2, "checks_failed"),
        (3, "checks_failed"),
        (4, "accepted"),
    ]
    if dialect == "tasktrack":
        text = (plan / f"{one}.md").read_text()
        assert "**Status**: DONE" in text and "**Failure**" not in text
        assert run_cli("validate", plan, "--strict").exit_code == 0


def test_a_tasktrack_task_set_open_by_hand_is_worked_on_again(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """The spec lets a person edit the files: a FAIL task set OPEN (its Failure removed)
    used to fail again at once on the attempts it had used up."""
    repo, plan = plan_repo(tmp_path, "tasktrack", f"- {CHECK}")
    steps = replay(
        tmp_path, "tasktrack", [attempt(write("a.txt", "a\n")), attempt(write("ok.txt", "ok\n"))]
    )
    assert run_cli("run", plan, "--script", steps, "--max-attempts", "1").exit_code == 1
    task = plan / "FOO-1.md"
    task.write_text(
        tasktrack_edit.drop_field(task.read_text(), "Failure").replace(
            "**Status**: FAIL", "**Status**: OPEN"
        )
    )
    overview = plan / "FOO-TaskTrack.md"
    overview.write_text(overview.read_text().replace("[FAIL] FOO-1", "[OPEN] FOO-1"))

    result = run_cli("run", plan, "--script", steps, "--max-attempts", "1")
    assert result.exit_code == 0, result.output
    assert "**Status**: DONE" in task.read_text()
    assert ledger(run_cli, repo, "FOO-1") == [(1, "checks_failed"), (2, "accepted")]


def test_reopen_takes_the_plan_of_the_latest_run_by_default(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, plan = plan_repo(tmp_path, "markdown", f"- {CHECK}")
    steps = replay(
        tmp_path, "markdown", [attempt(write("a.txt", "a\n")), attempt(write("ok.txt", "ok\n"))]
    )
    assert run_cli("run", plan, "--script", steps, "--max-attempts", "1").exit_code == 1
    assert run_cli("reopen", "T-001", "--repo", repo).exit_code == 0
    assert run_cli("resume", "--repo", repo).exit_code == 0


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_reopen_and_respond_refuse_a_task_in_another_status(
    tmp_path: Path, run_cli: RunCli, dialect: str
) -> None:
    repo, plan = plan_repo(tmp_path, dialect)
    one, two = IDS[dialect]
    shown = shown_plan(plan)
    # Before any run every task is OPEN.
    one_line_error(run_cli("reopen", one, plan).output, f"{one} is OPEN, not FAIL")
    one_line_error(
        run_cli("respond", one, "comma", plan).output,
        f"{one} is OPEN, not WAIT",
        f"taskhand run {shown}",
    )
    steps = replay(tmp_path, dialect, [QUESTION, attempt(write("a.txt", "a\n"))])
    assert run_cli("run", plan, "--script", steps).exit_code == 3
    one_line_error(
        run_cli("reopen", one, plan).output,
        f"{one} is WAIT",
        f'taskhand respond {one} "..." {shown}',
    )
    one_line_error(run_cli("respond", one, "  ", plan).output, "the answer is empty")
    one_line_error(
        run_cli("reopen", "T-404", plan).output, "no task T-404 in", f"one of {one}, {two}"
    )
    one_line_error(run_cli("respond", "T-404", "x", plan).output, "no task T-404 in")
    assert run_cli("respond", one, "comma", plan).exit_code == 0
    assert run_cli("resume", "--repo", repo).exit_code == 0
    one_line_error(
        run_cli("reopen", one, plan).output,
        f"{one} is DONE: only a FAIL task can be reopened",
        f"taskhand run {shown} --new",
    )
    one_line_error(run_cli("respond", two, "x", plan).output, f"{two} is DONE, not WAIT")


def test_respond_to_a_failed_task_names_reopen(tmp_path: Path, run_cli: RunCli) -> None:
    _, plan = plan_repo(tmp_path, "markdown", f"- {CHECK}")
    steps = replay(tmp_path, "markdown", [attempt(write("a.txt", "a\n"))])
    assert run_cli("run", plan, "--script", steps, "--max-attempts", "1").exit_code == 1
    one_line_error(
        run_cli("respond", "T-001", "x", plan).output,
        "T-001 is FAIL, not WAIT",
        f"taskhand reopen T-001 {shown_plan(plan)}",
    )


def test_a_move_never_lands_on_a_task_a_live_run_works_on(tmp_path: Path, run_cli: RunCli) -> None:
    repo, plan = plan_repo(tmp_path, "markdown", f"- {CHECK}")
    steps = replay(tmp_path, "markdown", [attempt(write("a.txt", "a\n"))])
    assert run_cli("run", plan, "--script", steps, "--max-attempts", "1").exit_code == 1
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        run = store.latest_run()
        assert run is not None
        store.set_task(run.id, "T-001", Status.BUSY)
    with lock.hold(state.lock(plan), plan, "a run"):
        one_line_error(run_cli("reopen", "T-001", plan).output, "T-001 is being worked on")
        assert "[>] BUSY T-001" in run_cli("show", plan).output
        # Moves never wait for the run's lock: the task it does not work on moves now.
        with Store.open(state.database) as store:
            store.set_task(run.id, "T-001", Status.FAIL, "2 attempts failed")
        moved = run_cli("reopen", "T-001", plan)
        assert moved.exit_code == 0, moved.output
        assert "next: the run under way takes it up" in moved.output
    assert "[ ] OPEN T-001" in run_cli("show", plan).output


def test_reopen_without_runs_or_plan_says_what_to_name(tmp_path: Path, run_cli: RunCli) -> None:
    repo, _ = plan_repo(tmp_path, "markdown")
    one_line_error(
        run_cli("reopen", "T-001", "--repo", repo).output, "no runs in", "taskhand reopen TASK"
    )


def test_a_tasktrack_plan_no_run_has_recorded_is_moved_in_its_files(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files = tt_plan([[("FOO-1", "FAIL"), ("FOO-2", "WAIT")]])
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": str(v) for k, v in files.items()})
    plan = repo / "plan"
    reopened = run_cli("reopen", "FOO-1", plan)
    assert reopened.exit_code == 0, reopened.output
    assert f"next: taskhand run {shown_plan(plan)}" in reopened.output
    assert run_cli("respond", "FOO-2", "Yes.", plan).exit_code == 0
    assert run_cli("validate", plan, "--strict").exit_code == 0
    shown = run_cli("show", plan).output
    assert "OPEN FOO-1" in shown and "OPEN FOO-2" in shown
    assert (
        (plan / "FOO-2.md")
        .read_text()
        .endswith("**Request**: Decide something.\n\n**Response**: Yes.\n")
    )
    assert not StateDir.for_repo(repo).database.exists()


# -- respond ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_an_answered_question_reaches_the_next_attempt(
    tmp_path: Path, run_cli: RunCli, dialect: str
) -> None:
    repo, plan = plan_repo(tmp_path, dialect)
    one, _ = IDS[dialect]
    steps = replay(tmp_path, dialect, [QUESTION, attempt(write("sep.txt", ",\n"))])
    first = run_cli("run", plan, "--script", steps)
    assert first.exit_code == 3, first.output
    assert "TaskTrack EXIT: Waiting for Human Feedback" in first.output
    assert f"{one} asks: {REQUEST}" in first.output
    assert f'  to answer: taskhand respond {one} "..." {shown_plan(plan)}' in first.output
    shown = run_cli("show", plan).output
    assert f"[?] WAIT {one}" in shown and f"asks: {REQUEST}" in shown
    assert f"Request: {REQUEST}\nResponse: -" in run_cli("show", plan, one).output

    answered = run_cli("respond", one, "Use a comma.", plan)
    assert answered.exit_code == 0, answered.output
    assert f"[ ] OPEN {one}" in run_cli("show", plan).output
    assert "Response: Use a comma." in run_cli("show", plan, one).output
    if dialect == "tasktrack":
        text = (plan / f"{one}.md").read_text()
        assert text.endswith(f"**Request**: {REQUEST}\n\n**Response**: Use a comma.\n")
        assert "**Status**: OPEN" in text
        assert run_cli("validate", plan, "--strict").exit_code == 0

    [run] = runs(run_cli, repo)
    again = run_cli("run", plan, "--script", steps)
    assert again.exit_code == 0, again.output
    assert [r["id"] for r in runs(run_cli, repo)] == [run["id"]]
    last = prompts(repo, one)[-1]
    assert "Asked: Which separator?" in last and "Answer: Use a comma." in last
    if dialect == "tasktrack":
        text = (plan / f"{one}.md").read_text()
        fields = [text.index(f"**{f}**") for f in ("Request", "Response", "Resolution")]
        assert fields == sorted(fields)
    else:
        assert f"Request: {REQUEST}\nResponse: Use a comma." in run_cli("show", plan, one).output


def test_a_multiline_answer_stays_one_tasktrack_field(tmp_path: Path, run_cli: RunCli) -> None:
    _, plan = plan_repo(tmp_path, "tasktrack")
    steps = replay(tmp_path, "tasktrack", [QUESTION, attempt(write("sep.txt", ",\n"))])
    assert run_cli("run", plan, "--script", steps).exit_code == 3
    sneaky = "comma\n\n**Status**: DONE\n**Resolution**: none"
    assert run_cli("respond", "FOO-1", sneaky, plan).exit_code == 0
    text = (plan / "FOO-1.md").read_text()
    assert [line for line in text.splitlines() if line.startswith("**Status**")] == [
        "**Status**: OPEN"
    ]
    assert "**Response**: comma **Status**: DONE **Resolution**: none\n" in text
    assert run_cli("validate", plan).exit_code == 0


# -- statuses that tell the truth -------------------------------------------------------------


def test_show_and_next_of_a_markdown_plan_follow_its_latest_run(
    tmp_path: Path, run_cli: RunCli
) -> None:
    _, plan = plan_repo(tmp_path, "markdown")
    steps = replay(tmp_path, "markdown", [attempt(write("one.txt", "1\n"))])
    assert run_cli("next", plan).output.startswith("Next: T-001")
    assert run_cli("run", plan, "--script", steps).exit_code == 0
    shown = run_cli("show", plan)
    assert "[x] DONE T-001" in shown.output and "[x] DONE T-002" in shown.output
    assert "TaskTrack EXIT: Plan Completed" in shown.output
    nothing = run_cli("next", plan)
    assert (nothing.exit_code, nothing.output.strip()) == (3, "TaskTrack EXIT: Plan Completed")
    data = json.loads(run_cli("show", plan, "--json").output)
    assert [t["status"] for t in data["tasks"]] == ["DONE", "DONE"]
    # A status file still overlays what the run recorded.
    overlay = tmp_path / "status.json"
    overlay.write_text('{"T-002": "pending"}')
    assert run_cli("next", plan, "--status-file", overlay).output.startswith("Next: T-002")


def test_run_on_a_completed_plan_does_nothing_unless_new(tmp_path: Path, run_cli: RunCli) -> None:
    repo, plan = plan_repo(tmp_path, "markdown")
    steps = replay(tmp_path, "markdown", [attempt(write("one.txt", "1\n"))])
    assert run_cli("run", plan, "--script", steps).exit_code == 0
    [run] = runs(run_cli, repo)
    head = git(repo, "rev-parse", run["branch"])

    # No script is needed: no agent is made when there is nothing to do.
    again = run_cli("run", plan)
    assert again.exit_code == 0, again.output
    assert again.output.strip() == (
        f"run {run['id']} already completed this plan; its result is on branch "
        f"{run['branch']} (to start over: taskhand run {shown_plan(plan)} --new)"
    )
    assert [r["id"] for r in runs(run_cli, repo)] == [run["id"]]
    assert git(repo, "rev-parse", run["branch"]) == head
    as_json = json.loads(run_cli("run", plan, "--json").output)
    assert (as_json["kind"], as_json["run_id"]) == ("already_completed", run["id"])

    fresh = run_cli("run", plan, "--script", steps, "--new")
    assert fresh.exit_code == 0, fresh.output
    assert len(runs(run_cli, repo)) == 2


def test_a_task_added_after_a_completed_run_is_not_called_complete(
    tmp_path: Path, run_cli: RunCli
) -> None:
    _, plan = plan_repo(tmp_path, "markdown")
    steps = script(tmp_path, {t: [attempt(write(f"{t}.txt", "x\n"))] for t in ("T-001", "T-002")})
    assert run_cli("run", plan, "--script", steps).exit_code == 0
    (plan / "T-003-task.md").write_text(md_task("T-003", "Task T-003"))
    assert "[ ] OPEN T-003" in run_cli("show", plan).output
    again = run_cli("run", plan, "--script", steps)
    assert "already completed" not in again.output


# -- the TaskTrack edits, byte by byte --------------------------------------------------------


def test_dropping_the_failure_keeps_every_other_byte() -> None:
    text = "# A-1: A\r\n\r\n**Status**: FAIL\r\n\r\n**Failure**: no\r\nsecond line\r\n"
    assert tasktrack_edit.drop_field(text, "Failure") == "# A-1: A\r\n\r\n**Status**: FAIL\r\n"
    middle = "# A-1: A\n\n**Failure**: no\n\n**Extra**: kept\n"
    assert tasktrack_edit.drop_field(middle, "Failure") == "# A-1: A\n\n**Extra**: kept\n"


def test_a_response_goes_directly_below_the_latest_request() -> None:
    text = "# A-1: A\n\n**Request**: one?\n\n**Response**: yes\n\n**Request**: two?\nmore\n"
    assert tasktrack_edit.add_response(text, "no") == text + "\n**Response**: no\n"
    followed = "# A-1: A\n\n**Request**: one?\n\n**Extra**: kept\n"
    assert tasktrack_edit.add_response(followed, "yes") == (
        "# A-1: A\n\n**Request**: one?\n\n**Response**: yes\n\n**Extra**: kept\n"
    )
    with pytest.raises(ValueError, match="already has a"):
        tasktrack_edit.add_response(text + "\n**Response**: no\n", "again")
