"""The run loop: recover, screen, select, claim, execute, conclude, complete, repeat.

It follows the TaskTrack procedures for both dialects. Every change is durable (in the store,
and for TaskTrack in the plan files) before the harness acts on it, so a run killed at any
instant resumes where it stood and never redoes work it already integrated. What an attempt
does is the pipeline's business (run/attempt.py, pipeline/): the loop knows no stage by name.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from taskhand import workspace
from taskhand.agents.base import Agent
from taskhand.agents.executor import LocalExecutor
from taskhand.config import RunConfig, Summary
from taskhand.host.sandbox import NONE
from taskhand.pipeline.deliver import deliver_run
from taskhand.pipeline.harness import Harness, Listener
from taskhand.pipeline.integrate import record_landing
from taskhand.pipeline.lifecycle import pipeline_of
from taskhand.pipeline.stages import PIPELINES
from taskhand.pipeline.work import Ended, Stage
from taskhand.plan import paths, schedule
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.schedule import Exit
from taskhand.run import attempt as attempts
from taskhand.run import footprints, jobs, retention
from taskhand.run import lifecycle as lives
from taskhand.run.preflight import load
from taskhand.state import lock
from taskhand.state.events import EventKind
from taskhand.state.paths import StateDir
from taskhand.state.records import AttemptStatus, Run, RunStatus
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.text import plural
from taskhand.unit import Sandbox
from taskhand.workspace import git, refs, review_copy, worktrees

__all__ = ["Listener", "Runner", "load"]

RUN_STATUS = {
    Exit.PLAN_COMPLETED: RunStatus.COMPLETED,
    Exit.FAILED_TASKS: RunStatus.FAILED,
    Exit.WAITING: RunStatus.WAITING,
    Exit.NO_ELIGIBLE: RunStatus.STOPPED,
}

# Attempts that end their task: a run killed before concluding it concludes it on resume.
_ENDS_THE_TASK = (AttemptStatus.GAVE_UP, AttemptStatus.REVIEW_FAILED, AttemptStatus.CAPPED)


class Runner:
    """One run of one plan, from recovery to its exit; every step recorded in the store."""

    def __init__(
        self,
        store: Store,
        state: StateDir,
        run: Run,
        agents: dict[str, Agent],
        config: RunConfig,
        listener: Listener,
        sandbox: Sandbox = NONE,
        pipeline: Sequence[Stage] | None = None,
    ) -> None:
        self.h = Harness(store, state, run, LocalExecutor(agents), config, listener, sandbox)
        self.store, self.state, self.config = store, state, config
        # A pipeline given here (tests declare their own) serves every task; else each task
        # goes through the one it or its plan names.
        self.pipeline = tuple(pipeline) if pipeline is not None else None
        self._plan: Plan | None = None
        self._signature: list[tuple[str, int, int]] = []
        self._touched: footprints.Touched = {}  # what ended attempts changed, for selection
        self._held: dict[str, list[str]] = {}  # the tasks held back, and behind which

    @property
    def run(self) -> Run:
        return self.h.run

    # -- the procedure ------------------------------------------------------------------

    def execute(self) -> Summary:
        branches = [self.run.run_branch, *{a.branch for a in self.store.attempts(self.run.id)}]
        for branch in refs.clear_ref_locks(self.h.repo, branches):
            self.h.emit(
                EventKind.WARNING, message=f"removed a stale lock on {branch} left by a killed git"
            )
        self.ensure_run_branch()
        self.h.guard.check_refs()  # never build on a branch the store did not write
        # The plan's own files are the harness's to write (statuses, a task's questions): no
        # warning for those.
        inside = tuple(f"{folder}/" for folder in self.h.plan_folder_in_repo())
        dirty = [p for p in git.dirty_paths(self.h.repo) if not inside or not p.startswith(inside)]
        if dirty and not self.config.snapshot:  # a snapshot run's base holds them
            self.h.emit(
                EventKind.WARNING,
                message=f"{len(dirty)} uncommitted or untracked paths in your "
                "checkout are not visible to tasks; they start from the run's base commit "
                "(fix: run with --snapshot to start them from your checkout as it is)",
            )
        self.h.step("TaskTrack STEP: Recovery")
        resumed = self.recover()
        if self.config.jobs > 1:
            return jobs.execute(self, resumed)
        while True:
            cap = self.h.run_cap()
            if cap:
                return self.stop(RunStatus.CAPPED, cap)
            if resumed:  # a run of several jobs may have left several in progress
                plan = self.load_plan()
                book = StatusBook(plan, self.store, self.run.id)
                task = plan.task(resumed.pop(0))
            else:
                plan, book, statuses, picked = self.select(1)
                if not picked:
                    reason = schedule.exit_condition(plan, statuses) or Exit.NO_ELIGIBLE
                    return self.finish(reason)
                task = plan.task(picked[0])
            assert task is not None
            status = self.process(plan, book, task)
            if not isinstance(status, Status):  # capped mid-task: stop, resumably
                return self.stop(RunStatus.CAPPED, status)
            book.complete(task.id, status)
            self.h.step("TaskTrack STEP: Complete")
            self.h.note_progress(plan)
            if self.h.violated:
                return self.stop(RunStatus.STOPPED, self.h.violated)

    def select(
        self, count: int, running: Sequence[str] = ()
    ) -> tuple[Plan, StatusBook, dict[str, Status], list[str]]:
        """Screen the plan and select up to `count` eligible tasks (marked BUSY): one run
        takes the first of the frontier; several jobs the longest remaining paths first, none
        that may change the files a `running` task or another pick changes."""
        self.h.step("TaskTrack STEP: Screen")
        # Under the plan files' lock: a person's move never lands between the screen that
        # found a task workable and the select that marks it BUSY.
        with lock.files(self.h.plan_path):
            plan = self.load_plan()
            lives.adopt_hand_answers(self.h, plan)
            book = StatusBook(plan, self.store, self.run.id)
            statuses = lives.screened(self.h.track, plan, book.statuses())
            frontier = schedule.eligible(plan, statuses)
            held: dict[str, list[str]] = {}
            if self.config.jobs > 1 and count:
                frontier = schedule.longest_first(plan, statuses, frontier)
                prints = footprints.of(self.h, plan, [*frontier, *running], self._touched)
                picked, held = schedule.apart(frontier, count, prints, running)
                self.say_held(held, prints)
            else:
                picked = frontier[:count]
            for task_id in picked:
                book.select(task_id)
                statuses[task_id] = Status.BUSY
        for task_id in picked:
            self.h.step(f"TaskTrack STEP: Select Task {task_id}")
        return plan, book, statuses, picked

    def say_held(self, held: dict[str, list[str]], prints: dict[str, list[str]]) -> None:
        """Say why each task waits while others run, once for as long as the reason holds."""
        for task_id, behind in held.items():
            if self._held.get(task_id) != behind:
                theirs = [p for t in behind for p in prints.get(t, [])]
                shared = paths.meet(prints.get(task_id, []), theirs)
                self.h.emit(EventKind.TASK_HELD, task_id, behind=behind, paths=shared)
        self._held = held

    def load_plan(self) -> Plan:
        """The plan as its files say now: a person may sharpen a task between passes.

        Read again only when a file changed (names, sizes and times), so a long plan is not
        parsed once per task.
        """
        signature = sorted(
            (e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(self.h.plan_path)
        )
        if self._plan is None or signature != self._signature:
            if self._plan is not None:
                self.h.emit(
                    EventKind.PLAN_CHANGED, message="the plan's files changed; read them again"
                )
            self._plan, self._signature = load(self.h.plan_path), signature
        return self._plan

    def ensure_run_branch(self) -> None:
        """A run killed while it was being created may lack its branch: make it now."""
        if not self.run.run_branch:
            self.store.set_run_branch(self.run.id, f"taskhand/run-{self.run.id}")
            self.h.run = self.store.get_run(self.run.id) or self.run
            self.h.guard.run = self.h.run

    def recover(self) -> list[str]:
        """Step 0: settle what a killed run left behind; the BUSY tasks to resume."""
        plan = self.load_plan()
        book = StatusBook(plan, self.store, self.run.id)
        for attempt in self.store.open_attempts(self.run.id):
            asked = lives.asked_by(self.h, attempt)
            if asked is not None:  # it ended with its question; only its record was cut short
                reason = self.h.redact(asked.text)
                self.store.finish_attempt(attempt.id, AttemptStatus.QUESTION, reason)
                continue
            self.store.finish_attempt(
                attempt.id, AttemptStatus.INTERRUPTED, "the run was interrupted"
            )
            self.h.emit(EventKind.ATTEMPT_INTERRUPTED, attempt.task_id, attempt=attempt.number)
        self.prune_worktrees()
        for task in plan.tasks:
            if book.overview_status(task.id) is Status.BUSY and task.status is not Status.BUSY:
                book.complete(task.id, task.status)
        busy = [t for t, s in book.statuses().items() if s is Status.BUSY]
        for task_id in busy:
            settled = self.settle_integrated(plan, book, task_id)
            if settled is not None:
                book.complete(task_id, settled)
                self.h.step("TaskTrack STEP: Complete")
                busy.remove(task_id)
        self.h.note_progress(plan)  # a conclusion a kill left unnoted
        return busy

    def settle_integrated(self, plan: Plan, book: StatusBook, task_id: str) -> Status | None:
        """Conclude a task whose accepted candidate was integrated before the run died."""
        attempts = [
            a for a in self.store.attempts(self.run.id, task_id) if a.status == AttemptStatus.PASSED
        ]
        head = refs.branch_sha(self.h.repo, self.run.run_branch)
        if not attempts or head is None or not attempts[-1].candidate_sha:
            return None
        last = attempts[-1]
        candidate = last.candidate_sha or ""
        if not git.is_ancestor(self.h.repo, candidate, head):
            if head != last.base_sha:
                return None
            refs.move_branch(self.h.repo, self.run.run_branch, candidate, head)
        record_landing(self.h, last, candidate)  # once: a kill may have come before it
        logged = any(
            e.kind == EventKind.INTEGRATED and e.task_id == task_id
            for e in self.store.events(self.run.id)
        )
        if not logged:  # the run died between moving the branch and saying so
            self.h.emit(EventKind.INTEGRATED, task_id, sha=candidate)
        if self.config.deliver.per_task:
            return None  # its delivery is left: the task resumes after landing (run/attempt.py)
        resolution = last.reason or "done"
        task = plan.task(task_id)
        if task is not None:  # the lifecycle too, or it stays at judge with the task DONE
            lives.concluded(self.h, plan, task, Ended(Status.DONE, resolution))
        self.h.step("TaskTrack STEP: Conclude")
        book.conclude(task_id, Status.DONE, resolution)
        self.h.emit(EventKind.TASK_CONCLUDED, task_id, status=str(Status.DONE), text=resolution)
        self.h.step(f"TaskTrack FINISHED: Task {task_id}")
        return Status.DONE

    def process(
        self, plan: Plan, book: StatusBook, task: Task, h: Harness | None = None
    ) -> Status | str:
        """The task processing run: claim, execute attempts, conclude; or why a cap stopped
        it before its end. `h`: the harness of the job it runs in (several jobs)."""
        h = h or self.h
        h.step("TaskTrack STEP: Claim")
        book.claim(task.id)
        h.step("TaskTrack STEP: Execute")
        while True:
            result = lives.left_waiting(h, plan, task)  # a kill came at a person's gate
            if result is not None:
                break
            reason = self.attempts_cap(task, h.store) or h.task_cap(task.id)
            if reason:
                result = Ended(Status.FAIL, reason)
                break
            capped = h.run_cap()
            if capped:
                return capped
            h.seat.take()  # a job whose last candidate waited in the merge queue gave it up
            try:
                result = attempts.attempt(h, self.stages_of(task), plan, book, task)
            except Exception as exc:  # what an agent left must never end the run
                result = attempts.unhandled(h, task, exc)
            if result.run_capped:
                return result.text or h.run_cap() or "a run cap was reached"
            if result.status is not None:
                break
        status, text = lives.concluded(h, plan, task, result)
        h.step("TaskTrack STEP: Conclude")
        book.conclude(task.id, status, h.redact(text))
        h.emit(EventKind.TASK_CONCLUDED, task.id, status=str(status), text=text)
        h.step(f"TaskTrack FINISHED: Task {task.id}")
        return status

    def stages_of(self, task: Task) -> tuple[Stage, ...]:
        if self.pipeline is not None:
            return self.pipeline
        return PIPELINES[pipeline_of(task, self.config.pipeline)]

    def attempts_cap(self, task: Task, store: Store | None = None) -> str:
        """Why the task may not have another attempt: too many failed, rejected or requeued
        (by other tasks' landings), or "". Counted since the task was last reopened: a
        reopened task has its attempts again."""
        attempts = (store or self.store).counted_attempts(self.run.id, task.id)
        failed = [a for a in attempts if a.status == AttemptStatus.FAILED]
        rejected = [a for a in attempts if a.status == AttemptStatus.REJECTED]
        # An attempt that ended the task (a run killed before concluding it is resumed here).
        final = [a for a in attempts if a.status in _ENDS_THE_TASK]
        if final:
            return final[-1].reason or f"the last attempt ended as {final[-1].status}"
        if len(failed) >= (task.max_attempts or self.h.caps.max_attempts):
            counted = f"{plural(len(failed), 'attempt')} failed"
            return f"{counted}; the last: {failed[-1].reason}"
        if len(rejected) >= self.h.caps.bounces:
            return (
                f"the reviewer rejected {len(rejected)} attempts, the bounce cap; "
                f"the last: {rejected[-1].reason}"
            )
        requeued = [a for a in attempts if a.status == AttemptStatus.REQUEUED]
        if len(requeued) > self.h.caps.max_requeues:  # the cap is the requeues it may have
            return (
                f"other tasks' landings requeued it {len(requeued)} times, past the requeue cap "
                f"of {self.h.caps.max_requeues} (fix: a higher --max-requeues or fewer --jobs, "
                f"then taskhand reopen {task.id}); the last: {requeued[-1].reason}"
            )
        return ""

    def finish(self, reason: Exit) -> Summary:
        self.h.step(reason.message)
        if reason is Exit.PLAN_COMPLETED:  # with delivery per run, the run's pull request
            delivered = deliver_run(self.h, self.load_plan())
            if delivered is not None and delivered.status is Status.FAIL:
                return self.stop(RunStatus.FAILED, delivered.text)
            if delivered is not None:
                return self.stop(RunStatus.COMPLETED, f"{reason.message}: {delivered.text}")
        return self.stop(RUN_STATUS[reason], reason.message)

    def stop(self, status: RunStatus, message: str) -> Summary:
        used = {*(f"review-{lens}" for lens in self.config.lenses), *self.h.copies}
        for name in sorted(used):  # they served the whole run
            path, index = self.h.copy_place(name)
            self.left_behind(path, review_copy.release(path, index))
        self.store.set_run_status(self.run.id, status, message)
        self.h.emit(EventKind.RUN_FINISHED, status=status, message=message)
        run_dir = self.state.run_dir(self.run.id)
        run_dir.mkdir(parents=True, exist_ok=True)
        self.store.export_events(self.run.id, run_dir / "events.jsonl")
        self.store.export_task_status(self.run.id, run_dir / "task-status.json")
        return Summary(
            self.run.id,
            status,
            message,
            self.run.run_branch,
            self.h.repo,
            self.state.run_dir(self.run.id),
        )

    def prune_worktrees(self) -> None:
        """Remove any worktree of this run that no open attempt owns (none are, after
        recovery); the workspaces of attempts that ended stay (run/retention.py)."""
        folder = self.state.run_dir(self.run.id) / "worktrees"
        for tree in worktrees.listed(self.h.repo):
            if tree.path.resolve().is_relative_to(folder.resolve()):
                worktrees.remove(self.h.repo, tree.path, locked_too=True)
        # Workspaces are plain folders (worktrees above are from earlier versions' runs).
        if folder.exists():
            kept = retention.retained(self.store.attempts(self.run.id))
            for leftover in sorted([*folder.glob("*/attempt-*"), *folder.glob("review-*")]):
                if leftover not in kept:
                    self.left_behind(leftover, workspace.remove(leftover))
        shutil.rmtree(self.state.run_dir(self.run.id) / "indexes", ignore_errors=True)

    def left_behind(self, path: Path, left: list[str]) -> None:
        """Say what of a workspace could not be deleted; the run goes on (`taskhand clean`
        tries again)."""
        if left:
            self.h.emit(EventKind.WARNING, message=workspace.left_behind(path, left))
