"""Starting and resuming runs: the checks made before anything is created (the plan, the
repository, the base commit, every agent), the plan's lock, the run record the loop works on,
and what a signal that stops the loop leaves in that record.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taskhand import agents
from taskhand.agents.base import Agent
from taskhand.config import RunConfig, Summary
from taskhand.errors import UserError
from taskhand.host import interrupts, reaper, sandbox
from taskhand.pipeline.work import Stage
from taskhand.plan.model import Plan, Status
from taskhand.run import lookup
from taskhand.run.loop import Listener, Runner
from taskhand.run.preflight import check_delivery, load
from taskhand.state import lock
from taskhand.state.events import Event, EventKind
from taskhand.state.paths import StateDir
from taskhand.state.records import Run, RunStatus
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.unit import Sandbox
from taskhand.workspace import git, refs, snapshot_base


class RunError(UserError):
    """A run that cannot start or go on; the message is one line with the fix."""


def _agents(plan: Plan, config: RunConfig) -> dict[str, Agent]:
    """The run's agent and every agent a task routes to, made (and checked) before any work."""
    script = Path(config.script) if config.script else None
    passed = config.env_pass
    made = {config.agent: agents.create(config.agent, script, config.model, passed=passed)}
    if config.evaluator_agent not in made:
        made[config.evaluator_agent] = agents.create(
            config.evaluator_agent, script, config.evaluator_model, passed=passed
        )
    for task in plan.tasks:
        if task.agent and task.agent not in made:
            made[task.agent] = agents.create(
                task.agent, script, task.model or config.model, passed=passed
            )
    return made


def _sandbox(config: RunConfig) -> tuple[Sandbox, str]:
    try:
        return sandbox.choose(config.sandbox)
    except sandbox.SandboxError as exc:
        raise RunError(str(exc)) from None


def start(
    plan_path: Path,
    config: RunConfig,
    listener: Listener,
    repo: Path | None = None,
    new: bool = False,
    pipeline: Sequence[Stage] | None = None,
) -> Summary:
    """Run the plan at `plan_path`, continuing its last unfinished run unless `new`; a plan
    its latest run completed is left alone (the summary says `already_completed`)."""
    plan = load(plan_path)
    root = git.repo_for(plan.root, repo)
    if not git.has_commits(root):
        raise RunError(f"the repository {root} has no commits yet (fix: make a first commit)")
    base = git.resolve(root, config.base_ref)
    _refuse_snapshot_with(config)
    state = StateDir.for_repo(root)
    done = None if new else _completed(plan, state)
    if done is not None:  # nothing to do, and nothing to pay for: say so, change nothing
        return Summary(
            done.id,
            done.status,
            "the plan's latest run completed it",
            done.run_branch,
            root,
            state.run_dir(done.id),
            already_completed=True,
        )
    config = check_delivery(root, config)  # before anything is made: exit 2 with the fix
    agent = _agents(plan, config)
    box, warning = _sandbox(config)
    with (
        lock.hold(state.lock(plan.root), plan.root, "a run"),
        Store.open(state.database) as store,
        _interruptible(store, listener) as current,
    ):
        previous = store.latest_run(str(plan.root.resolve()))
        if previous is not None and previous.status is not RunStatus.COMPLETED and not new:
            _settle_dead(store, plan.root, previous.id)
            run = current.run = previous
            store.set_run_status(run.id, RunStatus.RUNNING)
            listener(store.event(run.id, EventKind.RUN_RESUMED, plan=str(plan.root)))
            config = _as_recorded(root, run, config, listener, store)
        else:
            _settle_dead(store, plan.root)
            if config.snapshot:  # before anything of the run is made: a refusal leaves nothing
                base = snapshot_base.take(root, state.root / "snapshots")
            if new:  # from scratch: every task's lifecycle starts over, but a person's drafts
                store.forget_lives(str(plan.root.resolve()))
            run = store.create_run(
                str(plan.root.resolve()), str(plan.dialect), str(root), base, "", config.as_json()
            )
            current.run = run
            # Named after the run id, so two runs never share a branch; durable before created.
            store.set_run_branch(run.id, f"taskhand/run-{run.id}")
            run = store.get_run(run.id) or run
            refs.create_branch(root, run.run_branch, base)
            if config.snapshot:
                snapshot_base.keep(root, run.id, base)
            started = store.event(
                run.id,
                EventKind.RUN_STARTED,
                plan=str(plan.root),
                base=base,
                branch=run.run_branch,
                agent=config.agent,
                snapshot=snapshot_base.ref_of(run.id) if config.snapshot else "",
            )
            listener(started)
        if warning:
            listener(store.event(run.id, EventKind.WARNING, message=warning))
        _end_leftovers(store, state, run, listener)
        runner = Runner(store, state, run, agent, config, _heeding(listener), box, pipeline)
        return runner.execute()


def _end_leftovers(store: Store, state: StateDir, run: Run, listener: Listener) -> None:
    """What an earlier process of the run left running (killed with its watcher too) ends
    before anything new starts; the record then names this process."""
    ended = reaper.settle(state.processes(run.id))
    if ended:
        said = f"ended {ended} process(es) an earlier taskhand of this run left running"
        listener(store.event(run.id, EventKind.WARNING, message=said))


