"""Cleaning up after a run, fail-closed: only what is integrated, or provably empty, goes.

A task branch whose commit is not in the run branch is kept, with the reason and the command
a person would use to drop it; the run branch itself is the deliverable and always stays.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taskhand import workspace
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.records import Run, RunStatus
from taskhand.state.store import Store
from taskhand.workspace import git, refs, worktrees


@dataclass(frozen=True)
class Step:
    """One thing `clean` removes (or, as a refusal, keeps), and why."""

    kind: str  # "worktree", "workspace", "branch", "keep"
    target: str
    reason: str
    sha: str = ""  # a branch is deleted only while it still holds this commit


@contextmanager
def claimed(state: StateDir, run: Run) -> Iterator[None]:
    """A run recorded as running is cleaned only while this process holds its plan's lock: a
    live run is refused (LockedError names its process), and a dead one, killed before it
    could say so, cannot be resumed halfway through."""
    if run.status is not RunStatus.RUNNING:
        yield
        return
    plan = Path(run.plan_path)
    with lock.hold(state.lock(plan), plan, f"cleaning run {run.id}"):
        yield


def plan_clean(store: Store, state: StateDir, run: Run) -> list[Step]:
    """What cleaning `run` would do, refusals included; nothing is changed. A run recorded as
    running must be `claimed` first."""
    repo = Path(run.repo)
    steps = []
    folder = state.run_dir(run.id) / "worktrees"
    for tree in worktrees.listed(repo):  # made by runs of earlier versions
        if tree.path.resolve().is_relative_to(folder.resolve()):
            steps.append(Step("worktree", str(tree.path), "attempt worktree"))
    if folder.is_dir():
        for leftover in sorted([*folder.glob("*/attempt-*"), *folder.glob("review-*")]):
            if not any(s.target == str(leftover) for s in steps):
                steps.append(Step("workspace", str(leftover), "workspace left by a stopped run"))
    head = refs.branch_sha(repo, run.run_branch)
    attempts = store.attempts(run.id)
    for branch in sorted({a.branch for a in attempts}):
        sha = refs.branch_sha(repo, branch)
        if sha is None:
            continue
        ours = {a.candidate_sha for a in attempts if a.branch == branch and a.candidate_sha}
        if sha not in ours:  # not a commit this run put there: someone else's now
            steps.append(
                Step(
                    "keep",
                    branch,
                    f"holds {sha[:12]}, which this run did not put there "
                    f"(fix: it is yours; delete it yourself if you want it gone)",
                )
            )
        elif head is not None and git.is_ancestor(repo, sha, head):
            steps.append(Step("branch", branch, f"integrated into {run.run_branch}", sha))
        else:
            steps.append(
                Step(
                    "keep",
                    branch,
                    f"holds {sha[:12]}, which is not in "
                    f"{run.run_branch} (fix: merge it, or drop it with "
                    f"git branch -D {branch})",
                )
            )
    steps.append(
        Step(
            "keep",
            run.run_branch,
            f"the run's result (fix: merge it, then git branch -d {run.run_branch})",
        )
    )
    return steps


def apply(state: StateDir, run: Run, steps: list[Step]) -> None:
    repo = Path(run.repo)
    for step in steps:
        if step.kind == "worktree":
            worktrees.remove(repo, Path(step.target))
        elif step.kind == "workspace":
            workspace.remove(Path(step.target))
        elif step.kind == "branch":
            refs.delete_branch(repo, step.target, step.sha)
    shutil.rmtree(state.run_dir(run.id) / "indexes", ignore_errors=True)
