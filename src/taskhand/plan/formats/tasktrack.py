"""The TaskTrack dialect: `[CODE]-TaskTrack.md`, one `[CODE]-[N].md` per task, the spec beside.

Reading builds the plan model and reports every deviation from the spec in one pass;
`tasktrack_edit` writes the files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskhand.plan.formats import prose
from taskhand.plan.formats.files import Listing, read_text
from taskhand.plan.formats.minimark import check_order, check_timestamp, split_fields, split_list
from taskhand.plan.formats.tasktrack_task import (
    CARRIED,
    ID_RE,
    STATUS_CODES,
    id_problem,
    parse_task_text,
)
from taskhand.plan.model import Dialect, Phase, Plan, Status, Task, counter, id_key
from taskhand.plan.problems import NO_TASKS, Collector, Problem

OVERVIEW_SUFFIX = "-TaskTrack.md"
SPEC_RE = re.compile(r"^TaskTrack-.+\.md$")
CODE_RE = re.compile(r"^[A-Z]{3,5}$")
OVERVIEW_FIELDS = ("Objective", "Created", "Resources")
# A plan's Resources are comma-separated: a source whose path holds a comma is refused, by
# every command that would write one, in these words.
RESOURCE_COMMA = "its path holds a comma, which TaskTrack's comma-separated Resources cannot"
RESOURCE_COMMA_FIX = "rename the file or its folder, or pass a copy without one"

_TASK_FILE_RE = re.compile(r"^(?P<code>[A-Za-z]+)-(?P<n>\d+)\.md$")
# A title ends at its last non-space: `(?:.*\S)?` rather than `.*?` before `\s*$`, which would
# try `\s*$` again after every character of it (a big overview has thousands of titles).
_PLAN_HEAD_RE = re.compile(r"^#\s+(?P<code>\S+)\s+-\s+(?P<title>(?:.*\S)?)\s*$")
_PHASE_RE = re.compile(r"^##\s+(?P<n>[0-9]{1,6})\s*:\s*(?P<title>(?:.*\S)?)\s*$")
_ENTRY_RE = re.compile(
    r"^[*-]\s+\[(?P<status>[^\]]*)\]\s+(?P<id>[^:\s]+)\s*:\s*(?P<title>(?:.*\S)?)\s*$"
)


def code_of(overview_name: str) -> str:
    return overview_name.removesuffix(OVERVIEW_SUFFIX)


def overview_names(names: list[str]) -> list[str]:
    return [n for n in names if n.endswith(OVERVIEW_SUFFIX) and not n.startswith("TaskTrack-")]


@dataclass
class _Entry:
    phase: int
    status: Status | None
    title: str
    line: int


def _parse_overview(text: str, code: str, out: Collector, plan: Plan) -> dict[str, _Entry]:
    doc = split_fields(text, stop=re.compile(r"^##\s"))
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
    check_order(doc, OVERVIEW_FIELDS, out, "the overview")
    values = {f.name: f for f in doc.fields}
    for f in doc.fields:
        if f.name in OVERVIEW_FIELDS:
            continue
        plan.extra[f.name] = prose.unescape(f.value)
        if f.name != CARRIED:
            out.warn(f.line, f"unknown field **{f.name}** is kept as is", "remove it if unintended")
    if "Objective" in values:
        plan.objective = prose.unescape(values["Objective"].value)
        if not plan.objective:
            out.error(values["Objective"].line, "the objective is empty", "describe the goal")
    if "Created" in values:
        plan.created = values["Created"].value
        check_timestamp(plan.created, values["Created"].line, out, "Created")
    if "Resources" in values:
        plan.resources = split_list(values["Resources"].value)
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
        heading = _PHASE_RE.match(line) if line.startswith("##") else None
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
        status = STATUS_CODES.get(raw)
        if status is None:
            out.error(
                number,
                f"status {raw!r} is not one of OPEN, BUSY, WAIT, DONE, FAIL",
                "use one of the five codes",
                "status",
            )
        if not ID_RE.match(task_id) or not task_id.startswith(code + "-"):
            out.error(
                number,
                f"{task_id!r} is not a task id of plan {code}"
                + (f": {id_problem(task_id)}" if id_problem(task_id) else ""),
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
        out.error(
            None,
            "the plan has no phases",
            "add '## 1: <phase title>' and task entries, or let taskhand new write the first",
            NO_TASKS,
        )
    for p in plan.phases:
        if not p.task_ids:
            out.warn(None, f"phase {p.number} ({p.title}) has no tasks", "add tasks or remove it")
    return entries


def load(listing: Listing, problems: list[Problem]) -> Plan:
    """Read a TaskTrack plan folder; every problem found is appended to `problems`."""
    root = listing.root
    names = sorted(overview_names(listing.names), key=lambda n: not CODE_RE.match(code_of(n)))
    overview_name = names[0]
    code = code_of(overview_name)
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
        if not ID_RE.match(task_id):
            Collector(problems, root / name).error(
                None,
                f"{name} is not a valid task file name",
                f"name it {code}-<N>.md, N from 1",
                "task-id",
            )
            continue
        files[task_id] = name
    counters: dict[str, str] = {}
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
        number = counter(task_id)
        if number in counters:
            out.error(
                task.line,
                f"{task_id} has the same counter as {counters[number]}",
                "give every task a distinct number",
                "duplicate-id",
            )
        counters[number] = task_id
        if entry:
            task.phase = entry.phase
            _compare(task, entry, out, plan)
        tasks.append(task)
    return tasks


def _compare(task: Task, entry: _Entry, out: Collector, plan: Plan) -> None:
    if entry.title == task.title and entry.status in (None, task.status):
        return  # the files agree, as in all but a few tasks of a plan
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
