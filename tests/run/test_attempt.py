"""An attempt the harness itself cannot handle: it fails with the reason, the run goes on, and
a resume moves on; the traceback is kept in the run's folder for a bug report."""

from __future__ import annotations

from pathlib import Path

from taskhand.pipeline.harness import Harness
from taskhand.pipeline.stages import DEFAULT
from taskhand.pipeline.work import Ended, Work
from taskhand.run import launch
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.plans import md_plan
from tests.runs import Recorder, attempt, make_repo, run_plan, script, write


def breaks_on_t001(h: Harness, work: Work) -> Ended | None:
    """A stage that meets something nothing foresaw, for T-001 alone."""
    if work.task.id == "T-001":
        raise ValueError("no such thing as this file")
    return None


def test_an_exception_in_an_attempt_fails_it_and_the_run_goes_on(tmp_path: Path) -> None:
    files = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {}), ("T-002", {})).items()}
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", **files})
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    pipeline = (DEFAULT[0], breaks_on_t001, *DEFAULT[1:])
    summary, recorder = run_plan(repo / "plan", repo, replay, pipeline=pipeline, max_attempts=2)
    ended = {e.task_id: e.data for e in recorder.of("task_concluded")}
    assert ended["T-002"]["status"] == "DONE"
    assert ended["T-001"]["status"] == "FAIL"
    reason = "taskhand could not handle what this attempt left (ValueError: no such thing"
    assert str(ended["T-001"]["text"]).startswith(f"2 attempts failed; the last: {reason}")
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        attempts = store.attempts(summary.run_id, "T-001")
    assert [a.status for a in attempts] == ["failed", "failed"]
    log = (state.run_dir(summary.run_id) / "harness-errors.log").read_text()
    assert log.count("Traceback") == 2 and "breaks_on_t001" in log
    resumed = Recorder()
    again = launch.resume(summary.run_id, resumed, repo, pipeline=pipeline)
    assert again.status == "failed" and not resumed.of("attempt_started")
