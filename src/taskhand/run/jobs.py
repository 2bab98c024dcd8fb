"""Several tasks at once (`--jobs N`): the run's loop with up to N tasks in flight, each in a
thread of its own, with its own workspace, its own connection to the store and its own
disposable copies. The main thread screens, selects (longest remaining path first, none that
may change what a task under way changes: run/footprints.py) and completes; the tasks'
candidates land one at a time through the integrate stage's queue, each replayed onto what
landed before it. Caps hold across jobs: a run cap starts no new unit, and
the tasks under way stop resumably.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from taskhand.config import Summary
from taskhand.plan import schedule
from taskhand.plan.model import Plan, Status
from taskhand.plan.schedule import Exit
from taskhand.state.events import Event
from taskhand.state.records import RunStatus
from taskhand.state.status import StatusBook
from taskhand.state.store import Store

if TYPE_CHECKING:  # the loop imports this module
    from taskhand.run.loop import Runner

# What a job comes back with: the task's status (or why a run cap stopped it), and why an
# agent's reach past its workspace stops the run ("" when none did).
Result = tuple[Status | str, str]


def execute(runner: Runner, resumed: list[str]) -> Summary:
    """The run from its recovered BUSY tasks (`resumed`) to its exit, `runner.config.jobs`
    tasks at a time."""
    h = runner.h
    h.listener = _serialized(h.listener)  # events from every job, one at a time
    slots = list(range(runner.config.jobs, 0, -1))
    running: dict[Future[Result], tuple[str, int]] = {}
    stopped, violated = "", ""
    plan = runner.load_plan()
    with ThreadPoolExecutor(runner.config.jobs, thread_name_prefix="taskhand-job") as pool:

        def start(plan: Plan, task_id: str) -> None:
            slot = slots.pop()
            running[pool.submit(_job, runner, plan, task_id, slot)] = (task_id, slot)

        while True:
            stopped = stopped or h.run_cap()
            if not stopped and not violated:
                while resumed and slots:
                    start(plan, resumed.pop(0))
                if slots:
                    under_way = [task_id for task_id, _ in running.values()]
                    plan, _, statuses, picked = runner.select(len(slots), under_way)
                    for task_id in picked:
                        start(plan, task_id)
            if not running:
                if violated:
                    return runner.stop(RunStatus.STOPPED, violated)
                if stopped:
                    return runner.stop(RunStatus.CAPPED, stopped)
                plan, _, statuses, _ = runner.select(0)
                return runner.finish(schedule.exit_condition(plan, statuses) or Exit.NO_ELIGIBLE)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task_id, slot = running.pop(future)
                slots.append(slot)
                status, reached = future.result()
                violated = violated or reached
                if not isinstance(status, Status):  # a run cap stopped it, resumably
                    stopped = stopped or status
                    continue
                plan = runner.load_plan()
                StatusBook(plan, runner.store, runner.run.id).complete(task_id, status)
                h.step("TaskTrack STEP: Complete")
                h.note_progress(plan)


def _job(runner: Runner, plan: Plan, task_id: str, slot: int) -> Result:
    """One task, from claim to conclusion, in this thread with its own store connection."""
    with Store.open(runner.state.database) as store:
        h = runner.h.fork(store, slot)
        task = plan.task(task_id)
        assert task is not None, f"{task_id} left the plan while it ran"
        status = runner.process(plan, StatusBook(plan, store, runner.run.id), task, h)
        return status, h.violated


def _serialized(listener: Callable[[Event], None]) -> Callable[[Event], None]:
    if getattr(listener, "serialized", False):
        return listener
    held = threading.Lock()

    def told(event: Event) -> None:
        with held:
            listener(event)

    told.serialized = True  # type: ignore[attr-defined]
    return told
