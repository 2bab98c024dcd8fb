"""Prompts per role, built from the Markdown templates beside this file.

An agent sees the task, the overview and the plan as context, and its own earlier attempts;
never the harness's state, queue, caps or costs.
"""

from __future__ import annotations

from importlib.resources import files
from string import Template

from taskhand.model import Exchange, Plan, Status, Task

OVERVIEW_CAP = 4 * 1024
PLAN_CAP = 6 * 1024


def _template(name: str) -> Template:
    return Template(files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8"))


def cap(text: str, limit: int) -> str:
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore").rstrip() + "\n[... cut for length ...]"


def plan_context(plan: Plan, current: str, statuses: dict[str, Status]) -> str:
    lines = []
    for task in plan.tasks:
        mark = "  <- your task" if task.id == current else ""
        status = statuses.get(task.id, task.status).lower()
        summary = " ".join(task.description.split())[:160]
        lines.append(f"- {task.id} [{status}] {task.title}{mark}: {summary}")
    return "\n".join(lines)


def implement(plan: Plan, task: Task, statuses: dict[str, Status], feedback: list[str]) -> str:
    """The implementer's prompt for one attempt at `task`."""
    criteria = "\n".join(f"- {c.text}" for c in task.criteria) or "- (none given)"
    scope = f"Stay inside these paths: {', '.join(task.paths)}." if task.paths else ""
    return _template("implement").substitute(
        overview=cap(plan.overview_text or plan.objective, OVERVIEW_CAP),
        plan=cap(plan_context(plan, task.id, statuses), PLAN_CAP),
        task_id=task.id,
        title=task.title,
        description=task.description,
        criteria=criteria,
        exchanges=_exchanges(task.exchanges),
        feedback=_feedback(feedback),
        scope=scope,
    )


def _exchanges(exchanges: list[Exchange]) -> str:
    answered = [e for e in exchanges if e.response]
    if not answered:
        return ""
    pairs = "\n".join(f"- Asked: {e.request}\n  Answer: {e.response}" for e in answered)
    return f"\nA person answered earlier questions on this task:\n{pairs}\n"


def _feedback(feedback: list[str]) -> str:
    if not feedback:
        return ""
    items = "\n".join(f"- {f}" for f in feedback[-5:])
    return f"\nAn earlier attempt at this task was not accepted:\n{items}\n"
