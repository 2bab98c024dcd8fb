"""TaskTrack task files (`[CODE]-[N].md`): fields, criteria, requests and outcomes.

Parsing reports every deviation from the spec's task file structure: field order, status
codes, timestamps, and which outcome fields a status allows.
"""

from __future__ import annotations

import re

from taskhand.plan.formats import prose
from taskhand.plan.formats.criteria import CriterionError, parse_criterion
from taskhand.plan.formats.minimark import (
    Doc,
    Field,
    check_order,
    check_timestamp,
    split_fields,
    split_list,
)
from taskhand.plan.formats.tasktrack_edit import NONE
from taskhand.plan.model import Criterion, Exchange, Status, Task
from taskhand.plan.problems import Collector

TASK_FIELDS = ("Status", "Updated", "Dependencies", "Description", "Acceptance")
OUTCOME_FIELDS = ("Request", "Response", "Resolution", "Failure")
ID_RE = re.compile(r"^(?P<code>[A-Z]{3,5})-(?P<n>[1-9][0-9]{0,8})$")
_TASK_HEAD_RE = re.compile(r"^#\s+(?P<id>[^:\s]+)\s*:\s*(?P<title>(?:.*\S)?)\s*$")
STATUS_CODES = dict(Status.__members__)  # "OPEN" -> Status.OPEN, ...
_ID_PARTS_RE = re.compile(r"^(?P<code>[^-]*)-(?P<n>-?[0-9]+)$")


def id_problem(text: str) -> str:
    """What is wrong with `text` as a TaskTrack task id, in words; "" when nothing is."""
    if ID_RE.match(text):
        return ""
    if re.fullmatch(r"-?[0-9]+", text):
        return "a number alone; an id is a plan code and a number from 1, like FOO-1"
    parts = _ID_PARTS_RE.match(text)
    if parts is None:
        return "an id is a plan code and a number, like FOO-1"
    if not re.fullmatch(r"[A-Z]{3,5}", parts["code"]):
        return f"its code {parts['code']!r} is not 3 to 5 letters A-Z"
    number = parts["n"]
    if number.startswith("-"):
        return "its number is negative; numbers count from 1"
    if number.startswith("0"):
        return "its number starts with 0; numbers count from 1, with no leading zero"
    return f"its number has {len(number)} digits, more than the 9 an id may have"


# Fields taskhand adds to a task file, with the values each takes.
EXTENSIONS = {"Kind": ("logic", "ui", "vague"), "Pipeline": ("default", "full")}
# What `taskhand convert` carries from a Markdown task that TaskTrack has no field for (its
# paths, agent, model, ...), or from its overview: kept among the file's other fields,
# without a warning.
CARRIED = "Markdown settings"


def parse_task_text(text: str, out: Collector, expected_id: str) -> Task | None:
    """Parse one task file into a Task; problems go to `out`."""
    doc = split_fields(text)
    head = _TASK_HEAD_RE.match(doc.heading)
    if not head:
        out.error(
            doc.heading_line or 1,
            "the first line must be '# ID: Title'",
            f"write '# {expected_id}: <task title>'",
            "heading",
        )
        return None
    task = Task(head.group("id"), head.group("title"), source=out.path, line=doc.heading_line)
    if task.id != expected_id:
        out.error(
            doc.heading_line,
            f"heading names {task.id} but the file is {expected_id}.md",
            "make the heading and the file name agree",
            "task-id",
        )
    if not task.title:
        out.error(doc.heading_line, "the task has no title", f"write '# {task.id}: <title>'")
    for number, _line in doc.tail:
        out.warn(number, "text outside any field", "move it into **Description**", "stray-text")
    check_order(doc, TASK_FIELDS, out, "the task file")
    for f in doc.fields:
        _apply_field(task, f, out)
    _check_outcome(task, doc, out)
    return task


# The fields that hold text, written as prose (prose.py) and read back as it was.
PROSE_FIELDS = ("Description", *OUTCOME_FIELDS)


