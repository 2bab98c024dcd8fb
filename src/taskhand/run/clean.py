"""Cleaning up after a run, fail-closed: only what is integrated, disposed and past its
retention, or provably left over, goes; whatever stays is named, with why and the fix.

A stopped run's workspaces of attempts that never ended go. An ended attempt's workspace goes
once its retention has passed (run/retention.py) and its result, if it left one, has a
disposition; a task branch, once its commit is in the run branch, or its result is disposed
and past retention; the run's depot (the objects its attempts wrote, workspace/depot.py) with
the last of them, once no workspace stays and no paused attempt waits to go on. The run
branch is the deliverable and always stays. While a live process holds the run's plan, only
the workspaces it can never touch again may go.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from taskhand import workspace
from taskhand.plan import formats
from taskhand.plan.model import Status
from taskhand.run.retention import Retention, parse_time
from taskhand.state import lock
from taskhand.state.integration import NOT_ENDED, is_result
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, AttemptStatus, DispositionRow, Run
from taskhand.state.store import Store
from taskhand.workspace import git, refs, worktrees

SETTLE = "integrated|rejected|superseded"
_FINISHED = (Status.DONE, Status.FAIL)


class Act(StrEnum):
    """What `clean` does with one thing."""

    WORKTREE = "worktree"  # removes a worktree an earlier version's run registered
    WORKSPACE = "workspace"  # removes an attempt's workspace or a review copy
    BRANCH = "branch"  # deletes a task branch
    DEPOT = "depot"  # removes the run's depot, the objects of its attempts' commits
    KEEP = "keep"  # keeps it, and says why and how to settle it
    SKIP = "skip"  # waits on it: a live run uses it, or may still


@dataclass(frozen=True)
class Step:
    """One thing `clean` removes (or keeps, or waits on), and why."""

    kind: Act
    target: str
    reason: str
    sha: str = ""  # a branch is deleted only while it still holds this commit


@contextmanager
def claimed(state: StateDir, run: Run) -> Iterator[str | None]:
    """Hold the lock of the run's plan while cleaning, so no run of it starts or resumes
    meanwhile: yields None, or who holds it when a live process does (then only what the
    live run can never touch again is cleaned)."""
    plan = Path(run.plan_path)
    path = state.lock(plan)
    with ExitStack() as stack:
        holder = None
        try:
            stack.enter_context(lock.hold(path, plan, f"cleaning run {run.id}"))
        except lock.LockedError:
            holder = lock.holder(path) or "another process"
        yield holder


def plan_clean(
    store: Store,
    state: StateDir,
    run: Run,
    retention: Retention | None = None,
    holder: str | None = None,
    at: datetime | None = None,
) -> list[Step]:
    """What cleaning `run` would do at `at` (now), refusals and waits included; nothing is
    changed. `holder` names the live process that holds the run's plan (see `claimed`)."""
    retention = retention or Retention()
    at = at or datetime.now(UTC)
    attempts = store.attempts(run.id)
    disposed = {d.attempt_id: d for d in store.dispositions(run.id)}
    ended = [a for a in attempts if a.status not in NOT_ENDED and Path(a.worktree).exists()]
    if holder is not None:
        waits = _waits(store, run)
        steps = [_retained(run, a, disposed, retention, at, waits) for a in ended]
        what = "its open attempts, leftovers, task branches and run branch wait until it ends"
        reason = f"the run's plan is held by a live process ({holder}): {what}"
        return [*steps, Step(Act.SKIP, f"run {run.id}", f"{reason} (fix: clean again then)")]
    steps = _leftovers(state, run, attempts)
    steps += [_retained(run, a, disposed, retention, at, {}) for a in ended]
    steps += _branches(run, attempts, disposed, retention, at)
    steps += _depot(state, run, attempts, steps)
    fix = f"fix: merge it, then git branch -d {run.run_branch}"
    steps.append(Step(Act.KEEP, run.run_branch, f"the run's result ({fix})"))
    return steps


