"""The machine gate after an implement unit: acceptance commands, whitespace, scope.

Each part becomes a result with a reason; a failed gate's reasons go to the next attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskhand.plan.model import Task
    from taskhand.unit import Sandbox


@dataclass(frozen=True)
class GateResult:
    name: str
    ok: bool
    detail: str
    exit_code: int | None = None
    seconds: float | None = None
    output: str = ""


def run_gates(
    repo: Path,
    worktree: Path,
    base: str,
    candidate: str,
    task: Task,
    forbidden: list[str],
    sandbox: Sandbox | None = None,
    passed: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
    commands_only: bool = False,
) -> list[GateResult]:
    """Every gate, in order, even after one fails: the next attempt wants all the reasons.
    Checks get the allow-list's environment, the plan's `passed` names and `extra` (the
    workspace's $TASKHAND_PORT), never our keys; without a `sandbox`, they run unconfined
    (host.sandbox.NONE). `commands_only`: the acceptance commands alone, for a change
    replayed onto a newer base (its paths and added lines are those already checked)."""
    # Loaded when gates run: `validate` reaches this package for `runnable` alone.
    from taskhand.gates import scope
    from taskhand.gates.checks import run_check
    from taskhand.host.allowlist import child_env
    from taskhand.host.sandbox import NONE
    from taskhand.text import printable
    from taskhand.workspace import diffs

    sandbox = NONE if sandbox is None else sandbox

    results = []
    for check in task.checks:
        # The checks run the agent's code (its tests, its build): confined like the agent.
        env = {**child_env(passed=passed), **(extra or {})}
        done = run_check(check, worktree, env, sandbox=sandbox)
        detail = done.reason()
        if not done.ok and done.output.strip():
            detail += "\n" + _tail(done.output)
        results.append(
            GateResult("command", done.ok, detail, done.exit_code, done.seconds, done.output)
        )
    if commands_only:
        return results
    whitespace = diffs.whitespace_errors(repo, base, candidate)
    results.append(
        GateResult(
            "whitespace",
            not whitespace,
            "whitespace errors in the change:\n" + whitespace
            if whitespace
            else "no whitespace errors",
        )
    )
    changes = diffs.changed_paths(repo, base, candidate)
    links = diffs.symlinks(repo, base, candidate)
    # Where a link leads depends on the whole tree it is checked out in: read when there is one.
    layout = diffs.layout(repo, candidate) if links else None
    violations = scope.check_scope(changes, task.paths, forbidden, links, layout)
    detail = "; ".join(f"{printable(v.path, name=True)}: {v.reason}" for v in violations)
    detail = detail or "all changes in scope"
    results.append(GateResult("scope", not violations, detail))
    return results


def _tail(output: str, lines: int = 30, limit: int = 2000) -> str:
    """The end of a command's output: where test runners put what went wrong."""
    text = "\n".join(output.rstrip().splitlines()[-lines:])
    return text[-limit:]
