"""The Markdown tasks dialect: `overview.md` plus one `T-NNN-slug.md` per task.

Parsing follows Tilth's loader rule for rule, so every folder Tilth accepts yields the
same ids, titles, descriptions and criteria here, and every folder it rejects is rejected;
but a description line escaped as prose (prose.py) reads without its backslash, which Tilth
keeps. Our extensions are optional frontmatter keys that Tilth ignores. Files are only read.
"""

from __future__ import annotations

import fnmatch
import json
import re
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from taskhand.plan.formats import prose
from taskhand.plan.formats.criteria import CriterionError, parse_criterion, parse_duration
from taskhand.plan.formats.files import Listing, read_text
from taskhand.plan.model import Criterion, Dialect, Plan, Status, Task, id_key, phases_from_tasks
from taskhand.plan.problems import NO_TASKS, Collector, Problem

OVERVIEW = "overview.md"
TASK_GLOB = "T-*.md"
KINDS = ("logic", "ui", "vague")
EXTENSION_KEYS = (
    "phase",
    "depends",
    "paths",
    "kind",
    "agent",
    "model",
    "timeout",
    "max_attempts",
    "pipeline",
    "pr",
)
PIPELINES = ("default", "full")
KNOWN_KEYS = ("id", "title", *EXTENSION_KEYS)

ID_RE = re.compile(r"^T-\d+$")  # Tilth's own pattern, \d and all
_HEADING_RE = re.compile(r"^##\s+(.*\S)\s*$")
_AC_HEADING = "acceptance criteria"
# The sections the harness writes as a task goes through the full lifecycle.
DOCUMENTS = ("spec", "plan", "questions", "prototype", "log")
# What `taskhand convert` carries over from a TaskTrack task that this dialect has no field for
# (its status, requests and outcome): a section of its own, kept apart from the description.
RECORD = "TaskTrack record"
_APART = {name: name.capitalize() for name in DOCUMENTS} | {RECORD.lower(): RECORD}
_TEMPLATE_HINT = "start the file with a block: ---, id: T-001, title: <title>, ---"


def is_markdown_plan(names: list[str]) -> bool:
    return OVERVIEW in names or any(fnmatch.fnmatchcase(n, TASK_GLOB) for n in names)


def load(listing: Listing, problems: list[Problem]) -> Plan:
    """Read a Markdown plan folder; every problem found is appended to `problems`."""
    root = listing.root
    overview_path = root / OVERVIEW
    out = Collector(problems, overview_path)
    overview_text = ""
    if OVERVIEW not in listing.names:
        out.error(None, "overview.md is missing", "create it: taskhand init --dialect markdown")
    else:
        text = read_text(overview_path, root, out)
        if text is not None and not text.strip():
            out.error(1, "overview.md is empty", "write the goal, context and scope boundaries")
        overview_text = text or ""

    task_names = [n for n in listing.names if fnmatch.fnmatchcase(n, TASK_GLOB)]
    if not task_names:
        Collector(problems, root).error(
            None,
            "no task files (T-*.md) in the plan folder",
            "add T-001-<slug>.md, or let taskhand new write it",
            NO_TASKS,
        )
    tasks = [t for t in (load_task(root / n, root, problems) for n in task_names) if t]
    tasks.sort(key=lambda t: id_key(t.id))
    _report_duplicates(tasks, problems)
    return Plan(
        dialect=Dialect.MARKDOWN,
        root=root,
        title=_title(overview_text) or root.name,
        tasks=tasks,
        phases=phases_from_tasks(tasks),
        overview_path=overview_path,
        overview_text=overview_text.strip(),
    )


def load_task(path: Path, root: Path, problems: list[Problem]) -> Task | None:
    out = Collector(problems, path)
    text = read_text(path, root, out)
    return None if text is None else parse_task(text, out)