def apply(state: StateDir, run: Run, steps: list[Step], holder: str | None = None) -> list[str]:
    """Carry out the steps; what could not be deleted, one line each with its fix (an agent
    may have left a folder immutable or unwritable): said, never a failure."""
    repo = Path(run.repo)
    left = []
    for step in steps:
        if step.kind is Act.WORKTREE:
            worktrees.remove(repo, Path(step.target))
        elif step.kind is Act.WORKSPACE:
            stayed = workspace.remove(Path(step.target))
            if stayed:
                left.append(workspace.left_behind(Path(step.target), stayed))
        elif step.kind is Act.BRANCH:
            refs.delete_branch(repo, step.target, step.sha)
        elif step.kind is Act.DEPOT:
            shutil.rmtree(step.target, ignore_errors=True)
    if holder is None:  # a live run's indexes are in use
        shutil.rmtree(state.run_dir(run.id) / "indexes", ignore_errors=True)
    return left


def _leftovers(state: StateDir, run: Run, attempts: list[Attempt]) -> list[Step]:
    """The worktrees and workspaces a stopped run left: attempts that never ended (a pause,
    a kill) and the reviewers' copies; an ended attempt's workspace is retained instead."""
    repo = Path(run.repo)
    steps = []
    folder = state.run_dir(run.id) / "worktrees"
    for tree in worktrees.listed(repo):  # made by runs of earlier versions
        if tree.path.resolve().is_relative_to(folder.resolve()):
            steps.append(Step(Act.WORKTREE, str(tree.path), "attempt worktree"))
    ended = {Path(a.worktree) for a in attempts if a.status not in NOT_ENDED}
    if folder.is_dir():
        for leftover in sorted([*folder.glob("*/attempt-*"), *folder.glob("review-*")]):
            if leftover not in ended and not any(s.target == str(leftover) for s in steps):
                steps.append(Step(Act.WORKSPACE, str(leftover), "workspace left by a stopped run"))
    return steps


def _depot(state: StateDir, run: Run, attempts: list[Attempt], steps: list[Step]) -> list[Step]:
    """The run's depot, removed once nothing that stays needs the commits only it holds:
    kept while an ended attempt's workspace stays (its result may not have landed) or a
    paused attempt waits to go on from its candidate."""
    path = state.depot(run.id)
    if not path.is_dir():
        return []
    gone = {s.target for s in steps if s.kind is Act.WORKSPACE}
    staying = [
        a
        for a in attempts
        if a.status not in NOT_ENDED and Path(a.worktree).exists() and a.worktree not in gone
    ]
    paused = [a for a in attempts if a.status is AttemptStatus.PAUSED and a.candidate_sha]
    if staying or paused:
        named = ", ".join(f"{a.task_id} attempt {a.number}" for a in [*staying, *paused][:5])
        return [Step(Act.KEEP, str(path), f"the commits of {named}, which stay, are kept there")]
    why = "the objects of its attempts' commits; what landed is in the repository"
    return [Step(Act.DEPOT, str(path), why)]


def _retained(
    run: Run,
    attempt: Attempt,
    disposed: dict[int, DispositionRow],
    retention: Retention,
    at: datetime,
    waits: dict[str, str],
) -> Step:
    """An ended attempt's workspace: kept while its result has no disposition, waited on
    while a live run may still want it, kept until its retention passes; then removed."""
    path, task = attempt.worktree, attempt.task_id
    named = f"{task} attempt {attempt.number} ({attempt.status})"
    if is_result(attempt) and attempt.id not in disposed:
        return Step(Act.KEEP, path, f"{named}: {_undisposed(run, attempt)}")
    if task in waits:
        return Step(Act.SKIP, path, f"{named}: {waits[task]}")
    until = retention.until(attempt)
    if until is not None and until > at:
        return Step(Act.KEEP, path, f"{named}: kept until {_day(until)}; {retention.why(attempt)}")
    row = disposed.get(attempt.id)
    settled = f", its result {row.status} by {row.recorded_by}" if row else ""
    return Step(Act.WORKSPACE, path, f"{named}, ended {_day(attempt.ended)}{settled}")


