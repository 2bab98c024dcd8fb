"""What a task may touch, so that the scheduler keeps apart tasks that would conflict: the
paths it declares, and the files its earlier attempts in this run changed (their candidates,
as the store records them: base and candidate commits)."""

from __future__ import annotations

from collections.abc import Iterable

from taskhand.pipeline.harness import Harness
from taskhand.plan.model import Plan
from taskhand.state.records import AttemptStatus
from taskhand.workspace import diffs
from taskhand.workspace.git import GitError

Touched = dict[int, list[str]]  # attempt id -> the files its candidate changed


def of(h: Harness, plan: Plan, task_ids: Iterable[str], touched: Touched) -> dict[str, list[str]]:
    """Each task's footprint. `touched` caches what ended attempts changed: that never moves."""
    by_id = plan.by_id()
    wanted = dict.fromkeys(task_ids)
    earlier = [
        a
        for a in h.store.attempts(h.run.id)
        if a.task_id in wanted and a.candidate_sha and a.status != AttemptStatus.RUNNING
    ]
    found: dict[str, list[str]] = {}
    for task_id in wanted:
        task = by_id.get(task_id)
        mine = list(task.paths) if task is not None else []
        for attempt in (a for a in earlier if a.task_id == task_id):
            if attempt.id not in touched:
                touched[attempt.id] = _changed(h, attempt.base_sha, attempt.candidate_sha or "")
            mine += touched[attempt.id]
        found[task_id] = list(dict.fromkeys(mine))
    return found


def _changed(h: Harness, base: str, candidate: str) -> list[str]:
    try:
        return [c.path for c in diffs.counts(h.repo, base, candidate)]
    except GitError:  # a candidate whose objects are gone predicts nothing
        return []
