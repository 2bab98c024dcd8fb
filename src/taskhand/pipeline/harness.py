"""What stages may use of the run: agent units (executed, recorded, redacted), the caps, the
guard around agent work, the attempt's ledger, and the event log.

One Harness serves one run; the loop builds it and hands it to every stage, so a stage needs
nothing but `(harness, work)` and knows nothing of the loop or of the other stages.
"""

from __future__ import annotations

import copy
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from taskhand import prompts
from taskhand.agents.executor import Executor
from taskhand.config import RunConfig
from taskhand.host import ports
from taskhand.host.secrets import Redactor
from taskhand.pipeline.guard import Guard
from taskhand.pipeline.queue import MergeQueue, Seat
from taskhand.pipeline.track import Tracker
from taskhand.pipeline.transcript import TranscriptFile
from taskhand.pipeline.work import Ended
from taskhand.plan.model import Plan, Status, Task
from taskhand.state import progress
from taskhand.state.events import Event, EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, AttemptStatus, Run
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.unit import Browser, Outcome, Role, Sandbox, Unit, Verdict
from taskhand.workspace import git, setup_files
from taskhand.workspace.backstop import Print
from taskhand.workspace.depot import Depot

Listener = Callable[[Event], None]
# The rest of a path in prose: up to a space or a quote, and not the sentence's punctuation.
_PATH_TAIL = r"(?:[^\s'\"`]*[^\s'\"`.,;:?!)\]])?"


