"""A plan an author returns as data (code, title, objective, phases of tasks with criteria,
dependencies and paths), turned into the plan model of either dialect. What is wrong with the
data comes back as sentences an agent can act on, never as an exception.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from taskhand.plan import carried
from taskhand.plan.formats import markdown, prose
from taskhand.plan.formats.criteria import CriterionError, parse_criterion
from taskhand.plan.formats.tasktrack import CODE_RE
from taskhand.plan.model import Criterion, Dialect, Phase, Plan, Status, Task, counter

_TEXT = {"type": "string", "minLength": 1}
_ID = {"type": "integer", "minimum": 1, "description": "the task's number, unique in the plan"}
CRITERION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {**_TEXT, "description": "an outcome a command or a reviewer can check"},
        "command": {
            "type": "array",
            "items": {"type": "string"},
            "description": "optional argv of a command that exits 0 when the criterion holds",
        },
    },
    "required": ["text"],
}
TASK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _ID,
        "title": _TEXT,
        "description": {**_TEXT, "description": "what to build; name real paths and symbols"},
        "criteria": {"type": "array", "items": CRITERION},
        "dependencies": {"type": "array", "items": _ID, "description": "ids in the same phase"},
        "paths": {"type": "array", "items": _TEXT, "description": "files or folders it changes"},
    },
    "required": ["id", "title", "description"],
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3,5}$"},
        "title": _TEXT,
        "objective": {**_TEXT, "description": "the overall goal, with the background"},
        "phases": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "title": _TEXT,
                    "tasks": {"type": "array", "items": TASK, "minItems": 1},
                },
                "required": ["title", "tasks"],
            },
        },
    },
    "required": ["code", "title", "objective", "phases"],
}


@dataclass(frozen=True)
class Frame:
    """What the harness adds to an author's data: the dialect, where the plan will live, the
    requirement documents (absolute paths) and the moment the plan is created."""

    dialect: Dialect
    root: Path
    resources: tuple[str, ...]
    created: str
    code: str = ""  # the code a person chose (--code): it wins over the author's


def build(data: object, frame: Frame) -> Plan | list[str]:
    """The plan `data` describes, every task OPEN; else what is wrong with it, one line each."""
    plan, problems = build_all(data, frame)
    return problems if problems or plan is None else plan


def build_all(data: object, frame: Frame) -> tuple[Plan | None, list[str]]:
    """What is wrong with `data`, one line each, and the plan of what is usable in it (None
    when no task is), so that its files can be checked in the same round. A phase or task is
    named by its place, counted from 1 as lines are: `phase 2, task 1 (id 3)`."""
    problems: list[str] = []
    if not isinstance(data, dict):
        return None, ["the plan must be a JSON object with code, title, objective and phases"]
    title, objective = _text(data, "title", "", problems), _text(data, "objective", "", problems)
    code = frame.code or data.get("code")
    if frame.dialect is Dialect.TASKTRACK and not (isinstance(code, str) and CODE_RE.match(code)):
        problems.append(f"code {code!r} must be 3 to 5 uppercase letters A-Z, like WORD")
        code = "PLAN"
    phases_data = data.get("phases")
    if not isinstance(phases_data, list) or not phases_data:
        problems.append("phases must be a non-empty list of {title, tasks}")
        phases_data = []
    tasks: list[Task] = []
    phases: list[Phase] = []
    for number, item in enumerate(phases_data, start=1):
        where = f"phase {number}"
        if not isinstance(item, dict):
            problems.append(f"{where} must be an object with a title and tasks")
            continue
        phase = Phase(number, _text(item, "title", where, problems))
        listed = item.get("tasks")
        if not isinstance(listed, list) or not listed:
            problems.append(f"{where}: tasks must be a non-empty list of tasks")
            listed = []
        for index, entry in enumerate(listed, start=1):
            task = _task(entry, f"{where}, task {index}", number, frame, str(code), problems)
            if task is not None and task.id in {t.id for t in tasks}:
                problems.append(
                    f"two tasks have the id {counter(task.id)}; number tasks 1, 2, 3, ..."
                )
            elif task is not None:
                tasks.append(task)
                phase.task_ids.append(task.id)
        phases.append(phase)
    if not tasks:
        return None, problems
    for phase in phases:
        phase.task_ids.sort(key=lambda i: int(counter(i)))
    plan = Plan(
        frame.dialect,
        frame.root,
        title,
        sorted(tasks, key=lambda t: int(counter(t.id))),
        phases,
        code=str(code) if frame.dialect is Dialect.TASKTRACK else None,
        objective=objective,
        created=frame.created if frame.dialect is Dialect.TASKTRACK else None,
        resources=list(frame.resources) if frame.dialect is Dialect.TASKTRACK else [],
    )
    if frame.dialect is Dialect.MARKDOWN:
        plan.overview_text = markdown_overview(plan, frame.resources)
    return plan, problems


def task_id(number: int, dialect: Dialect, code: str) -> str:
    """A task's id in the dialect: CODE-N in TaskTrack, T-NNN in Markdown."""
    return f"{code}-{number}" if dialect is Dialect.TASKTRACK else f"T-{number:03d}"


