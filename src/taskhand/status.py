"""Where a plan's task statuses live, and the writes each procedure step makes to them.

TaskTrack keeps status in the plan's files, which the harness (never the agent) edits exactly
as the spec's steps say. Markdown plans keep it in the state store; their files are never
written. Both mirror into the store, which the exports and `stats` read.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.formats import tasktrack_edit
from taskhand.formats.files import write_atomic
from taskhand.model import Dialect, Plan, Status
from taskhand.store import Store

# The field a conclusion adds to a TaskTrack task file, by the status it concludes with.
CONCLUSION_FIELDS = {Status.DONE: "Resolution", Status.WAIT: "Request", Status.FAIL: "Failure"}


class StatusBook:
    """Reads and writes task statuses for one run of one plan."""

    def __init__(self, plan: Plan, store: Store, run_id: str) -> None:
        self.plan = plan
        self.store = store
        self.run_id = run_id
        self.in_files = plan.dialect is Dialect.TASKTRACK

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
        self._overview(task_id, Status.BUSY)
        self.store.set_task(self.run_id, task_id, Status.BUSY)

    def claim(self, task_id: str) -> None:
        """Claim: the task file says BUSY, with a fresh timestamp, before any work."""
        self._task_file(task_id, Status.BUSY, ())

    def conclude(self, task_id: str, status: Status, text: str) -> None:
        """Conclude: the task file takes its new status and the field that explains it."""
        field = CONCLUSION_FIELDS[status]
        self._task_file(task_id, status, ((field, " ".join(text.split()) or "-"),))
        self.store.set_task(self.run_id, task_id, status, text)

    def complete(self, task_id: str, status: Status) -> None:
        """Complete: the overview takes the status the task processing returned."""
        self._overview(task_id, status)
        self.store.set_task(self.run_id, task_id, status)

    def _overview(self, task_id: str, status: Status) -> None:
        if not self.in_files or self.plan.overview_path is None:
            return
        if self.plan.overview_statuses.get(task_id) is status:
            return
        path = self.plan.overview_path
        text = tasktrack_edit.read_raw(path)
        write_atomic(path, tasktrack_edit.set_overview_status(text, task_id, status))
        self.plan.overview_statuses[task_id] = status

    def _task_file(self, task_id: str, status: Status, fields: tuple[tuple[str, str], ...]) -> None:
        task = self.plan.task(task_id)
        if not self.in_files or task is None or task.source is None:
            return
        text = tasktrack_edit.read_raw(task.source)
        edited = tasktrack_edit.update_task_text(
            text, status=status, updated=tasktrack_edit.now(), append=fields
        )
        write_atomic(Path(task.source), edited)
        task.status = status