class Harness:
    """The run's services for stages; every step recorded in the store."""

    def __init__(
        self,
        store: Store,
        state: StateDir,
        run: Run,
        executor: Executor,
        config: RunConfig,
        listener: Listener,
        sandbox: Sandbox,
    ) -> None:
        self.store = store
        self.state = state
        self.run = run
        self.executor = executor
        self.config = config
        self.caps = config.caps
        self.listener = listener
        self.repo = Path(run.repo)
        self.plan_path = Path(run.plan_path)
        self.started = time.monotonic()
        # Secrets (values of secret-named variables and settings in the files `[setup] copy`
        # names, and anything shaped like a token, a key or a password in a URL) never reach
        # a prompt, a transcript or an event.
        self.redact = Redactor(extra=setup_files.secrets_in(self.repo, config.setup.copy))
        # What attempts produce is kept out of the user's repository, in the run's depot.
        self.depot = Depot.open(self.repo, state.depot(run.id))
        # Agents read the repository's objects and the depot's through their workspace's
        # alternates; they never see the checkout or the plan, even where a program folder
        # lies inside it.
        objects = [*git.object_folders(self.repo), self.depot.objects]
        shown = sandbox.with_readable(objects).with_hidden([self.repo, self.plan_path])
        self.sandbox = shown.with_limits(config.limits)
        self.violated = ""  # why an agent's reach past its workspace stopped the run
        self.copies: set[str] = set()  # the disposable copies this run used, by name
        # Candidates land one at a time, whichever job's they are (pipeline/integrate.py);
        # the guard reads the run branch under it too.
        self.landing = threading.RLock()
        self.guard = Guard(store, run, self.plan_path, sandbox.active, self.emit, self.landing)
        self.queue = MergeQueue(self.landing, config.gates or config.jobs)
        self.seat = Seat()  # a job's, given back while its candidate waits (run/jobs.py)
        self.slot = ""  # which job this harness serves ("" for the run's own); copies per job
        self.track = Tracker(store, str(self.plan_path.resolve()), config.pipeline, self.emit)

    # -- agent units ----------------------------------------------------------------------

    def unit(
        self,
        role: Role,
        task: Task,
        attempt: Attempt,
        worktree: Path,
        prompt: str,
        lens: str = "",
        browser: Browser | None = None,
    ) -> Outcome:
        """Run one agent unit through the executor; its usage, transcript and events recorded."""
        agent, model = self._route(role, task)
        name = self.executor.name_of(agent)
        unit_id = self.store.start_unit(attempt.id, role, name, model, prompt, lens)
        # Written as the unit goes, at the path the store has from its start (before a board
        # hears of it), for a board to show while it works; then the final transcript.
        path = self.state.transcript(self.run.id, task.id, unit_id)
        transcript = TranscriptFile(path, self.redact)
        transcript.open()
        self.store.record_transcript(unit_id, str(transcript.path))
        self.emit(
            EventKind.UNIT_STARTED, task.id, role=str(role), attempt=attempt.number, lens=lens
        )
        timeout = task.timeout_seconds or self.caps.unit_seconds
        began = time.monotonic()
        # The try counts attempts that ran to an end: a killed one is redone as the same try.
        tries = self.store.attempts(self.run.id, task.id)
        number = 1 + sum(a.status != AttemptStatus.INTERRUPTED for a in tries if a.id < attempt.id)
        # Likewise a role's round: its units that ended, in attempts a kill did not cut short.
        cut = {a.id for a in tries if a.status == AttemptStatus.INTERRUPTED}
        done = [
            u
            for u in self.store.units(self.run.id, task.id)
            if u.role is role and u.outcome and u.attempt_id not in cut
        ]
        unit = Unit(
            role, task.id, number, prompt, worktree, timeout, model, lens, self.sandbox, browser
        )
        unit.round = 1 + len(done)
        unit.env = self.workspace_env(attempt.worktree)
        unit.on_message = transcript.add
        try:
            outcome = self.executor.run(agent, unit)
        finally:
            transcript.close()
        transcript.finish(outcome.transcript)
        if transcript.failure:  # told once, after the unit: never from inside its backend
            self.emit(
                EventKind.WARNING,
                task.id,
                message=f"unit {unit_id}'s transcript could not be written as it went "
                f"({transcript.failure}); it was written when the unit ended",
            )
        self.store.finish_unit(unit_id, outcome.case, outcome.usage, str(transcript.path))
        self.emit(
            EventKind.UNIT_FINISHED,
            task.id,
            role=str(role),
            case=str(outcome.case),
            seconds=round(time.monotonic() - began, 3),
            tokens_in=outcome.usage.tokens_in,
            tokens_out=outcome.usage.tokens_out,
            cost=outcome.usage.cost,
        )
        return outcome

    def workspace_env(self, worktree: str) -> dict[str, str]:
        """What every process working in an attempt's workspace gets besides its own
        environment: the workspace's port, and the depot's objects for its own git (the
        workspace's alternates name your repository's alone, as they always did)."""
        return {
            **ports.env_of(worktree),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.depot.objects.resolve()),
        }

    def _route(self, role: Role, task: Task) -> tuple[str, str | None]:
        """The agent and model a role's unit runs on: the implementer's as the task says,
        else as the run does; a reviewer's as [roles.evaluator] or --evaluator say; any other
        role's as its [roles.<role>] says, else as the run does."""
        config = self.config
        if role is Role.EVALUATOR:
            same = config.evaluator_agent == config.agent
            model = config.evaluator_model or (config.model if same else None)
            return self._agent(config.evaluator_agent), model
        if role is Role.IMPLEMENTER and (task.agent or task.model):
            return self._agent(task.agent or ""), task.model or config.model
        agent, model = config.route(str(role))
        if agent is None or agent == config.agent:
            return self._agent(agent or ""), model or config.model
        return self._agent(agent), model

    def _agent(self, wanted: str) -> str:
        """The backend a unit runs on: the one asked for when the run has it, else the run's."""
        return wanted if self.executor.knows(wanted) else self.config.agent

    def context(self, plan: Plan, book: StatusBook, task: Task, worktree: Path) -> prompts.Context:
        """What the task's prompts show besides the task: read from the attempt's workspace
        (the project's conventions as of the base) and its own ledger, nothing else."""
        caps = self.config.prompt_caps
        # Earlier tasks' lines only: this task's own story is its ledger and its answers.
        notes = progress.recent(self.state.progress(self.plan_path), caps.progress_lines, task.id)
        return prompts.Context(
            plan,
            book.statuses(),
            prompts.conventions(worktree, caps.context_bytes),
            self.store.ledger(self.run.id, task.id, caps.ledger_entries),
            caps,
            prompts.progress_lines(notes),
        )

    def note_progress(self, plan: Plan) -> None:
        """Note every conclusion of this run in the plan's progress channel, each once: called
        after a task concludes, and on recovery for one a kill left unnoted."""
        channel = self.state.progress(self.plan_path)
        noted, notes = progress.keys(channel), []
        for event in self.store.events_of(self.run.id, EventKind.TASK_CONCLUDED):
            key = f"{self.run.id}/{event.id}"
            outcome = progress.OUTCOMES.get(Status(event.data["status"]))
            task_id = event.task_id or ""
            if outcome is None or key in noted:
                continue
            task = plan.task(task_id)
            # Only a done task's text is the worker's own account. A failure's reason is the
            # harness's (caps, counts, a reach past the workspace), a wait's is its request to
            # a person (how to answer, approve, review): the wall keeps both from prompts.
            text = str(event.data.get("text", "")) if outcome is progress.Outcome.DONE else ""
            title = self.redact(task.title if task else "")
            notes.append(progress.Note(key, task_id, outcome, title, self._unplaced(text, task_id)))
        if notes:
            progress.append(channel, notes)

    def _unplaced(self, text: str, task_id: str) -> str:
        """`text` redacted, the task's workspaces as relative paths, and no other path into
        the state folder: an account may name where its agent worked."""
        for attempt in self.store.attempts(self.run.id, task_id):
            text = workspace_relative(text, Path(attempt.worktree))
        for root in {str(self.state.root.resolve()), str(self.state.root.absolute())}:
            text = re.sub(re.escape(root) + _PATH_TAIL, "(a harness folder)", text)
        return self.redact(text)

    # -- caps -----------------------------------------------------------------------------

    def run_cap(self) -> str:
        caps = self.caps
        if caps.run_seconds is not None and time.monotonic() - self.started > caps.run_seconds:
            return f"the run's wall-clock cap of {caps.run_seconds:g}s was reached"
        if caps.run_tokens is None and caps.run_dollars is None:
            return ""  # nothing to add up (asked before every unit of every job)
        used = self.store.usage(self.run.id)
        if caps.run_tokens is not None and used.tokens_in + used.tokens_out >= caps.run_tokens:
            return f"the run's token cap of {caps.run_tokens} was reached"
        if caps.run_dollars is not None and used.cost >= caps.run_dollars:
            return f"the run's spend cap of ${caps.run_dollars:g} was reached"
        return ""

    def task_cap(self, task_id: str) -> str:
        caps = self.caps
        if caps.task_tokens is None and caps.task_dollars is None:
            return ""
        used = self.store.counted_usage(self.run.id, task_id)  # since a reopen, if any
        if caps.task_tokens is not None and used.tokens_in + used.tokens_out >= caps.task_tokens:
            return f"the task's token cap of {caps.task_tokens} was reached"
        if caps.task_dollars is not None and used.cost >= caps.task_dollars:
            return f"the task's spend cap of ${caps.task_dollars:g} was reached"
        return ""

    # -- ending attempts ------------------------------------------------------------------

    def retry(
        self, attempt: Attempt, task: Task, status: AttemptStatus, reason: str, entry: Entry
    ) -> Ended:
        """End the attempt as `status` (failed or rejected), its entry in the ledger; the
        task goes on to another attempt unless a cap says otherwise."""
        reason = self.end_attempt(attempt, status, reason, entry)
        kind = (
            EventKind.ATTEMPT_FAILED
            if status == AttemptStatus.FAILED
            else EventKind.ATTEMPT_REJECTED
        )
        self.emit(kind, task.id, reason=reason)
        return Ended(None, reason)

    def end_attempt(
        self,
        attempt: Attempt,
        status: AttemptStatus,
        reason: str,
        entry: Entry,
        said: tuple[EventKind, dict[str, Any]] | None = None,
    ) -> str:
        """Conclude the attempt and write its ledger entry, both redacted and with workspace
        paths made relative (later prompts show them); the reason kept. `said`: an event of
        the end (its kind, and its payload but the reason), written in the same transaction."""
        worktree = Path(attempt.worktree)

        def clean(value: Any) -> Any:
            if isinstance(value, str):
                return self.redact(workspace_relative(value, worktree))
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, list):
                return [clean(v) for v in value]
            return value

        fields = (entry.summary, entry.diff_summary, entry.report, entry.gates, entry.verdicts)
        told = (said[0], self.redact.value({**said[1], "reason": clean(reason)})) if said else None
        cleaned = Entry(entry.outcome, *map(clean, fields))
        event = self.store.finish_attempt(attempt.id, status, clean(reason), cleaned, told)
        if event is not None:
            self.listener(event)
        return str(clean(reason))

    def violation(self, attempt: Attempt, task: Task, found: list[str]) -> Ended:
        """End the attempt and its task: an agent that reached past its workspace gets no
        other try (a person may reopen the task after looking)."""
        reason = "violation: " + "; ".join(found[:10])
        if len(found) > 10:
            reason += f"; and {len(found) - 10} more"
        reason = self.end_attempt(
            attempt, AttemptStatus.VIOLATION, reason, Entry(LedgerOutcome.VIOLATION, reason)
        )
        self.emit(EventKind.ATTEMPT_FAILED, task.id, reason=reason)
        # Nothing more runs until a person has looked: what the agent changed (the plan, the
        # repository's settings) would otherwise steer the tasks after it.
        self.violated = (
            f"{task.id} reached outside its workspace; the run stopped "
            f"(fix: see taskhand ledger {task.id}, undo what it changed, "
            f"then taskhand reopen {task.id} or taskhand resume)"
        )
        return Ended(Status.FAIL, reason)

    def breaches(self, before: Print, during: str, task_id: str) -> list[str]:
        """What agent work changed that it may not: the repository, the plan, the run's refs."""
        found = self.guard.after(before, during, task_id)
        try:
            return found + self.guard.check_refs(task_id)
        except git.GitError as exc:  # the repository is broken now: that is the finding
            return [*found, f"the run's branches could not be read: {exc}"]

    # -- places and events ----------------------------------------------------------------

    def fork(self, store: Store, slot: int) -> Harness:
        """A harness for job `slot` of a run of several: its own connection to the store,
        its own disposable copies; the run, the caps, the landing queue and the listener
        shared."""
        forked = copy.copy(self)
        forked.store, forked.slot, forked.violated = store, f"-{slot}", ""
        confined = self.sandbox.active
        forked.guard = Guard(store, self.run, self.plan_path, confined, forked.emit, self.landing)
        forked.track = Tracker(
            store, str(self.plan_path.resolve()), self.config.pipeline, forked.emit
        )
        return forked

    def review_copy(self, lens: str) -> tuple[Path, Path]:
        """Where the reviewers through `lens` (or a read-only role of the lifecycle, or the
        gate's checks) work, one after another, for the whole run (one copy per job), and
        the harness's index of it."""
        name = f"review-{lens}{self.slot}"
        self.copies.add(name)
        return self.copy_place(name)

    def copy_place(self, name: str) -> tuple[Path, Path]:
        folder = self.state.run_dir(self.run.id) / "worktrees" / name
        return folder, self.state.index(self.run.id, name)

    def plan_folder_in_repo(self) -> list[str]:
        try:
            return [str(self.plan_path.resolve().relative_to(self.repo.resolve()))]
        except ValueError:
            return []

    def step(self, message: str) -> None:
        self.emit(EventKind.STEP, message=message)

    def emit(self, kind: EventKind, task_id: str | None = None, **data: Any) -> None:
        self.listener(self.store.event(self.run.id, kind, task_id, **self.redact.value(data)))


def verdict_json(verdict: Verdict, lens: str = "general") -> dict[str, Any]:
    return {"lens": lens, **verdict.as_json()}


def case_json(outcome: Outcome) -> dict[str, Any]:
    """The implementer's case as the ledger keeps it: its resolution and its report."""
    report = outcome.report
    return {
        "resolution": outcome.resolution,
        "criteria": [{"criterion": e.criterion, "evidence": e.evidence} for e in report.criteria],
        "workarounds": list(report.workarounds),
        "uncertainties": list(report.uncertainties),
    }


def workspace_relative(text: str, worktree: Path) -> str:
    """`text` with the absolute paths of the attempt's worktree and of the reviewers' copies
    (worktrees/review-<lens>) made relative: a check's output (a test runner's traceback) or a
    reviewer's note must not show an agent where the harness keeps its worktrees."""
    for folder in {worktree.parent.parent.resolve(), worktree.parent.parent.absolute()}:
        own = re.escape(f"{folder}/{worktree.parent.name}/{worktree.name}")
        copies = re.escape(f"{folder}/review-") + "[a-z]+(?:-[0-9]+)*"
        for place in (own, copies):
            text = re.sub(place + "/", "", text)
            text = re.sub(place + r"(?![\w-])", ".", text)
    return text
