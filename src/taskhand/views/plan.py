"""What `show` and `next` report: plain dictionaries for --json, and the same as text.

Both hold the plan's text as it is; the CLI prints them through `terminal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from taskhand.pipeline.standing import scheduled
from taskhand.plan import schedule
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import relative_path
from taskhand.plan.schedule import Statuses
from taskhand.text import plural

if TYPE_CHECKING:
    from taskhand.pipeline.standing import Standing

Standings = Mapping[str, "Standing"]


def exit_json(plan: Plan, statuses: Statuses) -> dict[str, str] | None:
    reason = schedule.exit_condition(plan, statuses)
    return None if reason is None else {"reason": reason.name.lower(), "message": reason.message}


def next_json(plan: Plan, statuses: Statuses) -> dict[str, Any]:
    frontier = schedule.eligible(plan, statuses)
    return {
        "next": frontier[0] if frontier else None,
        "eligible": frontier,
        "active_phase": schedule.active_phase(plan, statuses),
        "exit": exit_json(plan, statuses),
    }


def task_json(
    task: Task, statuses: Statuses, frontier: list[str], standing: Standing | None = None
) -> dict[str, Any]:
    """The task as `show --json` gives it; with its standing, its lifecycle too: the status,
    whether and what it waits for, the moves open to a person, its questions, its PR."""
    lifecycle = standing.as_json() if standing is not None else {}
    return {
        "id": task.id,
        "title": task.title,
        "phase": task.phase,
        "status": str(statuses.get(task.id, task.status)),
        "eligible": task.id in frontier,
        "dependencies": task.dependencies,
        "description": task.description,
        "criteria": [
            {"text": c.text, "check": asdict(c.check) if c.check else None} for c in task.criteria
        ],
        "requests": [asdict(e) for e in task.exchanges],
        "resolution": task.resolution,
        "failure": task.failure,
        "paths": task.paths,
        "kind": task.kind,
        "agent": task.agent,
        "model": task.model,
        "timeout_seconds": task.timeout_seconds,
        "max_attempts": task.max_attempts,
        "extra": task.extra,
        "file": relative_path(task.source) if task.source else None,
        **lifecycle,
    }


def plan_json(plan: Plan, statuses: Statuses, standings: Standings | None = None) -> dict[str, Any]:
    whole = schedule.shape(plan, statuses)
    ahead = schedule.shape(plan, statuses, remaining=True)
    lives = standings or {}
    due = scheduled(statuses, lives)  # what a run would take: no draft, no gate
    frontier = schedule.eligible(plan, due)
    return {
        "dialect": str(plan.dialect),
        "path": relative_path(plan.root),
        "code": plan.code,
        "title": plan.title,
        "objective": plan.objective,
        "created": plan.created,
        "resources": plan.resources,
        "phases": [
            {"number": p.number, "title": p.title, "tasks": p.task_ids} for p in plan.phases
        ],
        "tasks": [task_json(t, statuses, frontier, lives.get(t.id)) for t in plan.tasks],
        **next_json(plan, due),
        "critical_path": whole.critical_path,
        "width": whole.width,
        "remaining": {"critical_path": ahead.critical_path, "width": ahead.width},
    }


_MARKS = {
    Status.OPEN: " ",
    Status.BUSY: ">",
    Status.WAIT: "?",
    Status.DONE: "x",
    Status.FAIL: "!",
}


def plan_text(plan: Plan, statuses: Statuses, standings: Standings | None = None) -> str:
    data = plan_json(plan, statuses, standings)
    by_id = plan.by_id()
    head = f"{plan.code} - {plan.title}" if plan.code else plan.title
    lines = [f"{head}  ({plan.dialect}, {plural(len(plan.tasks), 'task')})"]
    for phase in plan.phases:
        named = phase.title != f"Phase {phase.number}"
        lines.append(f"\nPhase {phase.number}: {phase.title}" if named else f"\n{phase.title}")
        for task_id in phase.task_ids:
            task = by_id.get(task_id)
            if task is None:
                continue
            status = statuses.get(task_id, task.status)
            deps = f"  (after {', '.join(task.dependencies)})" if task.dependencies else ""
            ready = "  <- eligible" if task_id in data["eligible"] else ""
            standing = (standings or {}).get(task_id)
            life = f" {standing.life.status}" if standing and standing.beyond_codes else ""
            lines.append(
                f"  [{_MARKS[status]}] {status}{life} {task_id}: {task.title}{deps}{ready}"
            )
            if standing is not None and standing.beyond_codes and standing.waits_for:
                lines.append(f"        waits for {standing.waits_for}")
                continue
            waiting = [e.request for e in task.exchanges if e.response is None]
            if status is Status.WAIT and waiting:
                lines.append(f"        asks: {waiting[-1]}")
    path, width = data["critical_path"], data["width"]
    lines.append(
        f"\nCritical path: {len(path)} of {plural(len(plan.tasks), 'task')} "
        f"({' -> '.join(path) if len(path) <= 12 else _elide(path)}); width {width}"
    )
    lines.append(next_text(data))
    return "\n".join(lines)


def _elide(ids: list[str]) -> str:
    return " -> ".join([*ids[:5], "...", *ids[-5:]])


def next_text(data: dict[str, Any], all_eligible: bool = False) -> str:
    if data["exit"]:
        return str(data["exit"]["message"])
    if all_eligible:
        return "\n".join(data["eligible"])
    return f"Next: {data['next']} (eligible: {', '.join(data['eligible'])})"


def task_text(
    task: Task, statuses: Statuses, frontier: list[str], standing: Standing | None = None
) -> str:
    data = task_json(task, statuses, frontier, standing)
    lines = [
        f"{task.id}: {task.title}",
        f"Status: {data['status']}   Phase: {task.phase}"
        f"   Eligible: {'yes' if data['eligible'] else 'no'}",
        f"Dependencies: {', '.join(task.dependencies) or 'none'}",
    ]
    if standing is not None and standing.beyond_codes:
        lines += _lifecycle_lines(standing)
    for key in ("paths", "kind", "agent", "model", "timeout_seconds", "max_attempts"):
        if data[key]:
            shown = ", ".join(data[key]) if isinstance(data[key], list) else data[key]
            lines.append(f"{key.replace('_', ' ').capitalize()}: {shown}")
    lines += ["", task.description, "", "Acceptance criteria:"]
    for criterion in task.criteria:
        check = criterion.check
        suffix = f"   [check: exit {check.expected_exit_code}]" if check else ""
        lines.append(f"  - {criterion.text}{suffix}")
    for exchange in task.exchanges:
        lines += ["", _field("Request", exchange.request)]
        lines.append(_field("Response", exchange.response or "-"))
    if task.resolution:
        lines += ["", _field("Resolution", task.resolution)]
    if task.failure:
        lines += ["", _field("Failure", task.failure)]
    return "\n".join(lines)


def _field(label: str, text: str) -> str:
    """A field of text an agent or a check wrote: its later lines indented, so none of them
    (a check's output, a file name it printed) can pass for a field of its own."""
    return f"{label}: " + text.replace("\n", "\n  ")


def _lifecycle_lines(standing: Standing) -> list[str]:
    """A task's lifecycle for `show PLAN TASK`: its status, what it waits for, the moves."""
    life = standing.life
    head = f"Lifecycle: {life.status} ({standing.pipeline} pipeline)"
    if standing.working:
        head += ", a unit works on it now"
    elif standing.waits_for:
        head += f", waits for {standing.waits_for}"
    lines = [head]
    if standing.moves:
        lines.append(f"Moves: {', '.join(str(m) for m in standing.moves)}")
    if life.pr:
        lines.append(f"Pull request: {life.pr}")
    if standing.artifacts:
        lines.append(f"Artifacts: {standing.artifacts}")
    for q in standing.questions:
        state = "open" if q.open else f"answered: {q.choice or ''} {q.note or ''}".rstrip()
        lines.append(f"Q{q.number} ({state}): {q.text}")
        lines += [f"  ({chr(ord('a') + i)}) {o}" for i, o in enumerate(q.options)]
    return lines
