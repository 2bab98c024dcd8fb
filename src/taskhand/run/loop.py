"""The run loop: recover, screen, select, claim, execute, conclude, complete, repeat.

It follows the TaskTrack procedures for both dialects. Every change is durable (in the store,
and for TaskTrack in the plan files) before the harness acts on it, so a run killed at any
instant resumes where it stood and never redoes work it already integrated.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from taskhand import prompts, workspace
from taskhand.agents.base import Agent
from taskhand.config import RunConfig, Summary
from taskhand.gates import GateResult, run_gates
from taskhand.host.sandbox import NONE
from taskhand.host.secrets import Redactor
from taskhand.plan import schedule
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import PlanError
from taskhand.plan.schedule import Exit
from taskhand.plan.templates import slug
from taskhand.plan.validate import validate
from taskhand.run.guard import Guard
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, Entry, Event, Run
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.unit import Case, CaseReport, Outcome, Role, Sandbox, Unit, Verdict
from taskhand.workspace import diffs, git, review_copy
from taskhand.workspace.backstop import Print
from taskhand.workspace.review_copy import VIOLATION, disposable_copy

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
    run_capped: bool = False  # the run reached a cap mid-attempt: stop, resumably


@dataclass(frozen=True)
class _Stop:
    """Why a review ended without verdicts: the attempt's outcome and the reason."""

    # review_failed, capped (the task's budget), interrupted (the run's cap) or violation
    outcome: str
    reason: str