def _branches(
    run: Run,
    attempts: list[Attempt],
    disposed: dict[int, DispositionRow],
    retention: Retention,
    at: datetime,
) -> list[Step]:
    repo = Path(run.repo)
    head = refs.branch_sha(repo, run.run_branch)
    steps = []
    for branch in sorted({a.branch for a in attempts}):
        sha = refs.branch_sha(repo, branch)
        if sha is None:
            continue
        holders = [a for a in attempts if a.branch == branch and a.candidate_sha == sha]
        if not holders:  # not a commit this run put there: someone else's now
            mine = "(fix: it is yours; delete it yourself if you want it gone)"
            reason = f"holds {sha[:12]}, which this run did not put there {mine}"
            steps.append(Step(Act.KEEP, branch, reason))
            continue
        if head is not None and git.is_ancestor(repo, sha, head):
            steps.append(Step(Act.BRANCH, branch, f"integrated into {run.run_branch}", sha))
            continue
        result, row = holders[-1], disposed.get(holders[-1].id)
        drop = f"merge it, or drop it with git branch -D {branch}"
        outside = f"holds {sha[:12]}, which is not in {run.run_branch}"
        if row is None and is_result(result):
            what = f"{result.task_id} attempt {result.number}'s result, with no disposition"
            fix = f"read it, then {_settle(run, result)}; or {drop}"
            steps.append(Step(Act.KEEP, branch, f"{outside}: {what} (fix: {fix})"))
            continue
        if row is None:  # the candidate of an attempt that never ended
            steps.append(Step(Act.KEEP, branch, f"{outside} (fix: {drop})"))
            continue
        until = retention.until(result)
        if until is not None and until > at:
            kept = f"kept until {_day(until)}; {retention.why(result)}"
            steps.append(Step(Act.KEEP, branch, f"{outside}, {row.status}: {kept}"))
            continue
        what = f"{result.task_id} attempt {result.number}'s result, {row.status}"
        steps.append(Step(Act.BRANCH, branch, f"{what} by {row.recorded_by}", sha))
    return steps


def _undisposed(run: Run, attempt: Attempt) -> str:
    """Why a result's workspace stays, and the command that settles it."""
    sha = (attempt.candidate_sha or "")[:12]
    return f"its result {sha} has no disposition (fix: read it, then {_settle(run, attempt)})"


def _settle(run: Run, attempt: Attempt) -> str:
    """The command that records a disposition for the attempt's result."""
    return (
        f"taskhand integration set {attempt.task_id} --run {run.id} "
        f"--attempt {attempt.number} --status {SETTLE}"
    )


def _waits(store: Store, run: Run) -> dict[str, str]:
    """The tasks of a live run whose workspaces wait, and why: the task has not finished, or
    a task that depends on it has not (the live run may still send either back)."""
    states = {t: s.status for t, s in store.task_states(run.id).items()}
    plan, _ = formats.load(Path(run.plan_path))
    tasks = {a.task_id for a in store.attempts(run.id)}
    if plan is None:
        why = "the plan cannot be read, so which tasks build on which is unknown"
        return dict.fromkeys(tasks, why)
    waits = {}
    for task in tasks:
        if states.get(task) is not Status.DONE:
            waits[task] = "it is not done, so the live run may still work on it"
            continue
        going = [
            t.id for t in plan.tasks if task in t.dependencies and states.get(t.id) not in _FINISHED
        ]
        if going:
            waits[task] = f"{', '.join(going)} depends on it and has not finished in the live run"
    return waits


def _day(stamp: datetime | str | None) -> str:
    if stamp is None:
        return "(not yet)"
    when = stamp if isinstance(stamp, datetime) else parse_time(stamp)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
