"""The runner's watch over what agents could reach: prints of the user's repository and the plan
around agent work, and the run's own branches held to what the store recorded.

A change seen during agent work is a violation, and the run stops for a person to look: with
agents unconfined nothing else could have stopped it; under the sandbox it is a way out of the
sandbox or a person's own change, and either way it may steer every task after it. A run
branch that is not where the store says is always put back: the run never builds on a commit
it did not integrate. A task branch with commits added on top of where the run left it holds a
person's own work (an agent works in a repository of its own): it is left as it is, and its
task stops for that person (`added_commits`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from taskhand.state.events import EventKind
from taskhand.state.records import Attempt, AttemptStatus, Run
from taskhand.state.store import Store
from taskhand.workspace import backstop, git, refs

Emit = Callable[..., None]
PASSED = AttemptStatus.PASSED


class Guard:
    """Checks for one run; `emit(kind, task_id, **data)` records what it finds."""

    def __init__(
        self,
        store: Store,
        run: Run,
        plan: Path,
        confined: bool,
        emit: Emit,
        landing: AbstractContextManager[object] | None = None,
    ) -> None:
        self.store = store
        # Held while the run branch is read and put back: another job's candidate may be
        # landing (pipeline/integrate.py holds it too), and is no one's move to undo.
        self.landing = landing or nullcontext()
        self.run = run
        self.repo = Path(run.repo)
        self.plan = plan
        self.confined = confined
        self.emit = emit
        self.common = git.common_dir(self.repo)

    # -- prints around agent work ---------------------------------------------------------

    def before(self) -> backstop.Print:
        taken = backstop.take(self.common, self.plan, self.own_refs())
        return replace(taken, since=self.store.newest_event(self.run.id))

    def after(self, before: backstop.Print, during: str, task_id: str | None) -> list[str]:
        """What changed since `before`, as violations: the run stops for a person to look.
        Under the sandbox no agent should have been able to: the change is a way out of it,
        or a person's own; it is recorded as an `outside_change` too, and stops the run
        all the same (what changed may steer every task after it), but for the plan's files
        when a person's move (`taskhand answer`, `reopen`, a board's move) was recorded
        meanwhile: a sandboxed agent can write neither those files nor the run's log."""
        found = backstop.changes(before, self.before())
        if not found:
            return []
        if not self.confined:
            return [f"during {during}: {line}" for line in found]
        self.emit(EventKind.OUTSIDE_CHANGE, task_id, during=during, changes=found[:50])
        if self._person_moved(before.since):
            found = [line for line in found if not line.startswith(backstop.PLAN_FOLDER)]
        return [f"during {during}, under the sandbox (or by you): {line}" for line in found]

    def _person_moved(self, since: int) -> bool:
        """Whether the run's log holds a person's move newer than event `since`."""
        return any(
            event.kind in (EventKind.TASK_ANSWERED, EventKind.TASK_REOPENED)
            or (event.kind == EventKind.TASK_MOVED and event.data.get("by") != "harness")
            for event in self.store.events(self.run.id, after=since)
        )

    # -- the run's own branches -------------------------------------------------------------

    def own_refs(self) -> set[str]:
        branches = {self.run.run_branch, *self.store.attempt_branches(self.run.id)}
        return {f"refs/heads/{b}" for b in branches if b}

    def head(self, attempts: list[Attempt] | None = None) -> tuple[str, set[str]]:
        """Where the run branch must be: the last integrated commit, and the values it may hold
        (that commit, or an accepted candidate on top of it whose move the run was killed in)."""
        if attempts is None:
            attempts = self.store.attempts(self.run.id)
        integrated = self.store.events_of(self.run.id, EventKind.INTEGRATED)
        last = str(integrated[-1].data["sha"]) if integrated else self.run.base_sha
        done = {str(e.data["sha"]) for e in integrated}
        allowed = {last}
        for attempt in attempts:
            candidate = attempt.candidate_sha
            fresh = candidate and candidate not in done and attempt.base_sha == last
            if attempt.status == AttemptStatus.PASSED and fresh:
                allowed.add(str(candidate))
        return last, allowed

    def check_refs(self, task_id: str | None = None) -> list[str]:
        """Put back every branch of the run that is not where the store says; what was wrong.

        Read first without the landing lock, so jobs do not queue behind each other's
        landings to find all in order. What looks wrong may be a landing half done (a branch
        moved, its record not yet written): it is read again under the lock, and only what is
        still wrong then is put back. Landing itself checks under the lock, so the run never
        builds on a branch this quick read let pass."""
        if not self._wrong(*self._read()):
            return []
        with self.landing:
            return self._check_refs(task_id)

    def _read(self) -> tuple[list[Attempt], dict[str, str]]:
        attempts = self.store.attempts(self.run.id)
        task_branches = {a.branch for a in attempts if a.candidate_sha}
        return attempts, refs.branch_shas(self.repo, [self.run.run_branch, *sorted(task_branches)])

    def _wrong(self, attempts: list[Attempt], now: dict[str, str]) -> bool:
        if now.get(self.run.run_branch) not in self.head(attempts)[1]:
            return True
        return any(
            not self._task_branch_holds(attempts, name, sha)
            and self._added_to(attempts, name, sha) is None
            for name, sha in now.items()
            if name != self.run.run_branch
        )

    def _added_to(self, attempts: list[Attempt], branch: str, sha: str) -> str | None:
        """The commit the run left task branch `branch` at, when `sha` is that commit with
        commits added on top (a person's own work on the task's branch); else None."""
        landed = [a.candidate_sha for a in attempts if a.branch == branch and a.status is PASSED]
        if not landed or not landed[-1] or landed[-1] == sha:
            return None
        return landed[-1] if git.is_ancestor(self.repo, landed[-1], sha) else None

    def added_commits(self, task_id: str) -> str:
        """Why the task cannot go on as the run left it: a commit added on top of its branch,
        which is a person's (an agent works in a repository of its own), said with how to go
        on; "" when there is none. The branch is left as it is: the commit is not ours to drop."""
        attempts, now = self._read()
        for branch in sorted({a.branch for a in attempts if a.task_id == task_id}):
            sha = now.get(branch)
            left = self._added_to(attempts, branch, sha) if sha else None
            if sha and left and not self._task_branch_holds(attempts, branch, sha):
                subject = git.output(self.repo, "log", "-1", "--format=%s", sha)
                return (
                    f"a commit was added to its branch {branch} after the run left it "
                    f"({sha[:12]} {subject!r}): a person's, not the run's (fix: keep it on a "
                    f"branch of your own and give the task's back to the run: git branch "
                    f"mine-{task_id} {sha[:12]} && git branch -f {branch} {left[:12]}; then "
                    f"taskhand reopen {task_id})"
                )
        return ""

    def _task_branch_holds(self, attempts: list[Attempt], branch: str, sha: str) -> bool:
        """Whether task branch `branch` may hold `sha`: a candidate of it that landed, or an
        attempt's base; or another of its candidates that the repository holds itself (runs
        of earlier versions pointed the branch at every candidate, and wrote each there)."""
        if sha in _values(attempts, branch):
            return True
        if sha not in {a.candidate_sha for a in attempts if a.branch == branch}:
            return False
        held = git.run(self.repo, "cat-file", "-e", sha, ok=(0, 1), env=git.alone())
        return held.returncode == 0

    def _check_refs(self, task_id: str | None) -> list[str]:
        found = []
        attempts, now = self._read()
        expected, allowed = self.head(attempts)
        branch = self.run.run_branch
        task_branches = {a.branch for a in attempts if a.candidate_sha}
        if now.get(branch) not in allowed:
            found.append(
                f"the run branch {branch} was moved to {_short(now.get(branch))}; put back at "
                f"{expected[:12]}, the last commit the run integrated"
            )
            self._restore(branch, expected, now.get(branch))
        for name in sorted(task_branches):
            sha = now.get(name)
            held = self._task_branch_holds(attempts, name, sha) if sha is not None else True
            if held or self._added_to(attempts, name, sha or "") is not None:
                continue  # a commit added on top is a person's: its task parks (added_commits)
            landed = [a for a in attempts if a.branch == name and a.status is PASSED]
            if landed and landed[-1].candidate_sha:
                found.append(f"the task branch {name} was moved to {_short(sha)}; put back")
                self._restore(name, landed[-1].candidate_sha, sha)
            else:  # none of its work landed: the run has no branch there
                found.append(f"the task branch {name} was made at {_short(sha)}; deleted")
                refs.delete_branch(self.repo, name, str(sha))
        for line in found:
            self.emit(EventKind.VIOLATION, task_id, what=line)
        return found

    def _restore(self, branch: str, sha: str, now: str | None) -> None:
        if now is None:
            refs.create_branch(self.repo, branch, sha)
        else:
            refs.move_branch(self.repo, branch, sha, now)


def _values(attempts: list[Attempt], branch: str) -> set[str]:
    """Where a task branch is pointed by the run: at a candidate of it that landed (the
    integrate stage points it there), or at an attempt's base (where earlier versions made it)."""
    found: set[str] = set()
    for attempt in attempts:
        if attempt.branch == branch:
            found.add(attempt.base_sha)
            if attempt.candidate_sha and attempt.status is PASSED:
                found.add(attempt.candidate_sha)
    return found


def _short(sha: Any) -> str:
    return str(sha)[:12] if sha else "nothing (deleted)"
