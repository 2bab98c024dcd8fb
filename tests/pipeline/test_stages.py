"""The pipeline is data: a stage declared in a list runs in the attempt, in its place, with no
change to the loop; a stage can end the attempt, send the task back, or pause it."""

from __future__ import annotations

from pathlib import Path

from taskhand.pipeline.gate import gate
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.implement import implement
from taskhand.pipeline.integrate import integrate
from taskhand.pipeline.review import review
from taskhand.pipeline.stages import DEFAULT
from taskhand.pipeline.work import Ended, Work
from taskhand.state.ledger import Entry
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.workspace import diffs
from tests.run.test_review import plan_repo
from tests.runs import attempt, git, run_plan, script, write

SEEN: list[str] = []


def no_todo(h: Harness, work: Work) -> Ended | None:
    """A stage of the test's own: a candidate that adds a TODO goes back to the worker."""
    SEEN.append(f"{work.task.id}#{work.attempt.number}")
    patch = diffs.patch(h.repo, work.base, work.candidate)
    if "TODO" not in patch:
        return None
    reason = "the change leaves a TODO"
    return h.retry(work.attempt, work.task, "failed", reason, Entry("checks_failed", reason))


def test_a_declared_stage_runs_in_its_place_and_can_send_the_task_back(tmp_path: Path) -> None:
    SEEN.clear()
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "TODO\n")), attempt(write("a.txt", "done\n"))]},
    )
    pipeline = (implement, gate, no_todo, review, integrate)
    summary, record = run_plan(repo / "plan", repo, replay, pipeline=pipeline)
    assert summary.status == "completed"
    assert SEEN == ["T-001#1", "T-001#2"]
    assert [e.data["reason"] for e in record.of("attempt_failed")] == ["the change leaves a TODO"]
    # The stage sits before the review: only the second candidate met a reviewer.
    assert len(record.of("verdict")) == 1
    assert git(repo, "show", f"{summary.run_branch}:a.txt") == "done\n"


def test_a_pipeline_without_review_integrates_what_passes_its_gate(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    summary, record = run_plan(repo / "plan", repo, replay, pipeline=(implement, gate, integrate))
    assert summary.status == "completed"
    assert record.of("verdict") == [] and len(record.of("integrated")) == 1
    with Store.open(StateDir.for_repo(repo).database) as store:
        roles = [u.role for u in store.units(summary.run_id, "T-001")]
    assert roles == ["implementer"]


HOLDING: list[bool] = []


def hold(h: Harness, work: Work) -> Ended | None:
    """A stage that pauses the attempt, as a run cap would, while the test holds it."""
    return Ended(None, "held by the test", run_capped=True) if HOLDING else None


def test_a_paused_attempt_resumes_at_the_stage_it_paused_in(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    pipeline = (*DEFAULT[:2], hold, *DEFAULT[2:])
    HOLDING[:] = [True]
    first, record = run_plan(repo / "plan", repo, replay, pipeline=pipeline)
    assert (first.status, first.message) == ("capped", "held by the test")
    assert [e.data["stage"] for e in record.of("attempt_paused")] == ["hold"]
    HOLDING.clear()
    resumed, again = run_plan(repo / "plan", repo, replay, pipeline=pipeline)
    assert (resumed.run_id, resumed.status) == (first.run_id, "completed")
    assert [e.data["attempt"] for e in again.of("attempt_resumed")] == [1]
    # It goes on from `hold`: the implementer's paid-for work is reviewed, not redone.
    assert [e.data["role"] for e in again.of("unit_started")] == ["evaluator"]