def _refuse_snapshot_with(config: RunConfig) -> None:
    """--snapshot takes the checkout as it is: no other base, and nothing pushed anywhere."""
    if not config.snapshot:
        return
    if config.base_ref != "HEAD":
        raise RunError(
            f"--snapshot starts from your checkout as it is, so it cannot start from "
            f"{config.base_ref!r} (fix: drop --base, or --no-snapshot)"
        )
    if config.deliver.on:
        raise RunError(
            "--snapshot cannot go with delivery: a pull request would carry your uncommitted "
            "files to the remote (fix: commit them and run without --snapshot, or --deliver off)"
        )


def _as_recorded(
    root: Path, run: Run, config: RunConfig, listener: Listener, store: Store
) -> RunConfig:
    """A continued run keeps the base it started from: a snapshot run its snapshot (kept
    again if a kill came before its ref was made), any other run its commit."""
    recorded = RunConfig.from_json(run.config).snapshot
    if recorded:
        snapshot_base.keep(root, run.id, run.base_sha)
    elif config.snapshot:
        message = (
            f"run {run.id} goes on from its base commit {run.base_sha[:12]}; --snapshot "
            "applies to a new run (fix: taskhand run PLAN --new --snapshot)"
        )
        listener(store.event(run.id, EventKind.WARNING, message=message))
    return dataclasses.replace(config, snapshot=recorded)


def _completed(plan: Plan, state: StateDir) -> Run | None:
    """The plan's latest run when it completed and every task of the plan as it stands is
    DONE by it; a plan that gained a task since is not complete."""
    if not state.database.exists():
        return None
    with Store.open(state.database) as store:
        run = store.latest_run(str(plan.root.resolve()))
        if run is None or run.status is not RunStatus.COMPLETED:
            return None
        statuses = StatusBook(plan, store, run.id).statuses()
    return run if all(s is Status.DONE for s in statuses.values()) else None


def resume(
    run_id: str | None,
    listener: Listener,
    repo: Path | None = None,
    pipeline: Sequence[Stage] | None = None,
) -> Summary:
    """Resume run `run_id` (the latest run of this repository when None)."""
    root, state, store = lookup.open_store(repo)
    with store:
        run = lookup.pick(store, run_id, root)
    config = check_delivery(root, RunConfig.from_json(run.config))
    agent = _agents(load(Path(run.plan_path)), config)
    box, warning = _sandbox(config)
    plan_root = Path(run.plan_path)
    with (
        lock.hold(state.lock(plan_root), plan_root, f"run {run.id}"),
        Store.open(state.database) as store,
        _interruptible(store, listener) as current,
    ):
        current.run = run
        _settle_dead(store, plan_root, run.id)
        store.set_run_status(run.id, RunStatus.RUNNING)
        listener(store.event(run.id, EventKind.RUN_RESUMED, plan=run.plan_path))
        if config.snapshot:  # a run killed before it kept its snapshot keeps it now
            snapshot_base.keep(root, run.id, run.base_sha)
        if warning:
            listener(store.event(run.id, EventKind.WARNING, message=warning))
        _end_leftovers(store, state, run, listener)
        runner = Runner(store, state, run, agent, config, _heeding(listener), box, pipeline)
        return runner.execute()


def process_gone(state: StateDir, run: Run) -> bool:
    """Whether a run recorded as running has lost its process (killed, even with SIGKILL, or
    the machine went down): then no process holds its plan's lock."""
    return run.status is RunStatus.RUNNING and lock.holder(state.lock(Path(run.plan_path))) is None


def _settle_dead(store: Store, plan_root: Path, keep: str | None = None) -> None:
    """Called with the plan's lock held, so every other run of the plan still recorded as
    running has lost its process: record it as interrupted, so that status tells the truth."""
    plan_path = str(plan_root.resolve())
    for run in store.runs():
        if run.plan_path == plan_path and run.status is RunStatus.RUNNING and run.id != keep:
            store.interrupt_run(run.id, f"its process was gone; taskhand resume {run.id}")


def _heeding(listener: Listener) -> Listener:
    """The listener, and after each event a checkpoint: a signal that arrived while the run
    was in the middle of its bookkeeping stops it there."""

    def heed(event: Event) -> None:
        listener(event)
        interrupts.checkpoint()

    return heed


@dataclass
class _Current:
    """The run a starting or resuming process works on, once it is known."""

    run: Run | None = None


@contextmanager
def _interruptible(store: Store, listener: Listener) -> Iterator[_Current]:
    """After a signal, whatever ends the block (the exception the signal raised, or a git
    command the same Ctrl-C killed) stops every child, records the run as interrupted and
    resumable, and raises Interrupted naming the run."""
    current = _Current()
    try:
        yield current
    except BaseException:
        signum = interrupts.received()
        if signum is None:
            raise
        interrupts.stop_children()
        run = current.run
        if run is None:
            raise interrupts.Interrupted(signum) from None
        name = interrupts.Interrupted(signum).name
        opened = store.interrupt_run(run.id, f"stopped by {name}; taskhand resume {run.id}")
        events = [
            store.event(run.id, EventKind.ATTEMPT_INTERRUPTED, a.task_id, attempt=a.number)
            for a in opened
        ]
        events.append(store.event(run.id, EventKind.RUN_INTERRUPTED, signal=name))
        with contextlib.suppress(Exception):  # the terminal may be gone (SIGHUP)
            for event in events:
                listener(event)
        raise interrupts.Interrupted(signum, run.id, Path(run.repo)) from None
