"""The run loop: recover, screen, select, claim, execute, conclude, complete, repeat.

It follows the TaskTrack procedures for both dialects. Every change is durable (in the store,
and for TaskTrack in the plan files) before the harness acts on it, so a run killed at any
instant resumes where it stood and never redoes work it already integrated.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from taskhand import git, prompts, schedule
from taskhand.agents.base import Agent, Case, Outcome, Role, Unit
from taskhand.formats.templates import slug
from taskhand.gates import run_gates
from taskhand.model import Plan, Status, Task
from taskhand.paths import StateDir
from taskhand.problems import PlanError
from taskhand.records import Event, Run
from taskhand.runconfig import RunConfig, Summary
from taskhand.schedule import Exit
from taskhand.secrets import Redactor
from taskhand.status import StatusBook
from taskhand.store import Store
from taskhand.validate import validate

Listener = Callable[[Event], None]

RUN_STATUS = {
    Exit.PLAN_COMPLETED: "completed",
    Exit.FAILED_TASKS: "failed",
    Exit.WAITING: "waiting",
    Exit.NO_ELIGIBLE: "stopped",
}


@dataclass(frozen=True)
class _Result:
    """How one attempt ended: the status it concludes the task with, or None to retry."""

    status: Status | None
    text: str


def task_branch(task: Task) -> str:
    return f"taskhand/{task.id}-{slug(task.title)}"


def load(plan_path: Path) -> Plan:
    """The plan at `plan_path`, or a PlanError that lists every problem found."""
    report = validate(plan_path)
    if report.plan is None or report.errors:
        raise PlanError(report.errors)
    return report.plan


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
    ) -> None:
        self.store = store
        self.state = state
        self.run = run
        self.agents = agents
        self.agent = agents[config.agent]  # tasks without an agent of their own use this one
        self.config = config
        self.caps = config.caps
        self.listener = listener
        self.repo = Path(run.repo)
        self.plan_path = Path(run.plan_path)
        self.started = time.monotonic()
        # Secret values (environment variables named like keys, tokens, passwords) never reach
        # a prompt, a transcript or an event.
        self.redact = Redactor()
        self._plan: Plan | None = None
        self._signature: list[tuple[str, int, int]] = []

    # -- the procedure ------------------------------------------------------------------

    def execute(self) -> Summary:
        branches = [self.run.run_branch, *{a.branch for a in self.store.attempts(self.run.id)}]
        for branch in git.clear_ref_locks(self.repo, branches):
            self.emit("warning", message=f"removed a stale lock on {branch} left by a killed git")
        self.ensure_run_branch()
        dirty = git.dirty_paths(self.repo)
        if dirty:
            self.emit(
                "warning",
                message=f"{len(dirty)} uncommitted or untracked paths in your "
                "checkout are not visible to tasks; they start from the run's base commit",
            )
        self.step("TaskTrack STEP: Recovery")
        resumed = self.recover()
        while True:
            plan = self.load_plan()
            book = StatusBook(plan, self.store, self.run.id)
            cap = self.run_cap()
            if cap:
                return self.stop("capped", cap)
            if resumed is not None:
                task, resumed = plan.task(resumed), None
            else:
                self.step("TaskTrack STEP: Screen")
                statuses = book.statuses()
                frontier = schedule.eligible(plan, statuses)
                if not frontier:
                    reason = schedule.exit_condition(plan, statuses) or Exit.NO_ELIGIBLE
                    return self.finish(reason)
                task = plan.task(frontier[0])
                assert task is not None
                book.select(task.id)
                self.step(f"TaskTrack STEP: Select Task {task.id}")
            assert task is not None
            status = self.process(plan, book, task)
            if status is None:
                return self.stop("capped", self.run_cap() or "a run cap was reached")
            book.complete(task.id, status)
            self.step("TaskTrack STEP: Complete")

    def load_plan(self) -> Plan:
        """The plan as its files say now: a person may sharpen a task between passes.

        Read again only when a file changed (names, sizes and times), so a long plan is not
        parsed once per task.
        """
        signature = sorted(
            (e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(self.plan_path)
        )
        if self._plan is None or signature != self._signature:
            self._plan, self._signature = load(self.plan_path), signature
        return self._plan

    def ensure_run_branch(self) -> None:
        """A run killed while it was being created may lack its branch: make it now."""
        if not self.run.run_branch:
            self.store.set_run_branch(self.run.id, f"taskhand/run-{self.run.id}")
            self.run = self.store.get_run(self.run.id) or self.run
        if git.branch_sha(self.repo, self.run.run_branch) is None:
            git.create_branch(self.repo, self.run.run_branch, self.run.base_sha)

    def recover(self) -> str | None:
        """Step 0: settle what a killed run left behind; the BUSY task to resume, if any."""
        plan = self.load_plan()
        book = StatusBook(plan, self.store, self.run.id)
        for attempt in self.store.open_attempts(self.run.id):
            self.store.finish_attempt(attempt.id, "interrupted", "the run was interrupted")
            self.emit("attempt_interrupted", attempt.task_id, attempt=attempt.number)
        self.prune_worktrees()
        for task in plan.tasks:
            if book.overview_status(task.id) is Status.BUSY and task.status is not Status.BUSY:
                book.complete(task.id, task.status)
        busy = [t for t, s in book.statuses().items() if s is Status.BUSY]
        for task_id in busy:
            settled = self.settle_integrated(plan, book, task_id)
            if settled is not None:
                book.complete(task_id, settled)
                self.step("TaskTrack STEP: Complete")
                busy.remove(task_id)
        return busy[0] if busy else None

    def settle_integrated(self, plan: Plan, book: StatusBook, task_id: str) -> Status | None:
        """Conclude a task whose accepted candidate was integrated before the run died."""
        attempts = [a for a in self.store.attempts(self.run.id, task_id) if a.status == "passed"]
        head = git.branch_sha(self.repo, self.run.run_branch)
        if not attempts or head is None or not attempts[-1].candidate_sha:
            return None
        last = attempts[-1]
        candidate = last.candidate_sha or ""
        if not git.is_ancestor(self.repo, candidate, head):
            if head != last.base_sha:
                return None
            git.move_branch(self.repo, self.run.run_branch, candidate, head)
        logged = any(
            e.kind == "integrated" and e.task_id == task_id for e in self.store.events(self.run.id)
        )
        if not logged:  # the run died between moving the branch and saying so
            self.emit("integrated", task_id, sha=candidate)
        resolution = last.reason or "done"
        self.step("TaskTrack STEP: Conclude")
        book.conclude(task_id, Status.DONE, resolution)
        self.emit("task_concluded", task_id, status=str(Status.DONE), text=resolution)
        self.step(f"TaskTrack FINISHED: Task {task_id}")
        return Status.DONE

    def process(self, plan: Plan, book: StatusBook, task: Task) -> Status | None:
        """The task processing run: claim, execute attempts, conclude. None: run capped."""
        self.step("TaskTrack STEP: Claim")
        book.claim(task.id)
        self.step("TaskTrack STEP: Execute")
        max_attempts = task.max_attempts or self.caps.max_attempts
        while True:
            failed = [a for a in self.store.attempts(self.run.id, task.id) if a.status == "failed"]
            reason = ""
            if len(failed) >= max_attempts:
                reason = f"{len(failed)} attempts failed; the last: {failed[-1].reason}"
            reason = reason or self.task_cap(task.id)
            if reason:
                result = _Result(Status.FAIL, reason)
                break
            if self.run_cap():
                return None
            result = self.attempt(plan, book, task, [a.reason or "" for a in failed])
            if result.status is not None:
                break
        assert result.status is not None
        self.step("TaskTrack STEP: Conclude")
        book.conclude(task.id, result.status, self.redact(result.text))
        self.emit("task_concluded", task.id, status=str(result.status), text=result.text)
        self.step(f"TaskTrack FINISHED: Task {task.id}")
        return result.status

    def attempt(self, plan: Plan, book: StatusBook, task: Task, feedback: list[str]) -> _Result:
        base = git.branch_sha(self.repo, self.run.run_branch)
        assert base is not None
        number = len(self.store.attempts(self.run.id, task.id)) + 1
        worktree = self.state.worktree(self.run.id, task.id, number)
        branch = self.branch_for(task, base)
        attempt = self.store.start_attempt(self.run.id, task.id, str(worktree), branch, base)
        self.emit("attempt_started", task.id, attempt=attempt.number)
        if git.branch_sha(self.repo, branch) not in (None, base):
            git.delete_branch(self.repo, branch)  # ours: an earlier attempt of this run
        git.add_worktree(self.repo, worktree, branch, base)
        try:
            return self.work(plan, book, task, attempt.id, attempt.number, worktree, base, feedback)
        finally:
            git.remove_worktree(self.repo, worktree)

    def branch_for(self, task: Task, base: str) -> str:
        """The task's branch; one of that name that this run did not make is left alone."""
        branch = task_branch(task)
        ours = {a.branch for a in self.store.attempts(self.run.id, task.id)}
        if branch in ours or git.branch_sha(self.repo, branch) in (None, base):
            return branch
        return f"{branch}-{self.run.id}"

    def work(
        self,
        plan: Plan,
        book: StatusBook,
        task: Task,
        attempt_id: int,
        number: int,
        worktree: Path,
        base: str,
        feedback: list[str],
    ) -> _Result:
        prompt = self.redact(prompts.implement(plan, task, book.statuses(), feedback))
        outcome = self.unit(task, attempt_id, number, worktree, prompt)
        if outcome.case is Case.QUESTION and outcome.question:
            self.store.finish_attempt(attempt_id, "question", self.redact(outcome.question.text))
            return _Result(Status.WAIT, _request(outcome))
        if outcome.case is Case.FAILED:
            self.store.finish_attempt(attempt_id, "gave_up", self.redact(outcome.failure))
            return _Result(Status.FAIL, outcome.failure or "the agent gave up")
        if outcome.case is not Case.DONE:
            return self.reject(attempt_id, task, outcome.failure or "the agent did not finish")
        candidate = git.commit_worktree(worktree, base, f"{task.id}: {task.title}")
        if candidate is None:
            return self.reject(attempt_id, task, "the attempt changed no files")
        self.store.set_candidate(attempt_id, candidate)
        forbidden = self.plan_folder_in_repo()
        results = [
            replace(g, detail=self.redact(g.detail), output=self.redact(g.output))
            for g in run_gates(self.repo, worktree, base, candidate, task, forbidden)
        ]
        for gate in results:
            self.store.record_gate(
                attempt_id,
                gate.name,
                gate.ok,
                gate.detail,
                gate.exit_code,
                gate.seconds,
                gate.output,
            )
            self.emit("gate", task.id, name=gate.name, ok=gate.ok, detail=gate.detail)
        failures = [g.detail for g in results if not g.ok]
        if failures:
            return self.reject(attempt_id, task, "; ".join(failures))
        resolution = outcome.resolution or f"{task.title}: done"
        self.store.finish_attempt(attempt_id, "passed", self.redact(resolution))
        git.move_branch(self.repo, self.run.run_branch, candidate, base)
        self.emit("integrated", task.id, sha=candidate)
        return _Result(Status.DONE, resolution)

    def unit(
        self, task: Task, attempt_id: int, number: int, worktree: Path, prompt: str
    ) -> Outcome:
        model = task.model or self.config.model
        agent = self.agents.get(task.agent or "", self.agent)
        unit_id = self.store.start_unit(
            attempt_id, str(Role.IMPLEMENTER), agent.name, model, len(prompt.encode())
        )
        self.emit("unit_started", task.id, role=str(Role.IMPLEMENTER), attempt=number)
        timeout = task.timeout_seconds or self.caps.unit_seconds
        began = time.monotonic()
        try:
            outcome = agent.run(
                Unit(Role.IMPLEMENTER, task.id, number, prompt, worktree, timeout, model)
            )
        except Exception as exc:  # a backend bug must fail the unit, not the run
            outcome = Outcome(Case.ERROR, failure=f"the agent crashed: {exc}")
        transcript = self.state.transcript(self.run.id, task.id, unit_id)
        transcript.parent.mkdir(parents=True, exist_ok=True)
        messages = self.redact.value(outcome.transcript)
        transcript.write_text("".join(json.dumps(m) + "\n" for m in messages))
        self.store.finish_unit(unit_id, str(outcome.case), outcome.usage, str(transcript))
        self.emit(
            "unit_finished",
            task.id,
            case=str(outcome.case),
            seconds=round(time.monotonic() - began, 3),
            tokens_in=outcome.usage.tokens_in,
            tokens_out=outcome.usage.tokens_out,
            cost=outcome.usage.cost,
        )
        return outcome

    def reject(self, attempt_id: int, task: Task, reason: str) -> _Result:
        self.store.finish_attempt(attempt_id, "failed", self.redact(reason))
        self.emit("attempt_failed", task.id, reason=reason)
        return _Result(None, reason)

    # -- caps, ends and helpers ----------------------------------------------------------

    def run_cap(self) -> str:
        caps = self.caps
        if caps.run_seconds is not None and time.monotonic() - self.started > caps.run_seconds:
            return f"the run's wall-clock cap of {caps.run_seconds:g}s was reached"
        used = self.store.usage(self.run.id)
        if caps.run_tokens is not None and used.tokens_in + used.tokens_out >= caps.run_tokens:
            return f"the run's token cap of {caps.run_tokens} was reached"
        if caps.run_dollars is not None and used.cost >= caps.run_dollars:
            return f"the run's spend cap of ${caps.run_dollars:g} was reached"
        return ""

    def task_cap(self, task_id: str) -> str:
        caps = self.caps
        used = self.store.usage(self.run.id, task_id)
        if caps.task_tokens is not None and used.tokens_in + used.tokens_out >= caps.task_tokens:
            return f"the task's token cap of {caps.task_tokens} was reached"
        if caps.task_dollars is not None and used.cost >= caps.task_dollars:
            return f"the task's spend cap of ${caps.task_dollars:g} was reached"
        return ""

    def finish(self, reason: Exit) -> Summary:
        self.step(reason.message)
        return self.stop(RUN_STATUS[reason], reason.message)

    def stop(self, status: str, message: str) -> Summary:
        self.store.set_run_status(self.run.id, status, message)
        self.emit("run_finished", status=status, message=message)
        run_dir = self.state.run_dir(self.run.id)
        run_dir.mkdir(parents=True, exist_ok=True)
        self.store.export_events(self.run.id, run_dir / "events.jsonl")
        self.store.export_task_status(self.run.id, run_dir / "task-status.json")
        return Summary(
            self.run.id,
            status,
            message,
            self.run.run_branch,
            self.repo,
            self.state.run_dir(self.run.id),
        )

    def prune_worktrees(self) -> None:
        """Remove any worktree of this run that no open attempt owns (none are, after recovery)."""
        folder = self.state.run_dir(self.run.id) / "worktrees"
        for tree in git.worktrees(self.repo):
            if tree.path.resolve().is_relative_to(folder.resolve()):
                git.remove_worktree(self.repo, tree.path, locked_too=True)
        # A run killed inside `git worktree add` can leave a folder git never registered.
        if folder.exists():
            for leftover in sorted(folder.glob("*/attempt-*")):
                shutil.rmtree(leftover, ignore_errors=True)

    def plan_folder_in_repo(self) -> list[str]:
        try:
            return [str(self.plan_path.resolve().relative_to(self.repo.resolve()))]
        except ValueError:
            return []

    def step(self, message: str) -> None:
        self.emit("step", message=message)

    def emit(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        self.listener(self.store.event(self.run.id, kind, task_id, **self.redact.value(data)))


def _request(outcome: Outcome) -> str:
    assert outcome.question is not None
    options = outcome.question.options
    letters = "".join(f" ({chr(65 + i)}) {o}" for i, o in enumerate(options))
    suffix = f" Options:{letters} (the first is recommended)." if options else ""
    return f"{outcome.question.text}{suffix}"
