"""Parallelism never fails a task: a candidate that cannot land on top of other tasks'
landings (its change conflicts with theirs, or its checks fail only there) is not its worker's
failure. Its attempt ends as requeued, blamed on those landings ("after the landing of
T-002"), in its ledger entry and its event; the task goes again from the run branch as it is
now, the next prompt saying what landed and what conflicted or broke (its ledger). Requeues
do not count against max_attempts; max_requeues caps them (run/loop.py).

The attempt's end, its entry, its worker's verdict and its event are one transaction
(state/store.py): a run killed before it redoes the attempt, one killed after it starts the
next from the head.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Plan
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry
from taskhand.state.records import AttemptStatus
from taskhand.workspace import git

# Read by the next attempt's worker too, so it names no cap nor the harness's branches:
# "requeued" says it is no failure.
ANEW = (
    "the next attempt starts from the project as it is now, which holds that work: make this "
    "task's change again on top of it"
)


@dataclass(frozen=True)
class Landing:
    """One task's candidate that landed on the run branch."""

    task_id: str
    title: str
    sha: str


def since(h: Harness, plan: Plan, base: str, head: str) -> list[Landing]:
    """The landings on the run branch after `base`, up to `head`, oldest first. Read only
    when a candidate cannot land: a clean replay pays no git process for it."""
    into = h.depot.args()
    listed = git.output(h.repo, *into, "rev-list", "--first-parent", "--reverse", f"{base}..{head}")
    passed = {
        a.candidate_sha: a.task_id
        for a in h.store.attempts(h.run.id)
        if a.status == AttemptStatus.PASSED and a.candidate_sha
    }
    found = []
    for sha in listed.split():
        task_id = passed.get(sha)
        if task_id is not None:
            task = plan.task(task_id)
            found.append(Landing(task_id, task.title if task else "", sha))
    return found


def touching(h: Harness, landings: list[Landing], paths: list[str]) -> list[Landing]:
    """The landings that changed any of `paths` (where a conflict is); all when none did."""
    into, wanted = h.depot.args(), set(paths)
    hit = []
    for landing in landings:
        diff = ["diff-tree", "-r", "-z", "--name-only", "--no-commit-id", landing.sha]
        if wanted & set(git.fields(git.run(h.repo, *into, *diff).stdout)):
            hit.append(landing)
    return hit or landings


def after(landings: list[Landing]) -> str:
    """The blame in words: "after the landing of T-002 (Its title)"."""
    if not landings:
        return "after work that landed meanwhile"
    named = [f"{n.task_id} ({n.title})" if n.title else n.task_id for n in landings]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return f"after the landing of {listed}"


def requeue(h: Harness, work: Work, landings: list[Landing], entry: Entry) -> Ended:
    """End the attempt as requeued with `entry` (its summary the reason, blame included); the
    task goes on to another attempt unless the requeue cap says otherwise."""
    blamed = {"attempt": work.attempt.number, "after": [n.task_id for n in landings]}
    said = (EventKind.ATTEMPT_REQUEUED, blamed)
    reason = h.end_attempt(work.attempt, AttemptStatus.REQUEUED, entry.summary, entry, said)
    return Ended(None, reason)
