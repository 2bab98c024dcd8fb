"""One attempt at a task: opened (or a paused one resumed) on the integrated base, given its
own workspace, and taken through the pipeline's stages until one ends it. A task whose work
landed already goes through the stages after landing alone (a delivery's retry).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from taskhand import workspace
from taskhand.gates import GateResult
from taskhand.host import ports
from taskhand.pipeline import lifecycle, stages
from taskhand.pipeline.harness import Harness, case_json
from taskhand.pipeline.setup import set_up
from taskhand.pipeline.work import Ended, Stage, Work
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.templates import slug
from taskhand.run import retention
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import Attempt, AttemptStatus
from taskhand.state.status import StatusBook
from taskhand.text import printable
from taskhand.unit import Case, CaseReport, Outcome
from taskhand.workspace import Workspace, git, refs

UNIT_FAILED = LedgerOutcome.UNIT_FAILED


def task_branch(task: Task) -> str:
    return f"taskhand/{task.id}-{slug(task.title)}"


def attempt(
    h: Harness, pipeline: Sequence[Stage], plan: Plan, book: StatusBook, task: Task
) -> Ended:
    """The task's next attempt, from the run branch as integrated, to its end."""
    h.guard.check_refs(task.id)  # put back, so the attempt starts from what was integrated
    added = h.guard.added_commits(task.id)
    if added:  # a person's commit on the task's branch: theirs to keep or move aside
        return Ended(Status.FAIL, added)
    base = h.guard.head()[0]
    earlier = h.store.attempts(h.run.id, task.id)
    landed = _landed(h, earlier, base)
    if landed is not None:  # its work is on the run branch: only what comes after is left
        return _after_landing(h, pipeline, plan, book, task, landed)
    paused = _paused(earlier, base)
    if paused is not None:  # before a new attempt is opened: the paused one goes on
        return _resume(h, pipeline, plan, book, task, paused)
    path = h.state.worktree(h.run.id, task.id, len(earlier) + 1)
    branch = _branch_for(h, task, earlier)
    opened = h.store.start_attempt(h.run.id, task.id, str(path), branch, base)
    building_on = _building_on(h, earlier, base)
    start = building_on.candidate_sha if building_on else None
    h.emit(EventKind.ATTEMPT_STARTED, task.id, attempt=opened.number, start=start or base)
    shown = building_on.number if building_on else None
    # Where the task's lifecycle says its work goes on (a task the pipeline has no entry for
    # starts at the first stage).
    first = stages.entry(pipeline, lifecycle.ENTRY.get(h.track.life(plan, task).status, ()))
    with _workspace_at(h, task, opened, start or base) as ws:
        work = Work(plan, book, task, opened, ws, shown)
        return set_up(h, work) or _through(h, pipeline, work, first)


def unhandled(h: Harness, task: Task, exc: Exception) -> Ended:
    """The task's open attempt, failed by an exception of the harness itself (what an agent
    left that nothing foresaw): failed with the reason, its traceback kept in the run's folder,
    and the task goes on to its next attempt, so neither this run nor a resume is stuck on it.
    An exception outside any attempt is raised again."""
    open_now = [a for a in h.store.open_attempts(h.run.id) if a.task_id == task.id]
    if not open_now:
        raise exc
    log = h.state.run_dir(h.run.id) / "harness-errors.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8", errors="backslashreplace") as file:
        file.write(f"{task.id} attempt {open_now[-1].number}:\n")
        file.writelines(traceback.format_exception(exc))
    reason = (
        f"taskhand could not handle what this attempt left ({type(exc).__name__}: "
        f"{printable(str(exc))}) (fix: report it as a bug of taskhand, with {log.name} from "
        "the run's folder)"
    )
    return h.retry(open_now[-1], task, AttemptStatus.FAILED, reason, Entry(UNIT_FAILED, reason))


def _through(h: Harness, pipeline: Sequence[Stage], work: Work, first: int) -> Ended:
    """Run the pipeline's stages from `first` until one ends the attempt; its place in the
    merge queue, if it took one, is given up however it ends."""
    try:
        return _stages(h, pipeline, work, first)
    finally:
        if work.queued is not None:
            h.queue.leave(work.queued)


def _stages(h: Harness, pipeline: Sequence[Stage], work: Work, first: int) -> Ended:
    for stage in pipeline[first:]:
        ended = stage(h, work)
        if ended is None:
            continue
        if ended.run_capped:
            assert work.outcome is not None
            h.store.finish_attempt(work.attempt.id, AttemptStatus.PAUSED, h.redact(ended.text))
            case = case_json(work.outcome)
            number, at = work.attempt.number, stages.name(stage)
            h.emit(EventKind.ATTEMPT_PAUSED, work.task.id, attempt=number, case=case, stage=at)
        return ended
    if work.landed is not None:  # landed, and no stage after it objected: done
        return Ended(Status.DONE, work.landed)
    names = ", ".join(stages.name(s) for s in pipeline)
    raise RuntimeError(f"the pipeline ({names}) ended without concluding the attempt")


