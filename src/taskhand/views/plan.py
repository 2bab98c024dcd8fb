"""What `show` and `next` report: plain dictionaries for --json, and the same as text.

Both hold the plan's text as it is; the CLI prints them through `terminal`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from taskhand.plan import schedule
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import relative_path
from taskhand.plan.schedule import Statuses


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


def task_json(task: Task, statuses: Statuses, frontier: list[str]) -> dict[str, Any]:
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
    }


def plan_json(plan: Plan, statuses: Statuses) -> dict[str, Any]:
    whole = schedule.shape(plan, statuses)
    ahead = schedule.shape(plan, statuses, remaining=True)
    frontier = schedule.eligible(plan, statuses)
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
        "tasks": [task_json(t, statuses, frontier) for t in plan.tasks],
        **next_json(plan, statuses),
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


def plan_text(plan: Plan, statuses: Statuses) -> str:
    data = plan_json(plan, statuses)
    by_id = plan.by_id()
    head = f"{plan.code} - {plan.title}" if plan.code else plan.title
    lines = [f"{head}  ({plan.dialect}, {len(plan.tasks)} tasks)"]
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
            lines.append(f"  [{_MARKS[status]}] {status} {task_id}: {task.title}{deps}{ready}")
            waiting = [e.request for e in task.exchanges if e.response is None]
            if status is Status.WAIT and waiting:
                lines.append(f"        asks: {waiting[-1]}")
    path, width = data["critical_path"], data["width"]
    lines.append(
        f"\nCritical path: {len(path)} of {len(plan.tasks)} tasks "
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


def task_text(task: Task, statuses: Statuses, frontier: list[str]) -> str:
    data = task_json(task, statuses, frontier)
    lines = [
        f"{task.id}: {task.title}",
        f"Status: {data['status']}   Phase: {task.phase}"
        f"   Eligible: {'yes' if data['eligible'] else 'no'}",
        f"Dependencies: {', '.join(task.dependencies) or 'none'}",
    ]
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
        lines += ["", f"Request: {exchange.request}", f"Response: {exchange.response or '-'}"]
    if task.resolution:
        lines += ["", f"Resolution: {task.resolution}"]
    if task.failure:
        lines += ["", f"Failure: {task.failure}"]
    return "\n".join(lines)
