"""Which run a command means: the repository (the one given, else the current folder's), the
state taskhand keeps for it, and the run named there, else its latest. Used by every command
that takes a run (resume, runs, stats, ledger, clean) and by reopen and respond; the runs of
one plan, which `stats --plan` sums; the run a board goes on with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taskhand.errors import UserError
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.records import Run, RunStatus
from taskhand.state.store import Store
from taskhand.workspace import git

START = "start one with taskhand run PLAN"


class NoRunError(UserError):
    """No run where the command looked; the message says how to start or find one."""


def repository(repo: Path | None) -> tuple[Path, StateDir]:
    """The repository a command means and its state folder (which may hold no runs yet)."""
    root = git.find_repo(repo or Path.cwd())
    return root, StateDir.for_repo(root)


def open_store(repo: Path | None) -> tuple[Path, StateDir, Store]:
    """The repository, its state and its open store; NoRunError when it has never run."""
    root, state = repository(repo)
    if not state.database.exists():
        raise NoRunError(f"no runs for {root}", fix=START)
    return root, state, Store.open(state.database)


def pick(store: Store, run_id: str | None, root: Path) -> Run:
    """The run `run_id`, else the repository's latest; NoRunError naming the fix."""
    found = store.get_run(run_id) if run_id else store.latest_run()
    if found is not None:
        return found
    if run_id:
        raise NoRunError(f"no run {run_id} in {root}", fix="list them with taskhand runs")
    raise NoRunError(f"no runs for {root}", fix=START)


def runs_of_plan(store: Store, plan_root: Path) -> list[Run]:
    """Every run of the plan folder `plan_root`, newest first; NoRunError if it never ran."""
    wanted = str(plan_root.resolve())
    found = [r for r in store.runs() if r.plan_path == wanted]
    if not found:
        raise NoRunError(
            f"no runs of the plan {wanted}", fix=f"start one with taskhand run {wanted}"
        )
    return found


def latest(repo: Path | None) -> tuple[Path, Run | None]:
    """The repository and its latest run, if it has one."""
    root, state = repository(repo)
    if not state.database.exists():
        return root, None
    with Store.open(state.database) as store:
        return root, store.latest_run()


@dataclass(frozen=True)
class Going:
    """The plan's run a board goes on with: held by a live process (`holder` says which), or
    unfinished with none holding it."""

    run_id: str
    holder: str | None

    @property
    def live(self) -> bool:
        return self.holder is not None


def beside(plan_root: Path, repo: Path) -> Going | None:
    """The run of the plan that goes on now, else its latest unfinished one (None: no run,
    or the latest completed the plan)."""
    state = StateDir.for_repo(repo)
    if not state.database.exists():
        return None
    wanted = str(plan_root.resolve())
    with Store.open(state.database) as store:
        run = store.latest_run(wanted)
    if run is None:
        return None
    holder = lock.holder(state.watch_lock(plan_root)) or lock.holder(state.lock(plan_root))
    if holder is None and run.status == RunStatus.COMPLETED:
        return None
    return Going(run.id, holder)
