"""A person's or CI's word in the integration ledger: one disposition for one of a task's
results, refused for a result that has one already.

A result is an attempt that ended with a candidate commit (state/integration.py); the harness
records `integrated` and `superseded` itself, everything else is for whoever read the diff.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.errors import UserError
from taskhand.run import lookup
from taskhand.state.integration import AlreadyDisposed
from taskhand.state.records import Disposition, DispositionRow, Run
from taskhand.state.store import Store
from taskhand.workspace import git

PERSON = "person"  # who recorded a disposition, unless --by says


class DispositionError(UserError):
    """A disposition that cannot be recorded: no such result, or it has one already."""


def run_of(store: Store, root: Path, run_id: str | None, task_id: str | None) -> Run:
    """The run a ledger command means: the one named, else the newest with an attempt at
    the task, else the repository's latest."""
    if run_id is None and task_id is not None:
        for run in store.runs():
            if store.attempts(run.id, task_id):
                return run
    return lookup.pick(store, run_id, root)


def record(
    store: Store,
    run: Run,
    task_id: str,
    status: Disposition,
    *,
    target_ref: str = "",
    note: str = "",
    number: int | None = None,
    by: str = PERSON,
) -> DispositionRow:
    """Record `status` for the task's latest result without a disposition (or for attempt
    `number`'s): `integrated` names the ref it landed on, the run branch unless given. A
    result that has one already is refused, naming it."""
    show = f"taskhand integration show {task_id} --run {run.id}"
    found = store.results(run.id, task_id)
    if number is not None:
        chosen = [r for r in found if r.attempt.number == number]
        if not chosen:
            raise DispositionError(
                f"attempt {number} of {task_id} in run {run.id} left no result",
                fix=f"see the task's results with {show}",
            )
    else:
        chosen = [r for r in found if r.disposition is None] or found[-1:]
    if not chosen:
        raise DispositionError(
            f"{task_id} has no result in run {run.id}: no attempt at it ended with a commit",
            fix=f"see what its attempts came to with taskhand ledger {task_id} --run {run.id}",
        )
    target = chosen[-1].attempt
    ref = target_ref or (run.run_branch if status is Disposition.INTEGRATED else "")
    sha = git.resolve(Path(run.repo), ref) if ref else ""
    try:
        return store.record_disposition(target.id, status, ref, sha, by or PERSON, note)
    except AlreadyDisposed as refused:
        first = refused.existing
        where = f" into {first.target_ref}" if first.target_ref else ""
        raise DispositionError(
            f"{task_id} attempt {first.attempt}'s result {first.candidate_sha[:12]} is "
            f"{first.status}{where} already (by {first.recorded_by}, {first.recorded}); "
            "a result gets exactly one disposition",
            fix=f"see it with {show}",
        ) from None
