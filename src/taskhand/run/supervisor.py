"""The supervisor (`taskhand run --watch`): a run that reaches a person's gate exits waiting,
as the spec says, and the supervisor starts the next run (for TaskTrack, a new plan execution
run) as soon as a person's move makes a task workable; it idles, cheaply, in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from taskhand.config import RunConfig, Summary
from taskhand.pipeline.harness import Listener
from taskhand.pipeline.lifecycle import plan_key
from taskhand.pipeline.track import Tracker
from taskhand.plan import formats, schedule
from taskhand.plan.problems import PlanError
from taskhand.run import launch, lookup
from taskhand.run.lifecycle import screened
from taskhand.run.preflight import load
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.records import RunStatus
from taskhand.state.status import StatusBook
from taskhand.state.store import Store

POLL_SECONDS = 1.0
# How a run ends that people can move on: it waits for them, a task failed (a reopen goes
# on), or nothing is eligible yet.
IDLE = (RunStatus.WAITING, RunStatus.FAILED, RunStatus.STOPPED)
Idle = Callable[[Summary], None]


def watch(
    plan_path: Path,
    config: RunConfig,
    listener: Listener,
    repo: Path | None = None,
    new: bool = False,
    on_idle: Idle | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> Summary:
    """Run the plan and keep it going while people answer: after each run that ends waiting,
    wait until a move makes a task workable, then run again. Returns when a run ends any
    other way (completed, failed, capped) or a signal stops it."""
    summary = launch.start(plan_path, config, listener, repo, new)
    folder = formats.plan_folder(plan_path).resolve()
    with _supervising(summary.repo, folder, summary.run_id):
        return _keep(summary, listener, on_idle, poll_seconds)


def rewatch(
    run_id: str,
    listener: Listener,
    repo: Path | None = None,
    on_idle: Idle | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> Summary:
    """Go on with an earlier run under the supervisor, with the settings it was started with
    (`taskhand board` does, for a plan whose run is not going)."""
    root, state = lookup.repository(repo)
    with Store.open(state.database) as store:
        folder = Path(lookup.pick(store, run_id, root).plan_path)
    with _supervising(root, folder, run_id):
        summary = launch.resume(run_id, listener, root)
        return _keep(summary, listener, on_idle, poll_seconds)


def _supervising(repo: Path, plan_root: Path, run_id: str) -> AbstractContextManager[None]:
    """One supervisor per plan: a second one (another `run --watch`, a board) is refused,
    naming this one, and a board attaches to it instead."""
    state = StateDir.for_repo(repo)
    return lock.hold(state.watch_lock(plan_root), plan_root, f"supervisor of run {run_id}")


def _keep(
    summary: Summary, listener: Listener, on_idle: Idle | None, poll_seconds: float
) -> Summary:
    while summary.status in IDLE and not summary.already_completed:
        if on_idle is not None:
            on_idle(summary)
        while not workable(summary.repo, summary.run_id):
            time.sleep(poll_seconds)
        summary = launch.resume(summary.run_id, listener, summary.repo)
    return summary


def workable(repo: Path, run_id: str) -> bool:
    """Whether a run of the plan would select a task now (a person's move may have made one
    workable). A plan a person is editing into shape is not workable until it is valid."""
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.get_run(run_id)
        if run is None:
            return False
        try:
            plan = load(Path(run.plan_path))
        except PlanError:
            return False
        config = RunConfig.from_json(run.config)
        track = Tracker(store, plan_key(plan), config.pipeline, _quiet)
        statuses = screened(track, plan, StatusBook(plan, store, run.id).statuses())
    return bool(schedule.eligible(plan, statuses))


def _quiet(*_: object, **__: object) -> None:
    """The supervisor only looks: it moves nothing, so it logs nothing."""