# An empty change is rejected by the harness itself: there is nothing for a reviewer to read.
NOTHING_DONE = Verdict(
    False,
    "acceptance_gap",
    "The attempt changed no files: no work was performed in this task.",
    [],
    "Make the changes the task asks for in the workspace.",
)
REVIEW_TRIES = 2  # a reviewer that breaks or writes outside its copy is replaced once


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
        sandbox: Sandbox = NONE,
    ) -> None:
        self.store = store
        self.state = state
        self.run = run
        self.agents = agents
        self.agent = agents[config.agent]  # tasks without an agent of their own use this one
        self.evaluator = agents.get(config.evaluator_agent, self.agent)
        self.config = config
        self.caps = config.caps
        self.listener = listener
        self.repo = Path(run.repo)
        self.plan_path = Path(run.plan_path)
        self.started = time.monotonic()
        # Secrets (values of secret-named variables, and anything shaped like a token, a key
        # or a password in a URL) never reach a prompt, a transcript or an event.
        self.redact = Redactor()
        self._plan: Plan | None = None
        self._signature: list[tuple[str, int, int]] = []
        # Agents read the repository's objects through their workspace's alternates.
        self.sandbox = sandbox.with_readable([git.common_dir(self.repo)])
        self.violated = ""  # why an agent's reach past its workspace stopped the run
        self.guard = Guard(store, run, self.plan_path, sandbox.active, self.emit)

    # -- the procedure ------------------------------------------------------------------

    def execute(self) -> Summary:
        branches = [self.run.run_branch, *{a.branch for a in self.store.attempts(self.run.id)}]
        for branch in git.clear_ref_locks(self.repo, branches):
            self.emit("warning", message=f"removed a stale lock on {branch} left by a killed git")
        self.ensure_run_branch()
        self.guard.check_refs()  # never build on a branch the store did not write
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
            if self.violated:
                return self.stop("stopped", self.violated)

    def load_plan(self) -> Plan:
        """The plan as its files say now: a person may sharpen a task between passes.

        Read again only when a file changed (names, sizes and times), so a long plan is not
        parsed once per task.
        """
        signature = sorted(
            (e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(self.plan_path)
        )
        if self._plan is None or signature != self._signature:
            if self._plan is not None:
                self.emit("plan_changed", message="the plan's files changed; read them again")
            self._plan, self._signature = load(self.plan_path), signature
        return self._plan

    def ensure_run_branch(self) -> None:
        """A run killed while it was being created may lack its branch: make it now."""
        if not self.run.run_branch:
            self.store.set_run_branch(self.run.id, f"taskhand/run-{self.run.id}")
            self.run = self.store.get_run(self.run.id) or self.run
            self.guard.run = self.run

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
        while True:
            reason = self.attempts_cap(task) or self.task_cap(task.id)
            if reason:
                result = _Result(Status.FAIL, reason)
                break
            if self.run_cap():
                return None
            result = self.attempt(plan, book, task)
            if result.run_capped:
                return None
            if result.status is not None:
                break
        assert result.status is not None
        self.step("TaskTrack STEP: Conclude")
        book.conclude(task.id, result.status, self.redact(result.text))
        self.emit("task_concluded", task.id, status=str(result.status), text=result.text)
        self.step(f"TaskTrack FINISHED: Task {task.id}")
        return result.status

    def attempts_cap(self, task: Task) -> str:
        """Why the task may not have another attempt: too many failed, or rejected, or "".
        Counted since the task was last reopened: a reopened task has its attempts again."""
        attempts = self.store.counted_attempts(self.run.id, task.id)
        failed = [a for a in attempts if a.status == "failed"]
        rejected = [a for a in attempts if a.status == "rejected"]
        # An attempt that ended the task (a run killed before concluding it is resumed here).
        final = [a for a in attempts if a.status in ("gave_up", "review_failed", "capped")]
        if final:
            return final[-1].reason or f"the last attempt ended as {final[-1].status}"
        if len(failed) >= (task.max_attempts or self.caps.max_attempts):
            counted = f"{len(failed)} attempt{'s' if len(failed) != 1 else ''} failed"
            return f"{counted}; the last: {failed[-1].reason}"
        if len(rejected) >= self.caps.bounces:
            return (
                f"the reviewer rejected {len(rejected)} attempts, the bounce cap; "
                f"the last: {rejected[-1].reason}"
            )
        return ""

    def attempt(self, plan: Plan, book: StatusBook, task: Task) -> _Result:
        self.guard.check_refs(task.id)  # put back, so the attempt starts from what was integrated
        base = self.guard.head()[0]
        earlier = self.store.attempts(self.run.id, task.id)
        number = len(earlier) + 1
        paused = self.paused(earlier, base)
        if paused is not None:  # before a new attempt is opened: the paused one goes on
            return self.resume_review(plan, book, task, paused)
        path = self.state.worktree(self.run.id, task.id, number)
        branch = self.branch_for(task, earlier)
        attempt = self.store.start_attempt(self.run.id, task.id, str(path), branch, base)
        building_on = self.building_on(earlier, base)
        start = building_on.candidate_sha if building_on else None
        self.emit("attempt_started", task.id, attempt=attempt.number, start=start or base)
        shown = building_on.number if building_on else None
        with self.workspace_at(task, attempt, start or base) as ws:
            return self.work(plan, book, task, attempt, ws, shown)

    @contextmanager
    def workspace_at(self, task: Task, attempt: Attempt, sha: str) -> Iterator[workspace.Workspace]:
        """The attempt's workspace at `sha` while the block runs, then gone with its index."""
        path = Path(attempt.worktree)
        index = self.state.index(self.run.id, f"{task.id}-attempt-{attempt.number}")
        try:
            yield workspace.prepare(self.repo, path, index, sha, task_branch(task))
        finally:
            workspace.remove(path)
            index.unlink(missing_ok=True)

    def paused(self, earlier: list[Attempt], base: str) -> Attempt | None:
        """The task's last attempt, when a run cap stopped it before its review on `base`."""
        ended = [a for a in earlier if a.status != "interrupted"]
        last = ended[-1] if ended else None
        usable = last is not None and last.status == "paused" and last.candidate_sha
        return last if usable and last is not None and last.base_sha == base else None

    def resume_review(self, plan: Plan, book: StatusBook, task: Task, attempt: Attempt) -> _Result:
        """Go on with a paused attempt: its candidate, case and gate results as recorded."""
        self.store.reopen_attempt(attempt.id)
        self.emit("attempt_resumed", task.id, attempt=attempt.number)
        case: dict[str, Any] = {}
        for event in self.store.events_of(self.run.id, "attempt_paused"):
            if event.task_id == task.id and event.data["attempt"] == attempt.number:
                case = dict(event.data["case"])
        outcome = Outcome(
            Case.DONE, resolution=str(case.get("resolution", "")), report=CaseReport.from_json(case)
        )
        results = [
            GateResult(g.name, g.ok, g.detail, g.exit_code, g.seconds, g.output)
            for g in self.store.gates(attempt.id)
        ]
        candidate = attempt.candidate_sha or ""
        with self.workspace_at(task, attempt, candidate) as ws:
            context = self.context(plan, book, task, ws.path)
            return self.judge(task, context, attempt, ws, candidate, outcome, results)

    def building_on(self, earlier: list[Attempt], base: str) -> Attempt | None:
        """The rejected attempt the next one continues from: a reviewer's findings are fixed
        in the work it read, not by starting over. Only when its candidate sits on `base`."""
        ended = [a for a in earlier if a.status != "interrupted"]
        last = ended[-1] if ended else None
        if last is None or last.status != "rejected" or not last.candidate_sha:
            return None
        return last if git.resolve(self.repo, f"{last.candidate_sha}^") == base else None

    def branch_for(self, task: Task, earlier: list[Attempt]) -> str:
        """The task's branch; a branch of that name that this run did not make is never
        moved or deleted: the run takes another name."""
        branch = task_branch(task)
        ours = {a.branch for a in self.store.attempts(self.run.id)}
        for name in (branch, f"{branch}-{self.run.id}"):
            if name in ours or git.branch_sha(self.repo, name) is None:
                return name
        return f"{branch}-{self.run.id}-{len(earlier) + 1}"

    def work(
        self,
        plan: Plan,
        book: StatusBook,
        task: Task,
        attempt: Attempt,
        ws: workspace.Workspace,
        building_on: int | None,
    ) -> _Result:
        worktree = ws.path
        context = self.context(plan, book, task, worktree)
        prompt = self.redact(prompts.worker(task, context, building_on))
        before = self.guard.before()
        outcome = self.unit(Role.IMPLEMENTER, task, attempt, worktree, prompt)
        broken = self.breaches(before, "the worker's unit", task.id)
        if broken:
            return self.violation(attempt, task, broken)
        if outcome.case is Case.QUESTION and outcome.question:
            self.store.finish_attempt(attempt.id, "question", self.redact(outcome.question.text))
            return _Result(Status.WAIT, _request(outcome))
        if outcome.case is Case.FAILED:
            failure = outcome.failure or "the agent gave up"
            failure = self.end_attempt(attempt, "gave_up", failure, Entry("gave_up", failure))
            return _Result(Status.FAIL, failure)
        if outcome.case is not Case.DONE:
            failure = outcome.failure or "the agent did not finish"
            return self.retry(attempt, task, "failed", failure, Entry("unit_failed", failure))
        base = attempt.base_sha
        try:
            candidate = workspace.collect(self.repo, ws, base, f"{task.id}: {task.title}")
        except workspace.WorkspaceError as exc:
            failure = str(exc)
            return self.retry(attempt, task, "failed", failure, Entry("unit_failed", failure))
        if candidate is None:
            entry = Entry("no_changes", NOTHING_DONE.concern, verdicts=[_verdict(NOTHING_DONE)])
            return self.retry(attempt, task, "failed", "the attempt changed no files", entry)
        self.record_candidate(attempt, candidate)
        before = self.guard.before()
        results = self.gate(task, attempt, worktree, candidate)
        broken = self.breaches(before, "the acceptance checks", task.id)
        if broken:
            return self.violation(attempt, task, broken)
        failures = [g.detail for g in results if not g.ok]
        if failures:
            summary = diffs.summary(self.repo, base, candidate)
            case = {"resolution": outcome.resolution, **_report(outcome)}
            gates = [{"name": g.name, "ok": g.ok, "detail": g.detail} for g in results]
            entry = Entry("checks_failed", "; ".join(failures), summary, case, gates)
            return self.retry(attempt, task, "failed", "; ".join(failures), entry)
        return self.judge(task, context, attempt, ws, candidate, outcome, results)

    def judge(
        self,
        task: Task,
        context: prompts.Context,
        attempt: Attempt,
        ws: workspace.Workspace,
        candidate: str,
        outcome: Outcome,
        results: list[GateResult],
    ) -> _Result:
        """Review a candidate that passed its gate, then integrate it or send it back."""
        worktree, base = ws.path, attempt.base_sha
        summary = diffs.summary(self.repo, base, candidate)
        case = {"resolution": outcome.resolution, **_report(outcome)}
        gates = [{"name": g.name, "ok": g.ok, "detail": g.detail} for g in results]
        found = self.review(task, context, attempt, worktree, candidate, outcome, results, summary)
        if isinstance(found, _Stop) and found.outcome == "interrupted":
            # The worker's unit is paid for and its candidate passed: kept, and a resumed run
            # goes on with its review instead of paying for the work again.
            self.store.finish_attempt(attempt.id, "paused", self.redact(found.reason))
            self.emit("attempt_paused", task.id, attempt=attempt.number, case=case)
            return _Result(None, found.reason, run_capped=True)
        if isinstance(found, _Stop) and found.outcome == "violation":
            return self.violation(attempt, task, [found.reason])
        if isinstance(found, _Stop):
            entry = Entry(found.outcome, found.reason, summary, case, gates)
            reason = self.end_attempt(attempt, found.outcome, found.reason, entry)
            self.emit("attempt_failed", task.id, reason=reason)
            return _Result(Status.FAIL, reason)
        verdicts = [_verdict(v, lens) for lens, v in found]
        rejections = [(lens, v) for lens, v in found if not v.accepted]
        if rejections:
            reason = "; ".join(_rejection(lens, v) for lens, v in rejections)
            entry = Entry("rejected", reason, summary, case, gates, verdicts)
            return self.retry(attempt, task, "rejected", reason, entry)
        broken = self.guard.check_refs(task.id)
        if broken:  # the run branch is back where it belongs; this candidate is not built on
            return self.violation(attempt, task, broken)
        resolution = outcome.resolution or f"{task.title}: done"
        entry = Entry("accepted", resolution, summary, case, gates, verdicts)
        resolution = self.end_attempt(attempt, "passed", resolution, entry)
        git.move_branch(self.repo, self.run.run_branch, candidate, base)
        self.emit("integrated", task.id, sha=candidate)
        return _Result(Status.DONE, resolution)

    def record_candidate(self, attempt: Attempt, candidate: str) -> None:
        """Durable first, then the task branch moved to it (only ever a branch of this run)."""
        self.store.set_candidate(attempt.id, candidate)
        now = git.branch_sha(self.repo, attempt.branch)
        if now is None:
            git.create_branch(self.repo, attempt.branch, candidate)
        elif now in self.guard.task_branch_values(attempt.branch):
            git.move_branch(self.repo, attempt.branch, candidate, now)

    def breaches(self, before: Print, during: str, task_id: str) -> list[str]:
        """What agent work changed that it may not: the repository, the plan, the run's refs."""
        found = self.guard.after(before, during, task_id)
        try:
            return found + self.guard.check_refs(task_id)
        except git.GitError as exc:  # the repository is broken now: that is the finding
            return [*found, f"the run's branches could not be read: {exc}"]

    def violation(self, attempt: Attempt, task: Task, found: list[str]) -> _Result:
        """End the attempt and its task: an agent that reached past its workspace gets no
        other try (a person may reopen the task after looking)."""
        reason = "violation: " + "; ".join(found[:10])
        if len(found) > 10:
            reason += f"; and {len(found) - 10} more"
        reason = self.end_attempt(attempt, "violation", reason, Entry("violation", reason))
        self.emit("attempt_failed", task.id, reason=reason)
        # Nothing more runs until a person has looked: what the agent changed (the plan, the
        # repository's settings) would otherwise steer the tasks after it.
        self.violated = (
            f"{task.id} reached outside its workspace; the run stopped "
            f"(fix: see taskhand ledger {task.id}, undo what it changed, "
            f"then taskhand reopen {task.id} or taskhand resume)"
        )
        return _Result(Status.FAIL, reason)

    def context(self, plan: Plan, book: StatusBook, task: Task, worktree: Path) -> prompts.Context:
        """What the task's prompts show besides the task: read from the attempt's workspace
        (the project's conventions as of the base) and its own ledger, nothing else."""
        caps = self.config.prompt_caps
        return prompts.Context(
            plan,
            book.statuses(),
            prompts.conventions(worktree, caps.context_bytes),
            self.store.ledger(self.run.id, task.id, caps.ledger_entries),
            caps,
        )

    def gate(
        self, task: Task, attempt: Attempt, worktree: Path, candidate: str
    ) -> list[GateResult]:
        forbidden = self.plan_folder_in_repo()

        def shown(text: str) -> str:  # secrets out, and paths as the agent sees them
            return self.redact(_workspace_relative(text, worktree))

        results = [
            replace(g, detail=shown(g.detail), output=shown(g.output))
            for g in run_gates(
                self.repo,
                worktree,
                attempt.base_sha,
                candidate,
                task,
                forbidden,
                self.sandbox,
                self.config.env_pass,
            )
        ]
        for gate in results:
            self.store.record_gate(
                attempt.id,
                gate.name,
                gate.ok,
                gate.detail,
                gate.exit_code,
                gate.seconds,
                gate.output,
            )
            self.emit("gate", task.id, name=gate.name, ok=gate.ok, detail=gate.detail)
        return results

    def review(
        self,
        task: Task,
        context: prompts.Context,
        attempt: Attempt,
        worktree: Path,
        candidate: str,
        outcome: Outcome,
        gates: list[GateResult],
        summary: str,
    ) -> list[tuple[str, Verdict]] | _Stop:
        """Every reviewer's verdict on the candidate, each from its own disposable copy; or
        why the review stopped: a reviewer could not judge, or the task's budget ran out."""
        base = attempt.base_sha
        shown = prompts.Candidate(
            outcome.resolution,
            outcome.report,
            gates,
            diffs.changed_paths(self.repo, base, candidate),
            diffs.patch(self.repo, base, candidate),
            summary,
        )
        verdicts = []
        for lens in self.config.lenses:
            spent = self.task_cap(task.id)  # the worker's unit may have used up the budget
            if spent:
                return _Stop("capped", spent)
            capped = self.run_cap()  # or the run's: stop before paying a reviewer, resumably
            if capped:
                return _Stop("interrupted", capped)
            prompt = self.redact(prompts.evaluator(task, context, shown, lens))
            found = self.reviewer(task, attempt, worktree, candidate, prompt, lens)
            if isinstance(found, _Stop):
                return found
            if isinstance(found, str):
                return _Stop("review_failed", found)
            verdicts.append((lens, found))
        return verdicts

    def review_copy(self, lens: str) -> tuple[Path, Path]:
        """Where the reviewers through `lens` work, one after another, for the whole run, and
        the harness's index of that folder."""
        folder = self.state.run_dir(self.run.id) / "worktrees" / f"review-{lens}"
        return folder, self.state.index(self.run.id, f"review-{lens}")

    def reviewer(
        self, task: Task, attempt: Attempt, worktree: Path, candidate: str, prompt: str, lens: str
    ) -> Verdict | str | _Stop:
        """One reviewer's verdict. A reviewer that breaks, or that changes the candidate's
        worktree, is replaced once; its verdict does not count."""
        problem = ""
        copy_path, index = self.review_copy(lens)
        for _ in range(REVIEW_TRIES):
            with disposable_copy(self.repo, candidate, copy_path, index, worktree) as copy:
                before = self.guard.before()
                outcome = self.unit(Role.EVALUATOR, task, attempt, copy.path, prompt, lens)
                broken = self.breaches(before, f"the {lens} review", task.id)
            if broken:
                return _Stop("violation", "; ".join(broken))
            if copy.violations:
                problem = f"{VIOLATION}: the {lens} reviewer changed the candidate: " + ", ".join(
                    copy.violations[:10]
                )
                # The candidate is its commit; the next reviewer's check starts from here.
                self.emit(VIOLATION, task.id, lens=lens, changes=copy.violations[:50])
                continue
            if outcome.case is Case.DONE and outcome.verdict is not None:
                verdict = self.redact.value(_verdict(outcome.verdict, lens))
                self.emit("verdict", task.id, **verdict)
                return outcome.verdict
            problem = f"the {lens} reviewer gave no verdict: {outcome.failure or outcome.case}"
            self.emit("review_failed", task.id, lens=lens, reason=problem)
        return problem

    def unit(
        self,
        role: Role,
        task: Task,
        attempt: Attempt,
        worktree: Path,
        prompt: str,
        lens: str = "",
    ) -> Outcome:
        if role is Role.EVALUATOR:
            agent = self.evaluator
            same = self.config.evaluator_agent == self.config.agent
            model = self.config.evaluator_model or (self.config.model if same else None)
        else:
            agent = self.agents.get(task.agent or "", self.agent)
            model = task.model or self.config.model
        unit_id = self.store.start_unit(attempt.id, str(role), agent.name, model, prompt, lens)
        self.emit("unit_started", task.id, role=str(role), attempt=attempt.number, lens=lens)
        timeout = task.timeout_seconds or self.caps.unit_seconds
        began = time.monotonic()
        # The try counts attempts that ran to an end: a killed one is redone as the same try.
        tries = self.store.attempts(self.run.id, task.id)
        number = 1 + sum(a.status != "interrupted" for a in tries if a.id < attempt.id)
        unit = Unit(role, task.id, number, prompt, worktree, timeout, model, lens, self.sandbox)
        try:
            outcome = agent.run(unit)
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
            role=str(role),
            case=str(outcome.case),
            seconds=round(time.monotonic() - began, 3),
            tokens_in=outcome.usage.tokens_in,
            tokens_out=outcome.usage.tokens_out,
            cost=outcome.usage.cost,
        )
        return outcome

    def retry(
        self, attempt: Attempt, task: Task, status: str, reason: str, entry: Entry
    ) -> _Result:
        """End the attempt as `status` (failed or rejected), its entry in the ledger; the
        task goes on to another attempt unless a cap says otherwise."""
        reason = self.end_attempt(attempt, status, reason, entry)
        kind = "attempt_failed" if status == "failed" else "attempt_rejected"
        self.emit(kind, task.id, reason=reason)
        return _Result(None, reason)

    def end_attempt(self, attempt: Attempt, status: str, reason: str, entry: Entry) -> str:
        """Conclude the attempt and write its ledger entry, both redacted and with workspace
        paths made relative (later prompts show them); the reason kept."""
        worktree = Path(attempt.worktree)

        def clean(value: Any) -> Any:
            if isinstance(value, str):
                return self.redact(_workspace_relative(value, worktree))
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, list):
                return [clean(v) for v in value]
            return value

        fields = (entry.summary, entry.diff_summary, entry.report, entry.gates, entry.verdicts)
        self.store.finish_attempt(
            attempt.id, status, clean(reason), Entry(entry.outcome, *map(clean, fields))
        )
        return str(clean(reason))

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
        used = self.store.counted_usage(self.run.id, task_id)  # since a reopen, if any
        if caps.task_tokens is not None and used.tokens_in + used.tokens_out >= caps.task_tokens:
            return f"the task's token cap of {caps.task_tokens} was reached"
        if caps.task_dollars is not None and used.cost >= caps.task_dollars:
            return f"the task's spend cap of ${caps.task_dollars:g} was reached"
        return ""

    def finish(self, reason: Exit) -> Summary:
        self.step(reason.message)
        return self.stop(RUN_STATUS[reason], reason.message)

    def stop(self, status: str, message: str) -> Summary:
        for lens in self.config.lenses:  # the copies served the whole run; they go with it
            review_copy.release(*self.review_copy(lens))
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
        # Workspaces are plain folders (worktrees above are from earlier versions' runs).
        if folder.exists():
            for leftover in sorted([*folder.glob("*/attempt-*"), *folder.glob("review-*")]):
                workspace.remove(leftover)
        shutil.rmtree(self.state.run_dir(self.run.id) / "indexes", ignore_errors=True)

    def plan_folder_in_repo(self) -> list[str]:
        try:
            return [str(self.plan_path.resolve().relative_to(self.repo.resolve()))]
        except ValueError:
            return []

    def step(self, message: str) -> None:
        self.emit("step", message=message)

    def emit(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        self.listener(self.store.event(self.run.id, kind, task_id, **self.redact.value(data)))


def _verdict(verdict: Verdict, lens: str = "general") -> dict[str, Any]:
    return {"lens": lens, **verdict.as_json()}


def _rejection(lens: str, verdict: Verdict) -> str:
    who = "" if lens == "general" else f" ({lens})"
    return f"rejected{who} as {verdict.category}: {verdict.concern}"


def _report(outcome: Outcome) -> dict[str, Any]:
    report = outcome.report
    return {
        "criteria": [{"criterion": e.criterion, "evidence": e.evidence} for e in report.criteria],
        "workarounds": list(report.workarounds),
        "uncertainties": list(report.uncertainties),
    }


def _workspace_relative(text: str, worktree: Path) -> str:
    """`text` with the absolute paths of the attempt's worktree and of the reviewers' copies
    (worktrees/review-<lens>) made relative: a check's output (a test runner's traceback) or a
    reviewer's note must not show an agent where the harness keeps its worktrees."""
    for folder in {worktree.parent.parent.resolve(), worktree.parent.parent.absolute()}:
        own = re.escape(f"{folder}/{worktree.parent.name}/{worktree.name}")
        copies = re.escape(f"{folder}/review-") + "[a-z]+"
        for place in (own, copies):
            text = re.sub(place + "/", "", text)
            text = re.sub(place + r"(?![\w-])", ".", text)
    return text


def _request(outcome: Outcome) -> str:
    assert outcome.question is not None
    options = outcome.question.options
    letters = "".join(f" ({chr(65 + i)}) {o}" for i, o in enumerate(options))
    suffix = f" Options:{letters} (the first is recommended)." if options else ""
    return f"{outcome.question.text}{suffix}"
