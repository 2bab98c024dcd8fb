"""A person's new task, a draft of a few lines, as files of either dialect: the next free id,
the task file in its dialect's canonical form, and for TaskTrack its entry in the overview's
phase table. The files are returned, not written: the caller writes them and checks the plan.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.formats import markdown, tasktrack_edit
from taskhand.plan.model import Dialect, Plan, Status, Task, counter
from taskhand.plan.templates import slug

KINDS = markdown.KINDS
_FIRST_PHASE = "Tasks"  # the title of the phase a plan's first task opens
_WIDTH = 3  # T-001: the width `taskhand init` starts a Markdown plan with


def next_id(plan: Plan) -> str:
    """The id after the plan's highest, written as the plan writes its ids."""
    numbers = [int(n) for t in plan.tasks if (n := counter(t.id))]
    number = max(numbers, default=0) + 1
    if plan.dialect is Dialect.TASKTRACK:
        return f"{plan.code}-{number}"
    widths = [len(t.id.partition("-")[2]) for t in plan.tasks]
    return f"T-{number:0{max(widths, default=_WIDTH)}d}"


def draft(
    plan: Plan, title: str, text: str, kind: str | None = None
) -> tuple[Task, dict[Path, str]]:
    """The new task (in the plan's last phase) and the text of each file to write for it: the
    task file, and for TaskTrack the overview with the task's entry, status OPEN."""
    phase = max((p.number for p in plan.phases), default=1)
    task = Task(next_id(plan), title, text.strip(), phase=phase, kind=kind)
    if plan.dialect is Dialect.MARKDOWN:
        path = plan.root / f"{task.id}-{slug(title)}.md"
        return task, {path: markdown.render_task(task)}
    task.status = Status.OPEN
    overview = plan.overview_path
    assert overview is not None  # a TaskTrack plan that loaded has its overview
    text = tasktrack_edit.read_raw(overview)
    if not plan.phases:  # an overview alone: the first task opens the first phase
        newline = "\r\n" if "\r\n" in text else "\n"
        text = f"{text.rstrip()}{newline}{newline}## {phase}: {_FIRST_PHASE}{newline}"
    listed = tasktrack_edit.add_overview_entry(text, phase, task.id, title, Status.OPEN)
    return task, {plan.root / f"{task.id}.md": tasktrack_edit.render_task(task), overview: listed}