def parse_task(text: str, out: Collector) -> Task | None:
    """Parse one task file exactly as Tilth does, plus our extension keys."""
    stripped = text.lstrip("\ufeff")
    lines = stripped.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "---"), None)
    if not stripped.lstrip().startswith("---") or start is None:
        out.error(1, "missing frontmatter", _TEMPLATE_HINT, "frontmatter")
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        out.error(start + 1, "frontmatter block is not closed", "add a '---' line after it")
        return None
    fields: dict[str, str] = {}
    key_lines: dict[str, int] = {}
    for i in range(start + 1, end):
        if lines[i].strip() and ":" in lines[i]:
            key, _, value = lines[i].partition(":")
            fields[key.strip().lower()] = value.strip()
            key_lines[key.strip().lower()] = i + 1

    ok = True
    task_id = fields.get("id", "")
    if not task_id:
        out.error(start + 1, "frontmatter has no id", "add a line like 'id: T-001'", "id")
        ok = False
    elif not ID_RE.match(task_id):
        out.error(key_lines["id"], f"id {task_id!r} is not of the form T-<digits>", "use T-001")
        ok = False
    title = fields.get("title", "")
    if not title:
        out.error(start + 1, "frontmatter has no title", "add a line 'title: <what to do>'")
        ok = False

    segments = _split_sections(lines, end + 1)
    # Text a writer put in as prose reads back as it was (prose.py): sections are unescaped.
    documents = {s.heading.lower(): prose.unescape(s.text) for s in segments if _apart(s)}
    segments = [s._replace(text=prose.unescape(s.text)) for s in segments if not _apart(s)]
    non_ac = [(s.heading, s.text) for s in segments if s.heading.lower() != _AC_HEADING and s.text]
    if not non_ac:
        out.error(end + 2, "no description", "add a '## Description' section the agent can act on")
        ok = False
    ac = next((s for s in segments if s.heading.lower() == _AC_HEADING), None)
    criteria = _criteria(ac, out) if ac else []
    if not ok:
        return None
    if len(non_ac) == 1 and non_ac[0][0].lower() == "description":
        description = non_ac[0][1]
    else:
        description = "\n\n".join(body if not h else f"## {h}\n{body}" for h, body in non_ac)
    task = Task(task_id, title, description, criteria, source=out.path, line=start + 1)
    task.documents = documents
    task.lines = {k: key_lines[k] for k in ("paths", "agent") if k in key_lines}
    task.lines["dependencies"] = key_lines.get("depends", start + 1)
    task.lines["criteria"] = ac.first_line - 1 if ac else end + 2
    _apply_extensions(task, fields, key_lines, out)
    return task


def _apart(section: _Section) -> bool:
    """A section kept apart from the description: a lifecycle document, convert's record."""
    return section.heading.lower() in _APART


class _Section(NamedTuple):
    heading: str  # "" for prose before the first heading
    text: str  # the body, stripped as Tilth strips it
    first_line: int
    lines: list[str]


def _split_sections(lines: list[str], first: int) -> list[_Section]:
    """The `## ` sections of the body starting at index `first`, in document order."""
    raw: list[tuple[str, int, list[str]]] = [("", first + 1, [])]
    for number, ln in enumerate(lines[first:], start=first + 1):
        match = _HEADING_RE.match(ln) if ln.startswith("##") else None
        if match:
            raw.append((match.group(1).strip(), number + 1, []))
        else:
            raw[-1][2].append(ln)
    return [_Section(h, "\n".join(body).strip(), n, body) for h, n, body in raw]


def _criteria(section: _Section, out: Collector) -> list[Criterion]:
    criteria = []
    for number, ln in enumerate(section.lines, start=section.first_line):
        s = ln.strip()
        if s[:2] in ("- ", "* ") and s[2:].strip():
            try:
                criteria.append(parse_criterion(s[2:].strip(), number))
            except CriterionError as exc:
                out.error(number, f"criterion command: {exc}", "fix the command in backticks")
                criteria.append(Criterion(s[2:].strip(), line=number))
    return criteria


def _apply_extensions(
    task: Task, fields: dict[str, str], key_lines: dict[str, int], out: Collector
) -> None:
    for key, value in fields.items():
        line = key_lines[key]
        try:
            _apply_key(task, key, value)
        except ValueError as exc:
            out.error(line, f"{key}: {exc}", f"see the '{key}' key in docs/plans.md", "extension")
        except KeyError:
            task.extra[key] = value
            import difflib  # only for a key we do not know, to suggest one we do

            hint = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            if key == "status":
                out.warn(
                    line,
                    "status in frontmatter is ignored",
                    "drop it; run state is kept by taskhand, not in the plan",
                    "unknown-key",
                )
            else:
                fix = f"did you mean '{hint[0]}'?" if hint else "remove it if it is a typo"
                out.warn(line, f"unknown key {key!r} is kept but has no effect", fix, "unknown-key")


