"""What became of a contract's task (`taskhand task show`): its state, the latest attempt's
acceptance output (each check's argv, exit code and output tail), the files its latest result
changes, and that result's disposition once recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskhand.plan import validate
from taskhand.plan.model import Check
from taskhand.plan.problems import display_path
from taskhand.run.contract import ContractError
from taskhand.state.records import Gate
from taskhand.text import printable
from taskhand.workspace import git

OUTPUT_TAIL = 4000  # characters of a check's output shown


def show(task_id: str, plan_root: Path, repo: Path | None = None) -> dict[str, Any]:
    """What became of a contract's task: its state, the latest attempt's acceptance output,
    the files its latest candidate changes, and the disposition of that result if any."""
    from taskhand.pipeline import lifecycle, standing
    from taskhand.state.paths import StateDir
    from taskhand.state.store import Store
    from taskhand.workspace import depot, diffs

    plan = validate.validate(plan_root).plan
    task = plan.task(task_id) if plan is not None else None
    if plan is None or task is None:
        raise ContractError(
            f"no task {printable(task_id)}", where=display_path(plan_root), fix="give its id"
        )
    statuses, standings = standing.read(plan, repo=repo)
    found: dict[str, Any] = {
        "id": task_id,
        "plan": display_path(plan_root),
        "status": str(statuses[task_id]),
        "lifecycle": str(standings[task_id].life.status),
        "attempt": None,
        "acceptance": [],
        "changed_files": [],
        "disposition": None,
    }
    root = git.repo_for(plan.root, repo)
    state = StateDir.for_repo(root)
    if not state.database.exists():
        return found
    with Store.open(state.database) as store:
        run = store.latest_run(lifecycle.plan_key(plan))
        attempts = store.attempts(run.id, task_id) if run else []
        if run is None or not attempts:
            return found
        latest = attempts[-1]
        found["attempt"] = {
            "number": latest.number,
            "status": str(latest.status),
            "base_sha": latest.base_sha,
        }
        found["acceptance"] = _acceptance_output(store.gates(latest.id), task.checks)
        results = store.results(run.id, task_id)
    candidate = next((r.attempt for r in reversed(results)), None)
    if candidate is not None and candidate.candidate_sha:
        depot.read_runs(root, [state.depot(candidate.run_id)])  # where its commit is kept
        changes = diffs.changed_paths(root, candidate.base_sha, candidate.candidate_sha)
        found["candidate_sha"] = candidate.candidate_sha
        found["changed_files"] = [{"status": c.status, "path": c.path} for c in changes]
        disposed = results[-1].disposition
        if disposed is not None:
            found["disposition"] = str(disposed.status)
    return found


def _acceptance_output(gates: list[Gate], checks: list[Check]) -> list[dict[str, Any]]:
    """The latest result of each check: the commands with the argv and exit code each
    expected, then the other gates. Every round of checks runs all the task's commands in
    order (a replay onto a newer base runs them again, alone), so the last of the command
    gates, as many as the task has checks, are the latest round's, in the checks' order."""
    commands = [g for g in gates if g.name == "command"]
    latest = commands[len(commands) - len(checks) :] if len(commands) > len(checks) else commands
    shown = [_row(gate, check) for gate, check in zip(latest, checks, strict=False)]
    others: dict[str, Gate] = {}
    for gate in gates:
        if gate.name != "command":
            others[gate.name] = gate  # the later result of a name stands
    return shown + [_row(gate, None) for gate in others.values()]


def _row(gate: Gate, check: Check | None) -> dict[str, Any]:
    row: dict[str, Any] = {"name": gate.name, "ok": gate.ok, "exit_code": gate.exit_code}
    if check is not None:
        row["command"] = list(check.argv)
        row["expected_exit_code"] = check.expected_exit_code
    row["detail"] = gate.detail
    row["output"] = gate.output[-OUTPUT_TAIL:]
    return row
