"""The TaskTrack dialect: `[CODE]-TaskTrack.md`, one `[CODE]-[N].md` per task, the spec beside.

Reading builds the plan model and reports every deviation from the spec in one pass;
`tasktrack_edit` writes the files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from taskhand.formats.criteria import CriterionError, parse_criterion
from taskhand.formats.files import Listing, read_text
from taskhand.formats.tasktrack_edit import NONE, now
from taskhand.model import Criterion, Dialect, Exchange, Phase, Plan, Status, Task, id_key
from taskhand.problems import Collector, Problem

OVERVIEW_SUFFIX = "-TaskTrack.md"
SPEC_RE = re.compile(r"^TaskTrack-.+\.md$")
CODE_RE = re.compile(r"^[A-Z]{3,5}$")
TASK_FIELDS = ("Status", "Updated", "Dependencies", "Description", "Acceptance")
OVERVIEW_FIELDS = ("Objective", "Created", "Resources")
OUTCOME_FIELDS = ("Request", "Response", "Resolution", "Failure")

_FIELD_RE = re.compile(r"^\*\*(?P<name>[A-Za-z][A-Za-z ]*)\*\*:(?P<value>.*)$")
_TASK_FILE_RE = re.compile(r"^(?P<code>[A-Za-z]+)-(?P<n>\d+)\.md$")
_PLAN_HEAD_RE = re.compile(r"^#\s+(?P<code>\S+)\s+-\s+(?P<title>.*?)\s*$")
_TASK_HEAD_RE = re.compile(r"^#\s+(?P<id>[^:\s]+)\s*:\s*(?P<title>.*?)\s*$")
_PHASE_RE = re.compile(r"^##\s+(?P<n>\d+)\s*:\s*(?P<title>.*?)\s*$")
_ENTRY_RE = re.compile(r"^[*-]\s+\[(?P<status>[^\]]*)\]\s+(?P<id>[^:\s]+)\s*:\s*(?P<title>.*?)\s*$")
_ID_RE = re.compile(r"^(?P<code>[A-Z]{3,5})-(?P<n>[1-9]\d*)$")
_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$")


def overview_names(names: list[str]) -> list[str]:
    return [n for n in names if n.endswith(OVERVIEW_SUFFIX) and not n.startswith("TaskTrack-")]


@dataclass
class _Field:
    name: str
    value: str
    line: int


@dataclass
class _Doc:
    """A TaskTrack file split into its heading line and `**Field**: value` blocks."""

    heading: str = ""
    heading_line: int = 0
    fields: list[_Field] = field(default_factory=list)
    tail: list[tuple[int, str]] = field(default_factory=list)  # lines after the fields


def _split(text: str, stop: re.Pattern[str] | None = None) -> _Doc:
    """Split into heading and fields; from the first `stop` line on, lines go to the tail."""
    doc = _Doc()
    blocks: list[list[str]] = []
    stopped = False
    for number, line in enumerate(text.split("\n"), start=1):
        if not doc.heading and line.strip():
            doc.heading, doc.heading_line = line.lstrip("\ufeff"), number
            continue
        stopped = stopped or bool(stop and stop.match(line))
        match = None if stopped else _FIELD_RE.match(line)
        if match:
            blocks.append([match.group("value")])
            doc.fields.append(_Field(match.group("name").strip(), "", number))
        elif blocks and not stopped:
            blocks[-1].append(line)
        elif line.strip() or stopped:
            doc.tail.append((number, line))
    for f, block in zip(doc.fields, blocks, strict=True):
        f.value = "\n".join(block).strip()
    return doc


def _check_timestamp(value: str, line: int, out: Collector, what: str) -> None:
    problem = ""
    if not _TIMESTAMP_RE.match(value):
        problem = f"{what} {value!r} is not an ISO 8601 timestamp"
    else:
        try:
            stamp = datetime.fromisoformat(value)
            if stamp.utcoffset() != UTC.utcoffset(None):
                problem = f"{what} {value!r} is not in UTC"
        except ValueError:
            problem = f"{what} {value!r} is not a valid date and time"
    if problem:
        out.error(line, problem, f"write it as {now()}", "timestamp")


def _list(value: str) -> list[str]:
    return [] if value.strip().lower() == NONE else [v.strip() for v in value.split(",")]


def _check_order(doc: _Doc, expected: tuple[str, ...], out: Collector, what: str) -> None:
    names = [f.name for f in doc.fields if f.name in expected]
    for name in expected:
        if name not in names:
            line = doc.fields[-1].line if doc.fields else doc.heading_line or 1
            out.error(line, f"{what} has no **{name}** field", f"add '**{name}**: ...'", "field")
        elif names.count(name) > 1:
            line = [f.line for f in doc.fields if f.name == name][1]
            out.error(line, f"**{name}** appears more than once", "keep one", "field")
    present = [n for n in expected if n in names]
    seen = list(dict.fromkeys(names))
    if seen != present:
        line = next(f.line for f in doc.fields if f.name in expected)
        out.error(
            line,
            f"fields are out of order ({', '.join(seen)})",
            f"order them {', '.join(expected)}",
            "field-order",
        )


@dataclass
class _Entry:
    phase: int
    status: Status | None
    title: str
    line: int


def _parse_overview(text: str, code: str, out: Collector, plan: Plan) -> dict[str, _Entry]:
    doc = _split(text, stop=re.compile(r"^##\s"))
    head = _PLAN_HEAD_RE.match(doc.heading)
    if not head:
        out.error(
            doc.heading_line or 1,
            "the first line must be '# CODE - Title'",
            f"write '# {code} - <plan title>'",
            "heading",
        )
    else:
        plan.title = head.group("title")
        if head.group("code") != code:
            out.error(
                doc.heading_line,
                f"plan code {head.group('code')!r} does not match the file name's {code!r}",
                "make the heading and file name agree",
                "code",
            )
        if not plan.title:
            out.error(doc.heading_line, "the plan has no title", "add it after 'CODE - '")
    _check_order(doc, OVERVIEW_FIELDS, out, "the overview")
    values = {f.name: f for f in doc.fields}
    for f in doc.fields:
        if f.name not in OVERVIEW_FIELDS:
            out.warn(f.line, f"unknown field **{f.name}** is kept as is", "remove it if unintended")
    if "Objective" in values:
        plan.objective = values["Objective"].value
        if not plan.objective:
            out.error(values["Objective"].line, "the objective is empty", "describe the goal")
    if "Created" in values:
        plan.created = values["Created"].value
        _check_timestamp(plan.created, values["Created"].line, out, "Created")
    if "Resources" in values:
        plan.resources = _list(values["Resources"].value)
        for resource in plan.resources:
            if not resource.startswith("/"):
                out.error(
                    values["Resources"].line,
                    f"resource {resource!r} is not an absolute path",
                    "give its absolute path, or write 'none'",
                    "resource",
                )
    return _parse_phases(doc.tail, code, out, plan)


def _parse_phases(
    lines: list[tuple[int, str]], code: str, out: Collector, plan: Plan
) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    phase: Phase | None = None
    for number, line in lines:
        if not line.strip():
            continue
        heading = _PHASE_RE.match(line)
        if heading:
            phase = Phase(int(heading.group("n")), heading.group("title"))
            if phase.number != len(plan.phases) + 1:
                out.error(
                    number,
                    f"phase {phase.number} follows phase {len(plan.phases)}",
                    f"number phases 1, 2, 3, ... in order (this is {len(plan.phases) + 1})",
                    "phase-order",
                )
            if not phase.title:
                out.error(number, f"phase {phase.number} has no title", "write '## N: Title'")
            plan.phases.append(phase)
            continue
        if line.startswith("#"):
            out.error(
                number,
                "a phase heading must read '## N: Title'",
                "rename the heading",
                "phase-heading",
            )
            continue
        entry = _ENTRY_RE.match(line)
        if not entry:
            out.warn(number, "line is not a task entry '* [OPEN] ID: Title'", "remove it")
            continue
        if phase is None:
            out.error(number, "task entry before the first phase heading", "add '## 1: Title'")
            continue
        task_id, raw = entry.group("id"), entry.group("status")
        status = Status(raw) if raw in Status.__members__ else None
        if status is None:
            out.error(
                number,
                f"status {raw!r} is not one of OPEN, BUSY, WAIT, DONE, FAIL",
                "use one of the five codes",
                "status",
            )
        if not _ID_RE.match(task_id) or not task_id.startswith(code + "-"):
            out.error(
                number,
                f"{task_id!r} is not a task id of plan {code}",
                f"use {code}-<N> with N from 1",
                "task-id",
            )
            continue
        if task_id in entries:
            out.error(
                number,
                f"{task_id} is listed twice (also line {entries[task_id].line})",
                "list each task once",
                "duplicate-id",
            )
            continue
        entries[task_id] = _Entry(phase.number, status, entry.group("title"), number)
        if phase.task_ids and id_key(phase.task_ids[-1]) > id_key(task_id):
            out.warn(
                number,
                f"{task_id} is listed after {phase.task_ids[-1]}",
                "sort the entries of a phase by id",
                "entry-order",
            )
        phase.task_ids.append(task_id)
    if not plan.phases:
        out.error(None, "the plan has no phases", "add '## 1: <phase title>' and task entries")
    for p in plan.phases:
        if not p.task_ids:
            out.warn(None, f"phase {p.number} ({p.title}) has no tasks", "add tasks or remove it")
    return entries


def parse_task_text(text: str, out: Collector, expected_id: str) -> Task | None:
    """Parse one task file into a Task; problems go to `out`."""
    doc = _split(text)
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
    _check_order(doc, TASK_FIELDS, out, "the task file")
    for f in doc.fields:
        _apply_field(task, f, out)
    _check_outcome(task, doc, out)
    return task


def _apply_field(task: Task, f: _Field, out: Collector) -> None:
    task.lines.setdefault(f.name.lower(), f.line)
    if f.name == "Status":
        if f.value in Status.__members__:
            task.status = Status(f.value)
        else:
            out.error(
                f.line,
                f"status {f.value!r} is not one of OPEN, BUSY, WAIT, DONE, FAIL",
                "use one of the five codes",
                "status",
            )
    elif f.name == "Updated":
        task.updated = f.value
        _check_timestamp(f.value, f.line, out, "Updated")
    elif f.name == "Dependencies":
        task.dependencies = _list(f.value)
        for dep in task.dependencies:
            if not _ID_RE.match(dep):
                out.error(
                    f.line,
                    f"dependency {dep!r} is not a task id",
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
    else:
        task.extra[f.name] = f.value
        out.warn(
            f.line,
            f"unknown field **{f.name}** is kept as is",
            "if it belongs to the description, do not start the line with a bold label",
        )


def _criteria(f: _Field, out: Collector) -> list[Criterion]:
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
                f.line + offset,
                "acceptance criteria must be a bullet list",
                "start each criterion with '- '",
                "criteria",
            )
    criteria = []
    for offset, parts in items:
        text = " ".join(parts)
        try:
            criteria.append(parse_criterion(text))
        except CriterionError as exc:
            out.error(f.line + offset, f"criterion command: {exc}", "fix the command")
            criteria.append(Criterion(text))
    return criteria


def _check_outcome(task: Task, doc: _Doc, out: Collector) -> None:
    lines = {f.name: f.line for f in doc.fields}
    names = [f.name for f in doc.fields if f.name in OUTCOME_FIELDS]
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


def load(listing: Listing, problems: list[Problem]) -> Plan:
    """Read a TaskTrack plan folder; every problem found is appended to `problems`."""
    root = listing.root
    names = overview_names(listing.names)
    overview_name = names[0]
    code = overview_name[: -len(OVERVIEW_SUFFIX)]
    overview_path = root / overview_name
    out = Collector(problems, overview_path)
    if len(names) > 1:
        out.error(
            None,
            f"more than one overview file ({', '.join(names)})",
            "keep one plan per folder",
            "overview",
        )
    if not CODE_RE.match(code):
        out.error(
            None,
            f"plan code {code!r} must be 3 to 5 letters A-Z",
            "rename the overview and task files with an uppercase code like FOO",
            "code",
        )
    plan = Plan(Dialect.TASKTRACK, root, "", [], [], code=code, overview_path=overview_path)
    specs = [n for n in listing.names if SPEC_RE.match(n)]
    if specs:
        plan.spec_path = root / specs[0]
    else:
        Collector(problems, root).warn(
            None,
            "no TaskTrack specification publication (TaskTrack-*.md) in the plan folder",
            "copy one in: taskhand init --dialect tasktrack --spec FILE",
            "spec",
        )
    text = read_text(overview_path, root, out)
    entries = _parse_overview(text, code, out, plan) if text is not None else {}
    plan.overview_text = text or ""
    plan.tasks = _load_tasks(listing, code, entries, plan, problems)
    plan.overview_statuses = {i: e.status for i, e in entries.items() if e.status}
    return plan


def _load_tasks(
    listing: Listing, code: str, entries: dict[str, _Entry], plan: Plan, problems: list[Problem]
) -> list[Task]:
    root = listing.root
    files: dict[str, str] = {}
    for name in listing.names:
        match = _TASK_FILE_RE.match(name)
        if not match or name.endswith(OVERVIEW_SUFFIX):
            continue
        if match.group("code") != code:
            Collector(problems, root / name).warn(
                None,
                f"file looks like a task of another plan than {code}",
                "move it to its own plan folder",
                "foreign-file",
            )
            continue
        task_id = f"{code}-{match.group('n')}"
        if not _ID_RE.match(task_id):
            Collector(problems, root / name).error(
                None,
                f"{name} is not a valid task file name",
                f"name it {code}-<N>.md, N from 1",
                "task-id",
            )
            continue
        files[task_id] = name
    counters: dict[int, str] = {}
    tasks = []
    for task_id in sorted(set(files) | set(entries), key=id_key):
        entry = entries.get(task_id)
        if task_id not in files and entry:
            Collector(problems, plan.overview_path or root).error(
                entry.line, f"{task_id} has no task file", f"create {task_id}.md", "missing-file"
            )
            continue
        path = root / files[task_id]
        out = Collector(problems, path)
        if entry is None:
            out.error(
                None,
                f"{task_id} is not listed in the overview",
                "add an entry under its phase in the overview, or delete the file",
                "extra-file",
            )
        text = read_text(path, root, out)
        task = parse_task_text(text, out, task_id) if text is not None else None
        if task is None:
            continue
        counter = id_key(task_id)[0]
        if counter in counters:
            out.error(
                task.line,
                f"{task_id} has the same counter as {counters[counter]}",
                "give every task a distinct number",
                "duplicate-id",
            )
        counters[counter] = task_id
        if entry:
            task.phase = entry.phase
            _compare(task, entry, out, plan)
        tasks.append(task)
    return tasks


def _compare(task: Task, entry: _Entry, out: Collector, plan: Plan) -> None:
    where = f"{(plan.overview_path or plan.root).name}:{entry.line}"
    if entry.title != task.title:
        out.error(
            task.line,
            f"title differs from the overview ({where} says {entry.title!r})",
            "use the same title in both files",
            "title-mismatch",
        )
    if entry.status is None or entry.status is task.status:
        return
    if entry.status is Status.BUSY:
        out.warn(
            task.line,
            f"the overview says BUSY but the task file says {task.status}; a run was interrupted",
            "the next run recovers it (taskhand run)",
            "recovery",
        )
    else:
        out.error(
            task.line,
            f"status {task.status} differs from the overview ({where} says {entry.status})",
            "set the same status in both files",
            "status-mismatch",
        )