def _resume(
    h: Harness, pipeline: Sequence[Stage], plan: Plan, book: StatusBook, task: Task, paused: Attempt
) -> Ended:
    """Go on with a paused attempt at the stage it paused in: its candidate, case and gate
    results as recorded."""
    h.store.reopen_attempt(paused.id)
    h.emit(EventKind.ATTEMPT_RESUMED, task.id, attempt=paused.number)
    case: dict[str, Any] = {}
    stage = "review"
    for event in h.store.events_of(h.run.id, EventKind.ATTEMPT_PAUSED):
        if event.task_id == task.id and event.data["attempt"] == paused.number:
            # Runs before pipelines were declared paused only in review.
            case, stage = dict(event.data["case"]), str(event.data.get("stage", "review"))
    outcome = Outcome(
        Case.DONE, resolution=str(case.get("resolution", "")), report=CaseReport.from_json(case)
    )
    results = [
        GateResult(g.name, g.ok, g.detail, g.exit_code, g.seconds, g.output)
        for g in h.store.gates(paused.id)
    ]
    candidate = paused.candidate_sha or ""
    with _workspace_at(h, task, paused, candidate) as ws:
        work = Work(plan, book, task, paused, ws, None, outcome, candidate, results)
        return set_up(h, work) or _through(h, pipeline, work, stages.index_of(pipeline, stage))


def _after_landing(
    h: Harness, pipeline: Sequence[Stage], plan: Plan, book: StatusBook, task: Task, landed: Attempt
) -> Ended:
    """Take a task whose work landed through the stages after landing (deliver) alone."""
    resolution = landed.reason or f"{task.title}: done"
    outcome = Outcome(Case.DONE, resolution=resolution)
    candidate = landed.candidate_sha or ""
    with _workspace_at(h, task, landed, candidate) as ws:
        work = Work(plan, book, task, landed, ws, None, outcome, candidate, landed=resolution)
        return _through(h, stages.after_landing(pipeline), work, 0)


@contextmanager
def _workspace_at(h: Harness, task: Task, opened: Attempt, sha: str) -> Iterator[Workspace]:
    """The attempt's workspace at `sha` while the block runs, with a port of its own
    ($TASKHAND_PORT); then kept and pruned if the attempt ended, else removed
    (run/retention.py), its index gone and the port given back either way."""
    path = Path(opened.worktree)
    index = h.state.index(h.run.id, f"{task.id}-attempt-{opened.number}")
    ports.claim(opened.worktree)
    try:
        yield workspace.prepare(h.depot, path, index, sha, task_branch(task))
    finally:
        try:
            retention.let_go(h, task, opened.id, path, index)
        finally:
            ports.release(opened.worktree)


def _paused(earlier: list[Attempt], base: str) -> Attempt | None:
    """The task's last attempt, when a run cap stopped it before its review on `base`."""
    ended = [a for a in earlier if a.status != AttemptStatus.INTERRUPTED]
    last = ended[-1] if ended else None
    usable = last is not None and last.status == AttemptStatus.PAUSED and last.candidate_sha
    return last if usable and last is not None and last.base_sha == base else None


def _landed(h: Harness, earlier: list[Attempt], head: str) -> Attempt | None:
    """The task's last attempt when it passed and its candidate is on the run branch."""
    ended = [a for a in earlier if a.status != AttemptStatus.INTERRUPTED]
    last = ended[-1] if ended else None
    if last is None or last.status != AttemptStatus.PASSED or not last.candidate_sha:
        return None
    return last if git.is_ancestor(h.repo, last.candidate_sha, head) else None


def _building_on(h: Harness, earlier: list[Attempt], base: str) -> Attempt | None:
    """The rejected attempt the next one continues from: a reviewer's findings are fixed
    in the work it read, not by starting over. Only when its candidate sits on `base`."""
    ended = [a for a in earlier if a.status != AttemptStatus.INTERRUPTED]
    last = ended[-1] if ended else None
    if last is None or last.status != AttemptStatus.REJECTED or not last.candidate_sha:
        return None
    try:
        below = git.resolve(h.repo, f"{last.candidate_sha}^")
    except git.GitError:  # its commit went with the run's depot (taskhand clean): start over
        return None
    return last if below == base else None


def _branch_for(h: Harness, task: Task, earlier: list[Attempt]) -> str:
    """The task's branch; a branch of that name that this run did not make is never
    moved or deleted: the run takes another name."""
    branch = task_branch(task)
    ours = {a.branch for a in h.store.attempts(h.run.id)}
    for name in (branch, f"{branch}-{h.run.id}"):
        if name in ours or refs.branch_sha(h.repo, name) is None:
            return name
    return f"{branch}-{h.run.id}-{len(earlier) + 1}"
