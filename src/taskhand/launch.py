"""Starting and resuming runs: the checks made before anything is created (the plan, the
repository, the base commit, every agent), the plan's lock, and the run record the loop works on.
"""

from __future__ import annotations

from pathlib import Path

from taskhand import agents, git, lock, sandbox
from taskhand.agents.base import Agent
from taskhand.model import Plan, Status
from taskhand.paths import StateDir
from taskhand.records import Run
from taskhand.runconfig import RunConfig, Summary
from taskhand.runner import Listener, Runner, load
from taskhand.status import StatusBook
from taskhand.store import Store


class RunError(Exception):
    """A run that cannot start or go on; the message is one line with the fix."""


def repo_for(plan_path: Path, repo: Path | None) -> Path:
    """The repository a plan runs in: `repo`, else the one holding the plan, else the current
    folder's."""
    try:
        return git.find_repo(repo or plan_path)
    except git.GitError:
        if repo is not None:
            raise
        return git.find_repo(Path.cwd())


def _agents(plan: Plan, config: RunConfig) -> dict[str, Agent]:
    """The run's agent and every agent a task routes to, made (and checked) before any work."""
    script = Path(config.script) if config.script else None
    made = {config.agent: agents.create(config.agent, script, config.model)}
    if config.evaluator_agent not in made:
        made[config.evaluator_agent] = agents.create(
            config.evaluator_agent, script, config.evaluator_model
        )
    for task in plan.tasks:
        if task.agent and task.agent not in made:
            made[task.agent] = agents.create(task.agent, script, task.model or config.model)
    return made


def _sandbox(config: RunConfig) -> tuple[sandbox.Sandbox, str]:
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
) -> Summary:
    """Run the plan at `plan_path`, continuing its last unfinished run unless `new`; a plan
    its latest run completed is left alone (the summary says `already_completed`)."""
    plan = load(plan_path)
    root = repo_for(plan.root, repo)
    if not git.has_commits(root):
        raise RunError(f"the repository {root} has no commits yet (fix: make a first commit)")
    base = git.resolve(root, config.base_ref)
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
    agent = _agents(plan, config)
    box, warning = _sandbox(config)
    with lock.hold(state.lock(plan.root), plan.root, "a run"), Store.open(state.database) as store:
        previous = store.latest_run(str(plan.root.resolve()))
        if previous is not None and previous.status != "completed" and not new:
            run = previous
            store.set_run_status(run.id, "running")
            listener(store.event(run.id, "run_resumed", plan=str(plan.root)))
        else:
            run = store.create_run(
                str(plan.root.resolve()), str(plan.dialect), str(root), base, "", config.as_json()
            )
            # Named after the run id, so two runs never share a branch; durable before created.
            store.set_run_branch(run.id, f"taskhand/run-{run.id}")
            run = store.get_run(run.id) or run
            git.create_branch(root, run.run_branch, base)
            started = store.event(
                run.id,
                "run_started",
                plan=str(plan.root),
                base=base,
                branch=run.run_branch,
                agent=config.agent,
            )
            listener(started)
        if warning:
            listener(store.event(run.id, "warning", message=warning))
        return Runner(store, state, run, agent, config, listener, box).execute()


def _completed(plan: Plan, state: StateDir) -> Run | None:
    """The plan's latest run when it completed and every task of the plan as it stands is
    DONE by it; a plan that gained a task since is not complete."""
    if not state.database.exists():
        return None
    with Store.open(state.database) as store:
        run = store.latest_run(str(plan.root.resolve()))
        if run is None or run.status != "completed":
            return None
        statuses = StatusBook(plan, store, run.id).statuses()
    return run if all(s is Status.DONE for s in statuses.values()) else None


def resume(run_id: str | None, listener: Listener, repo: Path | None = None) -> Summary:
    """Resume run `run_id` (the latest run of this repository when None)."""
    root = git.find_repo(repo or Path.cwd())
    state = StateDir.for_repo(root)
    if not state.database.exists():
        raise RunError(f"no runs for {root} (fix: start one with taskhand run PLAN)")
    with Store.open(state.database) as store:
        run = store.get_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise RunError(f"no run {run_id} in {root} (fix: list them with taskhand runs)")
    config = RunConfig.from_json(run.config)
    agent = _agents(load(Path(run.plan_path)), config)
    box, warning = _sandbox(config)
    plan_root = Path(run.plan_path)
    with (
        lock.hold(state.lock(plan_root), plan_root, f"run {run.id}"),
        Store.open(state.database) as store,
    ):
        store.set_run_status(run.id, "running")
        listener(store.event(run.id, "run_resumed", plan=run.plan_path))
        if warning:
            listener(store.event(run.id, "warning", message=warning))
        return Runner(store, state, run, agent, config, listener, box).execute()
