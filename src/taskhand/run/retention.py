"""What becomes of an attempt's workspace once the attempt is over, and how long it stays.

An attempt that ended keeps its workspace, so a person can read what its worker left. Right
away the rebuildable folders git ignores there and the files `[setup]` copied in are pruned
(the bytes freed are logged); `taskhand clean` removes the rest once the retention has passed
(7 days after a passed attempt, 14 after any other) and its result, if it left one, has a
disposition. An attempt that did not end (paused, interrupted) loses its workspace at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from taskhand import config, workspace
from taskhand.pipeline.harness import Harness
from taskhand.plan.model import Task
from taskhand.state.events import EventKind
from taskhand.state.integration import NOT_ENDED
from taskhand.state.records import Attempt, AttemptStatus, Run
from taskhand.workspace import git, prune

KEEP_DONE_DAYS = 7.0
KEEP_FAILED_DAYS = 14.0


@dataclass(frozen=True)
class Retention:
    """How long an ended attempt's workspace stays: after a passed attempt, after any other."""

    done_days: float = KEEP_DONE_DAYS
    failed_days: float = KEEP_FAILED_DAYS

    def days(self, attempt: Attempt) -> float:
        return self.done_days if attempt.status is AttemptStatus.PASSED else self.failed_days

    def until(self, attempt: Attempt) -> datetime | None:
        """When the attempt's workspace may go; None for an attempt that has not ended."""
        if attempt.ended is None or attempt.status in NOT_ENDED:
            return None
        return parse_time(attempt.ended) + timedelta(days=self.days(attempt))

    def why(self, attempt: Attempt) -> str:
        """The rule that keeps it, with the option that changes it."""
        if attempt.status is AttemptStatus.PASSED:
            return f"passed attempts stay {self.done_days:g} days (--keep-done DAYS)"
        return f"attempts that did not pass stay {self.failed_days:g} days (--keep-failed DAYS)"


def retention_for(run: Run, done_days: float | None, failed_days: float | None) -> Retention:
    """The retention that cleaning `run` applies: the days given, else its plan's `[clean]`
    keep_done and keep_failed in taskhand.toml, else 7 and 14."""
    table = config.read_file(Path(run.plan_path)).get("clean", {})
    return Retention(
        float(done_days if done_days is not None else table.get("keep_done", KEEP_DONE_DAYS)),
        float(
            failed_days if failed_days is not None else table.get("keep_failed", KEEP_FAILED_DAYS)
        ),
    )


def parse_time(stamp: str) -> datetime:
    """A time as the store writes it (2026-12-02T14:00:00.123Z), aware of its zone."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def retained(attempts: Iterable[Attempt]) -> set[Path]:
    """The workspaces that stay after the run moves on: those of the attempts that ended."""
    return {Path(a.worktree) for a in attempts if a.status not in NOT_ENDED}


def let_go(h: Harness, task: Task, attempt_id: int, path: Path, index: Path) -> None:
    """The attempt is done with its workspace at `path`: kept and pruned when the attempt
    ended, removed when it did not (a pause, a signal, a failure of the harness itself).
    Pruning is housekeeping: a failure of it is a warning, and the attempt stands as it is."""
    current = next((a for a in h.store.attempts(h.run.id, task.id) if a.id == attempt_id), None)
    try:
        if current is None or current.status in NOT_ENDED:
            left = workspace.remove(path)
            if left:  # housekeeping too: said, and the run goes on
                h.emit(EventKind.WARNING, task.id, message=workspace.left_behind(path, left))
            return
        result = current.candidate_sha or current.base_sha
        try:
            copied = h.config.setup.copy
            pruned = prune.prune(h.depot, path, index, result, task.paths, copied)
        except (git.GitError, OSError) as exc:
            h.emit(EventKind.WARNING, message=f"attempt {current.number} was not pruned: {exc}")
            return
        if pruned.folders or pruned.dropped:
            h.emit(
                EventKind.WORKSPACE_PRUNED,
                task.id,
                attempt=current.number,
                bytes=pruned.bytes,
                folders=pruned.folders,
                dropped=pruned.dropped,
            )
    finally:
        index.unlink(missing_ok=True)
