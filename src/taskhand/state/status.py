"""Where a plan's task statuses live, and the writes each procedure step makes to them.

TaskTrack keeps status in the plan's files, which the harness (never the agent) edits exactly
as the spec's steps say. Markdown plans keep it, and their questions and answers, in the state
store; their files are never written. Both mirror into the store, which the exports and `stats`
read. A person's moves (run/moves.py) write the same places. Every edit of a plan file is made
under the lock of the plan's files (`lock.files`), so a run's step and a move never interleave.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from taskhand.plan.formats import tasktrack_edit
from taskhand.plan.formats.files import write_atomic
from taskhand.plan.formats.prose import one_line
from taskhand.plan.model import Dialect, Exchange, Plan, Status, Task
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.workspace import git

if TYPE_CHECKING:
    from taskhand.state.store import Store

# The field a conclusion adds to a TaskTrack task file, by the status it concludes with.
CONCLUSION_FIELDS = {Status.DONE: "Resolution", Status.WAIT: "Request", Status.FAIL: "Failure"}


class StatusBook:
    """Reads and writes task statuses for one run of one plan."""

    def __init__(self, plan: Plan, store: Store, run_id: str) -> None:
        self.plan = plan
        self.store = store
        self.run_id = run_id
        self.in_files = plan.dialect is Dialect.TASKTRACK
        if not self.in_files:
            self._attach_outcomes()

    def _attach_outcomes(self) -> None:
        """A Markdown task's questions, answers and conclusion live in the store; prompts and
        `show` read them from the task, as they read a TaskTrack file's fields."""
        states = self.store.task_states(self.run_id)
        asked = self.store.requests(self.run_id)
        for task in self.plan.tasks:
            task.exchanges = asked.get(task.id, [])
            state = states.get(task.id)
            reason = state.reason if state else None
            task.resolution = reason if state and state.status is Status.DONE else None
            task.failure = reason if state and state.status is Status.FAIL else None

    def statuses(self) -> dict[str, Status]:
        if self.in_files:
            return self.plan.statuses()
        stored = self.store.task_states(self.run_id)
        return {
            t.id: Status(stored[t.id].status) if t.id in stored else Status.OPEN
            for t in self.plan.tasks
        }

    def overview_status(self, task_id: str) -> Status | None:
        return self.plan.overview_statuses.get(task_id) if self.in_files else None

    def select(self, task_id: str) -> None:
        """Screen/Select: the overview marks the task BUSY (the store for Markdown plans)."""
        recorded = self.store.task_states(self.run_id).get(task_id) if self.in_files else None
        if recorded is not None and recorded.status is Status.FAIL:
            # A person set the failed task OPEN in its files: its caps start over, as after
            # `taskhand reopen`, or it would fail again at once on the attempts it used up.
            self.store.reopen_task(self.run_id, task_id, "an edit of the plan files")
        with lock.files(self.plan.root):  # BUSY lands whole, never inside a person's move
            self._overview(task_id, Status.BUSY)
            self.store.set_task(self.run_id, task_id, Status.BUSY)

    def claim(self, task_id: str) -> None:
        """Claim: the task file says BUSY, with a fresh timestamp, before any work."""
        self._task_file(task_id, Status.BUSY, ())

    def conclude(self, task_id: str, status: Status, text: str) -> None:
        """Conclude: the task file takes its new status and the field that explains it."""
        field = CONCLUSION_FIELDS[status]
        self._task_file(task_id, status, ((field, one_line(text) or "-"),))
        request = text if status is Status.WAIT else None
        if self.run_id:
            self.store.set_task(self.run_id, task_id, status, text, request)

    def complete(self, task_id: str, status: Status) -> None:
        """Complete: the overview takes the status the task processing returned."""
        self._overview(task_id, status)
        if self.run_id:  # "": a plan no run has recorded; its files are all there is
            self.store.set_task(self.run_id, task_id, status)

    def reopen(self, task_id: str) -> None:
        """A person's retry of a FAIL task: OPEN again, its Failure dropped from a TaskTrack
        file (the spec allows it only on a FAIL task; the ledger keeps the story)."""
        self._task_file(task_id, Status.OPEN, (), lambda t: tasktrack_edit.drop_field(t, "Failure"))
        self._overview(task_id, Status.OPEN)
        if self.run_id:  # "": a TaskTrack plan no run has recorded; its files are all there is
            self.store.reopen_task(self.run_id, task_id, "taskhand reopen")

    def answer(self, task_id: str, response: str) -> None:
        """A person's answer to a WAIT task, as the spec's human feedback workflow writes it:
        a Response below the latest Request, and the task OPEN in both files."""
        line = one_line(response)
        self._task_file(task_id, Status.OPEN, (), lambda t: tasktrack_edit.add_response(t, line))
        self._overview(task_id, Status.OPEN)
        if self.run_id:
            self.store.answer_task(self.run_id, task_id, response)

    def move(self, task_id: str, status: Status, *, response: str = "", request: str = "") -> None:
        """A person's move, as the spec's feedback procedure writes it: a Response below the
        task's open Request (when there is one to answer), a FAIL task's Failure dropped, then
        `status` in both files, with a new Request when it is WAIT (what is to be done next)."""
        task = self.plan.task(task_id)
        answering = bool(response) and task is not None and _asks(task)
        with lock.files(self.plan.root):

            def prepare(text: str) -> str:
                if task is not None and task.status is Status.FAIL:
                    text = tasktrack_edit.drop_field(text, "Failure")  # only a FAIL task's
                return tasktrack_edit.add_response(text, one_line(response)) if answering else text

            fields = (("Request", one_line(request) or "-"),) if status is Status.WAIT else ()
            self._task_file(task_id, status, fields, prepare)
            self._overview(task_id, status)
        if task is not None:  # as the files now say, for a later step of the same move
            if answering:
                task.exchanges[-1].response = response
            if status is Status.WAIT:
                task.exchanges.append(Exchange(request))
        if not self.run_id:
            return
        if answering:
            self.store.answer_task(self.run_id, task_id, response)
        wait = status is Status.WAIT
        self.store.set_task(
            self.run_id, task_id, status, request if wait else None, request if wait else None
        )

    def _overview(self, task_id: str, status: Status) -> None:
        if not self.in_files or self.plan.overview_path is None:
            return
        if self.plan.overview_statuses.get(task_id) is status:
            return
        path = self.plan.overview_path
        with lock.files(self.plan.root):
            text = tasktrack_edit.read_raw(path)
            write_atomic(path, tasktrack_edit.set_overview_status(text, task_id, status))
        self.plan.overview_statuses[task_id] = status

    def _task_file(
        self,
        task_id: str,
        status: Status,
        fields: tuple[tuple[str, str], ...],
        prepare: Callable[[str], str] = str,
    ) -> None:
        task = self.plan.task(task_id)
        if not self.in_files or task is None or task.source is None:
            return
        with lock.files(self.plan.root):
            text = prepare(tasktrack_edit.read_raw(task.source))
            edited = tasktrack_edit.update_task_text(
                text, status=status, updated=tasktrack_edit.now(), append=fields
            )
            write_atomic(Path(task.source), edited)
        task.status = status


def _asks(task: Task) -> bool:
    """Whether the task holds a Request no Response answers yet."""
    return bool(task.exchanges) and task.exchanges[-1].response is None


def latest_statuses(plan: Plan, repo: Path | None = None) -> dict[str, Status]:
    """The plan's statuses as they stand: a TaskTrack plan's files; a Markdown plan's latest
    run in the store (all OPEN before its first run). Questions and answers are attached to
    a Markdown plan's tasks, as a TaskTrack file holds them."""
    if plan.dialect is Dialect.TASKTRACK:
        return plan.statuses()
    try:
        state = StateDir.for_repo(git.repo_for(plan.root, repo))
    except git.GitError:  # a plan outside any repository has never run
        return plan.statuses()
    if not state.database.exists():
        return plan.statuses()
    # The store loads only for a plan that may have run: `show` of a new plan never needs it.
    from taskhand.state.store import Store

    with Store.open(state.database) as store:
        run = store.latest_run(str(plan.root.resolve()))
        if run is None:
            return plan.statuses()
        return StatusBook(plan, store, run.id).statuses()