def _apply_key(task: Task, key: str, value: str) -> None:
    if key in ("id", "title"):
        return
    if key == "phase":
        task.phase = _positive_int(value)
    elif key == "depends":
        task.dependencies = _split_list(value)
        bad = [d for d in task.dependencies if not ID_RE.match(d)]
        if bad:
            raise ValueError(f"{', '.join(bad)} is not a task id like T-001")
    elif key == "paths":
        task.paths = _split_list(value)
    elif key == "kind":
        if value not in KINDS:
            raise ValueError(f"{value!r} is not one of {', '.join(KINDS)}")
        task.kind = value
    elif key in ("agent", "model"):
        if not value:
            raise ValueError("is empty")
        setattr(task, key, value)
    elif key == "timeout":
        try:
            task.timeout_seconds = parse_duration(value)
        except CriterionError as exc:
            raise ValueError(str(exc)) from None
    elif key == "max_attempts":
        task.max_attempts = _positive_int(value)
    elif key == "pipeline":
        if value not in PIPELINES:
            raise ValueError(f"{value!r} is not one of {', '.join(PIPELINES)}")
        task.pipeline = value
    elif key == "pr":
        if not value.startswith(("https://", "http://")):
            raise ValueError(f"{value!r} is not the address of a pull request")
        task.pr = value
    else:
        raise KeyError(key)


def _positive_int(value: str) -> int:
    if not value.isascii() or not value.isdigit() or len(value) > 6 or int(value) < 1:
        raise ValueError(f"{value!r} is not a whole number from 1 to 999999")
    return int(value)


# A task's `paths` are one line, split at commas and spaces: a path holding either is refused,
# by every command that would write one, in these words.
PATH_SEPARATOR = (
    "holds a comma or a space, which a Markdown task's paths list (split at both) cannot"
)


def _split_list(value: str) -> list[str]:
    items = [v.strip() for v in value.replace(",", " ").split()]
    return [] if items in ([], ["none"]) else items


def _report_duplicates(tasks: list[Task], problems: list[Problem]) -> None:
    first: dict[str, Task] = {}
    for task in tasks:
        if task.id in first and task.source:
            other = first[task.id].source
            Collector(problems, task.source).error(
                task.line,
                f"duplicate id {task.id} (also in {other.name if other else '?'})",
                "give each task file its own id",
                "duplicate-id",
            )
        first.setdefault(task.id, task)


def _title(overview: str) -> str:
    for line in overview.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def render_task(task: Task) -> str:
    """A new task file for `task`; Tilth reads it back to the same fields. The description and
    the documents are written as prose (prose.py), so none of their lines reads as a section;
    each value of the front matter, and each criterion, on one line."""
    head = [f"id: {task.id}", f"title: {task.title}"]
    if task.phase != 1:
        head.append(f"phase: {task.phase}")
    if task.dependencies:
        head.append(f"depends: {', '.join(task.dependencies)}")
    if task.paths:
        head.append(f"paths: {', '.join(task.paths)}")
    for key in ("kind", "agent", "model", "pr"):
        if getattr(task, key):
            head.append(f"{key}: {getattr(task, key)}")
    if task.timeout_seconds is not None:
        head.append(f"timeout: {task.timeout_seconds:g}s")
    if task.max_attempts is not None:
        head.append(f"max_attempts: {task.max_attempts}")
    head += [f"{k}: {v}" for k, v in task.extra.items()]
    body = f"## Description\n{prose.escape(task.description)}"
    criteria = "".join(f"- {prose.one_line(c.text)}\n" for c in task.criteria)
    documents = "".join(
        f"\n## {_APART.get(name, name)}\n\n{prose.escape(text)}\n"
        for name, text in task.documents.items()
    )
    front = "\n".join(prose.one_line(line) for line in head)
    return f"---\n{front}\n---\n\n{body}\n\n## Acceptance criteria\n{criteria}{documents}"


class TilthStatus(StrEnum):
    """A status in a task-status.json: Tilth's words, and waiting, which taskhand's own export
    adds for a task that asked."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    WAITING = "waiting"


_OVERLAY: dict[str, Status] = {
    TilthStatus.PENDING: Status.OPEN,
    TilthStatus.DONE: Status.DONE,
    TilthStatus.FAILED: Status.FAIL,
    TilthStatus.WAITING: Status.WAIT,
}


def read_status_overlay(path: Path) -> dict[str, Status]:
    """Statuses from a task-status.json ({"T-001": "done", ...}): Tilth's, or a run's export."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"{path}: cannot read a status map: {exc} (fix: give a JSON "
            'object like {"T-001": "done"})'
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: not a JSON object (fix: write {{"T-001": "done"}})')
    statuses = {}
    for task_id, value in data.items():
        code = _OVERLAY.get(str(value).lower()) or Status.__members__.get(str(value).upper())
        if code is None:
            raise ValueError(
                f"{path}: {task_id} has status {value!r} (fix: use pending, done, "
                "failed, waiting or a TaskTrack code)"
            )
        statuses[str(task_id)] = code
    return statuses
