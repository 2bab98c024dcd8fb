"""Where the harness keeps its state: outside the user's tree, one folder per repository.

`$TASKHAND_HOME` if set, else `$XDG_DATA_HOME/taskhand`, else `~/.local/share/taskhand`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path


def home() -> Path:
    if os.environ.get("TASKHAND_HOME"):
        return Path(os.environ["TASKHAND_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "taskhand"


@dataclass(frozen=True)
class StateDir:
    """The state folder of one repository."""

    root: Path

    @classmethod
    def for_repo(cls, repo: Path) -> StateDir:
        real = repo.resolve()
        name = re.sub(r"[^A-Za-z0-9._-]", "_", real.name) or "repo"
        digest = hashlib.sha256(str(real).encode()).hexdigest()[:12]
        return cls(home() / "repos" / f"{name}-{digest}")

    @property
    def database(self) -> Path:
        return self.root / "state.db"

    @property
    def contracts(self) -> Path:
        """The default contracts plan (`taskhand task create`): kept here, not in the
        checkout, so delegating a task leaves the user's working tree as it was."""
        return self.root / "contracts"

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    def worktree(self, run_id: str, task_id: str, attempt: int) -> Path:
        return self.run_dir(run_id) / "worktrees" / task_id / f"attempt-{attempt}"

    def processes(self, run_id: str) -> Path:
        """The marks of the taskhand processes that worked on the run (host.reaper): how a
        resumed run finds what a killed one left running."""
        return self.run_dir(run_id) / "processes"

    def depot(self, run_id: str) -> Path:
        """The run's depot: the git folder that holds what its attempts produced (their
        candidates' objects), out of the user's repository (workspace/depot.py)."""
        return self.run_dir(run_id) / "depot"

    def depots(self) -> list[Path]:
        """The depots of every run of the repository that still has one."""
        return sorted(p for p in (self.root / "runs").glob("*/depot") if p.is_dir())

    def index(self, run_id: str, name: str) -> Path:
        """The harness's own git index of one workspace, kept where no agent can write."""
        return self.run_dir(run_id) / "indexes" / name

    def transcript(self, run_id: str, task_id: str, unit_id: int) -> Path:
        return self.run_dir(run_id) / "transcripts" / f"{task_id}-unit-{unit_id}.jsonl"

    def lock(self, plan: Path) -> Path:
        return self.root / "locks" / f"plan-{_digest(plan)}.lock"

    def watch_lock(self, plan: Path) -> Path:
        """Held by the plan's supervisor all its life, runs and idle spells alike."""
        return self.root / "locks" / f"watch-{_digest(plan)}.lock"

    def artifacts(self, plan: Path, task_id: str) -> Path:
        """What a task's stages leave for people across runs: the spec and plan of a TaskTrack
        task, prototypes, qa's screenshots, the pull request's body."""
        return self.root / "artifacts" / f"plan-{_digest(plan)}" / task_id

    def progress(self, plan: Path) -> Path:
        """The plan's progress channel: one line per finished task, written by the harness."""
        return self.root / "progress" / f"plan-{_digest(plan)}.log"


def _digest(plan: Path) -> str:
    return hashlib.sha256(str(plan.resolve()).encode()).hexdigest()[:12]
