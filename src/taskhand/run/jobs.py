"""Several tasks at once (`--jobs N`): the run's loop with up to N tasks in flight, each in a
thread of its own, with its own workspace, its own connection to the store and its own
disposable copies. The main thread screens, selects (longest remaining path first, none that
may change what a task under way changes: run/footprints.py) and completes. N is the count of
tasks running agents' units: a task whose candidate waits in the merge queue
(pipeline/queue.py), gated there on top of those ahead of it, gives its seat to the next task
and takes one again if it is requeued. Caps hold across jobs: a run cap starts no new unit, and
the tasks under way stop resumably.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from taskhand.config import Summary
from taskhand.host import interrupts
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.queue import Seat
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
_THREADS = 256  # tasks under way at once, at most: in units, or waiting in the merge queue
_WAKE_SECONDS = 0.25  # how often a job waiting for a seat looks whether the run is stopping


def execute(runner: Runner, resumed: list[str]) -> Summary:
    """The run from its recovered BUSY tasks (`resumed`) to its exit, `runner.config.jobs`
    tasks' units at a time; a task whose candidate waits in the merge queue gives its seat to
    the next."""
    h = runner.h
    h.listener = _serialized(h.listener)  # events from every job, one at a time
    seats = Seats(runner.config.jobs)
    running: dict[Future[Result], str] = {}
    stopped, violated = "", ""
    plan = runner.load_plan()
    # Threads for every task under way: those in the queue hold no seat.
    with ThreadPoolExecutor(_THREADS, thread_name_prefix="taskhand-job") as pool:

        def start(plan: Plan, task_id: str, seat: int) -> None:
            future = pool.submit(_job, runner, plan, task_id, JobSeat(seats, seat))
            future.add_done_callback(lambda _: seats.wake())
            running[future] = task_id

        while True:
            # Read before looking at the jobs: one that ends after this look wakes the wait.
            told = seats.told
            for future in [f for f in running if f.done()]:
                task_id = running.pop(future)
                status, reached = future.result()
                violated = violated or reached
                if not isinstance(status, Status):  # a run cap stopped it, resumably
                    stopped = stopped or status
                    continue
                plan = runner.load_plan()
                StatusBook(plan, runner.store, runner.run.id).complete(task_id, status)
                h.step("TaskTrack STEP: Complete")
                h.note_progress(plan)
            stopped = stopped or h.run_cap()
            if not stopped and not violated:
                while resumed and (seat := seats.take_new()):
                    start(plan, resumed.pop(0), seat)
                free = seats.free()
                if free:
                    plan, _, statuses, picked = runner.select(free, list(running.values()))
                    for task_id in picked:
                        start(plan, task_id, seats.take_new())
            if not running:
                if violated:
                    return runner.stop(RunStatus.STOPPED, violated)
                if stopped:
                    return runner.stop(RunStatus.CAPPED, stopped)
                plan, _, statuses, _ = runner.select(0)
                return runner.finish(schedule.exit_condition(plan, statuses) or Exit.NO_ELIGIBLE)
            seats.wait(told)


def _job(runner: Runner, plan: Plan, task_id: str, seat: JobSeat) -> Result:
    """One task, from claim to conclusion, in this thread with its own store connection."""
    try:
        with Store.open(runner.state.database) as store:
            h = runner.h.fork(store, seat.number)
            seat.harness, h.seat = h, seat
            task = plan.task(task_id)
            assert task is not None, f"{task_id} left the plan while it ran"
            status = runner.process(plan, StatusBook(plan, store, runner.run.id), task, h)
            return status, h.violated
    finally:
        seat.give_back()


class Seats:
    """The run's seats for agents' units, one per job, numbered (a job's disposable copies are
    named by its seat). A job gives its seat back while its candidate waits in the merge queue
    and takes one again before another attempt; those coming back go before new tasks."""

    def __init__(self, jobs: int) -> None:
        self.changed = threading.Condition()
        self.vacant = list(range(jobs, 0, -1))
        self.returning = 0  # jobs waiting for a seat again
        self.told = 0  # how often a seat came free or a job ended: the main loop wakes on it

    def free(self) -> int:
        """Seats a new task may take."""
        with self.changed:
            return 0 if self.returning else len(self.vacant)

    def take_new(self) -> int:
        """A seat for a new task (0 when none is free)."""
        with self.changed:
            return self.vacant.pop() if self.vacant and not self.returning else 0

    def take(self) -> int:
        """A seat for a job coming back, waiting for one; Interrupted once the run stops."""
        with self.changed:
            self.returning += 1
            try:
                while not self.vacant:
                    interrupts.heed()
                    self.changed.wait(_WAKE_SECONDS)
                return self.vacant.pop()
            finally:
                self.returning -= 1

    def give(self, seat: int) -> None:
        with self.changed:
            self.vacant.append(seat)
            self.wake()

    def wake(self) -> None:
        with self.changed:
            self.told += 1
            self.changed.notify_all()

    def wait(self, told: int) -> None:
        """Until a seat comes free or a job ends, after the main loop's look at `told`."""
        with self.changed:
            while self.told == told:
                self.changed.wait(_WAKE_SECONDS)


class JobSeat(Seat):
    """One job's hold on a seat (pipeline/harness.py's Seat, for a run of several jobs)."""

    def __init__(self, seats: Seats, number: int) -> None:
        self.seats, self.number = seats, number
        self.harness: Harness | None = None

    def give_back(self) -> None:
        if self.number:
            self.seats.give(self.number)
            self.number = 0

    def take(self) -> None:
        if not self.number:
            self.number = self.seats.take()
            if self.harness is not None:  # its copies are the new seat's
                self.harness.slot = f"-{self.number}"


def _serialized(listener: Callable[[Event], None]) -> Callable[[Event], None]:
    if getattr(listener, "serialized", False):
        return listener
    held = threading.Lock()

    def told(event: Event) -> None:
        with held:
            listener(event)

    told.serialized = True  # type: ignore[attr-defined]
    return told