def _apply_field(task: Task, f: Field, out: Collector) -> None:
    task.lines.setdefault(f.name.lower(), f.line)
    if f.name in PROSE_FIELDS or (f.name not in TASK_FIELDS and f.name not in EXTENSIONS):
        f.value = prose.unescape(f.value)
    if f.name == "Status":
        status = STATUS_CODES.get(f.value)
        if status is not None:
            task.status = status
        else:
            out.error(
                f.line,
                f"status {f.value!r} is not one of OPEN, BUSY, WAIT, DONE, FAIL",
                "use one of the five codes",
                "status",
            )
    elif f.name == "Updated":
        task.updated = f.value
        check_timestamp(f.value, f.line, out, "Updated")
    elif f.name == "Dependencies":
        task.dependencies = split_list(f.value)
        for dep in task.dependencies:
            if not ID_RE.match(dep):
                out.error(
                    f.line,
                    f"dependency {dep!r} is not a task id: {id_problem(dep)}",
                    "list ids like FOO-1, separated by commas, or write 'none'",
                    "dependency",
                )
    elif f.name == "Description":
        task.description = f.value
        if not f.value:
            out.error(f.line, "the description is empty", "describe the work", "description")
    elif f.name == "Acceptance":
        task.lines["criteria"] = f.line
        task.criteria = _criteria(f, out)
    elif f.name == "Request":
        task.exchanges.append(Exchange(f.value))
    elif f.name == "Response":
        if not task.exchanges or task.exchanges[-1].response is not None:
            out.error(
                f.line,
                "**Response** without a **Request** above it",
                "put each Response directly below its Request",
                "exchange",
            )
        else:
            task.exchanges[-1].response = f.value
    elif f.name in ("Resolution", "Failure"):
        setattr(task, f.name.lower(), f.value)
    elif f.name in EXTENSIONS and f.value.strip() in EXTENSIONS[f.name]:
        # taskhand's lifecycle extensions, as the Markdown dialect's frontmatter has them
        setattr(task, f.name.lower(), f.value.strip())
    elif f.name in EXTENSIONS:
        choices = ", ".join(EXTENSIONS[f.name])
        out.error(f.line, f"**{f.name}** is {f.value!r}", f"use one of {choices}", "extension")
    elif f.name == CARRIED:
        task.extra[f.name] = f.value
    else:
        task.extra[f.name] = f.value
        out.warn(
            f.line,
            f"unknown field **{f.name}** is kept as is",
            "if it belongs to the description, do not start the line with a bold label",
        )


def _criteria(f: Field, out: Collector) -> list[Criterion]:
    if f.value.lower() == NONE:
        return []
    items: list[tuple[int, list[str]]] = []
    for offset, line in enumerate(f.value.split("\n")):
        s = line.strip()
        if s[:2] in ("- ", "* "):
            items.append((offset, [s[2:].strip()]))
        elif s and items:
            items[-1][1].append(s)
        elif s:
            out.error(
                f.value_line + offset,
                "acceptance criteria must be a bullet list",
                "start each criterion with '- '",
                "criteria",
            )
    criteria = []
    for offset, parts in items:
        text = " ".join(parts)
        try:
            criteria.append(parse_criterion(text, f.value_line + offset))
        except CriterionError as exc:
            out.error(f.value_line + offset, f"criterion command: {exc}", "fix the command")
            criteria.append(Criterion(text, line=f.value_line + offset))
    return criteria


def _check_outcome(task: Task, doc: Doc, out: Collector) -> None:
    names = [f.name for f in doc.fields if f.name in OUTCOME_FIELDS]
    if not names and task.status in (Status.OPEN, Status.BUSY):
        return  # no outcome, and none due: the task as most files hold it
    lines = {f.name: f.line for f in doc.fields}
    for name, status in (("Resolution", Status.DONE), ("Failure", Status.FAIL)):
        if name in lines and task.status is not status:
            out.error(
                lines[name],
                f"**{name}** is only allowed when the status is {status}",
                f"remove **{name}** or set the status to {status}",
                "outcome",
            )
        if task.status is status and name not in lines:
            out.error(
                doc.heading_line,
                f"a {status} task needs a **{name}** field",
                f"add '**{name}**: <what happened>'",
                "outcome",
            )
        if name in lines and names[-1] != name:
            out.error(lines[name], f"**{name}** must be the last field", "move it to the end")
    if "Resolution" in lines and "Failure" in lines:
        out.error(
            lines["Failure"],
            "a task has a Resolution or a Failure, not both",
            "keep the one that matches the status",
            "outcome",
        )
    if task.status is Status.WAIT and (not task.exchanges or task.exchanges[-1].response):
        out.error(
            doc.heading_line,
            "a WAIT task needs a **Request** without a response",
            "add '**Request**: <what a person must do>'",
            "exchange",
        )