def markdown_overview(plan: Plan, resources: tuple[str, ...]) -> str:
    """A Markdown plan's overview: its goal, its phases by title, and its requirements."""
    phases = "\n".join(f"{p.number}. {prose.one_line(p.title)}" for p in plan.phases)
    read = "\n".join(f"- {r}" for r in resources) or "- none"
    goal = carried.overview_prose(plan.objective)
    return (
        f"# {prose.one_line(plan.title)}\n\n## Goal\n{goal}\n\n## Phases\n{phases}\n\n"
        f"## Requirements\n{read}\n"
    )


def _task(
    entry: object, where: str, phase: int, frame: Frame, code: str, problems: list[str]
) -> Task | None:
    if not isinstance(entry, dict):
        problems.append(f"{where} must be an object with id, title, description and criteria")
        return None
    number = _number(entry.get("id"))
    if number is None:
        problems.append(f"{where}: id must be a whole number from 1 (got {entry.get('id')!r})")
        return None
    own = task_id(number, frame.dialect, code)
    where = f"{where} (id {number})"
    dependencies = []
    for dep in _list(entry, "dependencies", where, problems):
        wanted = _number(dep)
        if wanted is None:
            problems.append(f"{where}: dependency {dep!r} is not a task number")
        else:
            dependencies.append(task_id(wanted, frame.dialect, code))
    paths = [str(p) for p in _list(entry, "paths", where, problems)]
    for path in paths:
        if not path.strip() or PurePosixPath(path).is_absolute() or ".." in path.split("/"):
            problems.append(f"{where}: path {path!r} must be relative to the repository root")
        elif frame.dialect is Dialect.MARKDOWN and re.search(r"[,\s]", path):
            problems.append(f"{where}: path {path!r} {markdown.PATH_SEPARATOR}")
    description = _text(entry, "description", where, problems)
    if paths and frame.dialect is Dialect.TASKTRACK:  # TaskTrack has no field for them
        description += " Paths: " + ", ".join(f"`{p}`" for p in paths) + "."
    criteria = [
        c
        for c in (
            _criterion(item, where, problems) for item in _list(entry, "criteria", where, problems)
        )
        if c is not None
    ]
    return Task(
        own,
        _text(entry, "title", where, problems),
        description,
        criteria,
        phase=phase,
        dependencies=dependencies,
        status=Status.OPEN,
        updated=frame.created if frame.dialect is Dialect.TASKTRACK else None,
        paths=paths if frame.dialect is Dialect.MARKDOWN else [],
    )


def _criterion(item: object, where: str, problems: list[str]) -> Criterion | None:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        problems.append(f"{where}: a criterion must be {{text, command?}} (got {item!r})")
        return None
    text = " ".join(str(item["text"]).split())
    command = item.get("command")
    if command is not None:
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(a, str) and a for a in command)
        ):
            problems.append(f"{where}: the command of {text!r} must be a non-empty argv list")
            return None
        text = f"`$ {shlex.join(command)}` {text}".strip()
    try:
        return parse_criterion(text)
    except CriterionError as exc:
        problems.append(f"{where}: criterion {text!r}: {exc}")
        return None


def _text(data: dict[str, Any], key: str, where: str, problems: list[str]) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where + ': ' if where else ''}{key} must be non-empty text")
        return ""
    return value.strip()


def _list(data: dict[str, Any], key: str, where: str, problems: list[str]) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        problems.append(f"{where}: {key} must be a list")
        return []
    return value


def _number(value: object) -> int | None:
    """A task number as written: 3, "3", "T-003" or "FOO-3"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 1 else None
    if isinstance(value, str):
        digits = value.strip() if value.strip().isdigit() else counter(value.strip())
        return int(digits) if digits and int(digits) >= 1 else None
    return None


def differences(built: Plan, read: Plan) -> list[str]:
    """What of `built` reads back otherwise from its written files (text that looks like a
    field or a heading of the dialect), one line each; [] when the files hold it all."""
    found = []
    if _words(built.objective) not in _words(
        read.objective or carried.overview_text(read.overview_text)
    ):
        found.append("the objective reads back otherwise from the overview")
    by_id = read.by_id()
    for task in built.tasks:
        back = by_id.get(task.id)
        if back is None:
            found.append(f"{task.id} is missing when its files are read back")
            continue
        for part, wrote, got in (
            ("title", task.title, back.title),
            ("description", task.description, back.description),
            (
                "criteria",
                " | ".join(c.text for c in task.criteria),
                " | ".join(c.text for c in back.criteria),
            ),
        ):
            if _words(wrote) != _words(got):
                found.append(
                    f"{task.id}'s {part} reads back otherwise from its file: write it without "
                    "lines that look like a field (**Name**:), a heading (#) or a list of "
                    "criteria"
                )
    return found


def _words(text: str) -> str:
    return " ".join(text.split())
