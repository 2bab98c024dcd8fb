"""Writing TaskTrack files: canonical text for new files, and minimal edits for status steps.

`render_*` gives the canonical form (reading it back and rendering again gives the same
bytes). The edit functions change only the bytes a procedure step must change, so a
person's formatting of every other line survives.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from taskhand.plan.formats import prose
from taskhand.plan.model import Plan, Status, Task

NONE = "none"


def now() -> str:
    """The current time in the form TaskTrack files use (ISO 8601, UTC, seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render_overview(plan: Plan) -> str:
    """The canonical overview file for `plan`."""
    by_id = plan.by_id()
    resources = ", ".join(plan.resources) if plan.resources else NONE
    parts = [
        f"# {plan.code} - {prose.one_line(plan.title)}",
        f"**Objective**: {prose.escape_tasktrack(plan.objective, overview=True)}",
        f"**Created**: {plan.created or now()}",
        f"**Resources**: {resources}",
        *(f"**{n}**: {prose.escape_tasktrack(v, overview=True)}" for n, v in plan.extra.items()),
    ]
    for phase in plan.phases:
        entries = "\n".join(
            f"* [{by_id[i].status}] {i}: {prose.one_line(by_id[i].title)}" for i in phase.task_ids
        )
        heading = f"## {phase.number}: {prose.one_line(phase.title)}"
        parts.append(f"{heading}\n\n{entries}" if entries else heading)
    return "\n\n".join(parts) + "\n"


def render_task(task: Task) -> str:
    """The canonical task file for `task`: the text of its fields as prose (prose.py), so none
    of their lines starts another field; the heading and each criterion on one line."""
    criteria = "\n".join(f"- {prose.one_line(c.text)}" for c in task.criteria)
    dependencies = ", ".join(task.dependencies) if task.dependencies else NONE
    parts = [
        f"# {task.id}: {prose.one_line(task.title)}",
        f"**Status**: {task.status}",
        f"**Updated**: {task.updated or now()}",
        f"**Dependencies**: {prose.one_line(dependencies)}",
        f"**Description**: {prose.escape_tasktrack(task.description)}",
        f"**Acceptance**:\n\n{criteria}" if criteria else f"**Acceptance**: {NONE}",
    ]
    # taskhand's extensions (tasktrack_task.EXTENSIONS), then fields it keeps as they were
    extensions = {"Kind": task.kind, "Pipeline": task.pipeline}
    parts += [f"**{name}**: {value}" for name, value in extensions.items() if value]
    fields = list(task.extra.items())
    for exchange in task.exchanges:
        fields.append(("Request", exchange.request))
        if exchange.response is not None:
            fields.append(("Response", exchange.response))
    fields += [("Resolution", task.resolution)] if task.resolution is not None else []
    fields += [("Failure", task.failure)] if task.failure is not None else []
    parts += [f"**{name}**: {prose.escape_tasktrack(value)}" for name, value in fields]
    return "\n\n".join(parts) + "\n"


def set_overview_status(text: str, task_id: str, status: Status) -> str:
    """Change one entry's status code in an overview, leaving every other byte alone."""
    pattern = re.compile(rf"^([*-]\s+\[)[^\]]*(\]\s+{re.escape(task_id)}\s*:)", re.MULTILINE)
    new, count = pattern.subn(rf"\g<1>{status}\g<2>", text, count=1)
    if count != 1:
        raise ValueError(f"{task_id} has no entry in the overview")
    return new


def _replacement(value: str) -> Callable[[re.Match[str]], str]:
    return lambda match: f"{match.group(1)} {value}"


def update_task_text(
    text: str,
    *,
    status: Status | None = None,
    updated: str | None = None,
    append: tuple[tuple[str, str], ...] = (),
) -> str:
    """Set Status/Updated and append fields (Request, Resolution, Failure) at the end."""
    for name, value in (("Status", status), ("Updated", updated)):
        if value is None:
            continue
        pattern = re.compile(rf"^(\*\*{name}\*\*:)[^\r\n]*", re.MULTILINE)
        text, count = pattern.subn(_replacement(value), text, count=1)
        if count != 1:
            raise ValueError(f"the task file has no **{name}** field")
    newline = "\r\n" if "\r\n" in text else "\n"
    for name, value in append:
        value = prose.escape_tasktrack(value).replace("\n", newline)
        text = text.rstrip("\r\n") + f"{newline * 2}**{name}**: {value}{newline}"
    return text


_FIELD_START = re.compile(r"^\*\*[A-Za-z][A-Za-z ]*\*\*:")


def _field_spans(lines: list[str], name: str) -> list[tuple[int, int]]:
    """Where each `**name**:` field runs: its first line to the next field's (or the end)."""
    starts = [i for i, line in enumerate(lines) if _FIELD_START.match(line)]
    ends = [*starts[1:], len(lines)]
    return [
        (a, b) for a, b in zip(starts, ends, strict=True) if lines[a].startswith(f"**{name}**:")
    ]


def drop_field(text: str, name: str) -> str:
    """Remove every `**name**` field with its value, leaving every other byte alone."""
    lines = text.splitlines(keepends=True)
    for start, end in reversed(_field_spans(lines, name)):
        del lines[start:end]
    kept = "".join(lines)
    if kept.endswith(("\n\n", "\r\n\r\n")):  # the dropped field was the last one
        newline = "\r\n" if "\r\n" in text else "\n"
        kept = kept.rstrip("\r\n") + newline
    return kept


def add_response(text: str, response: str) -> str:
    """Write a `**Response**` directly below the latest Request, as the spec's human
    feedback workflow says; a ValueError when there is no Request waiting for one."""
    lines = text.splitlines(keepends=True)
    requests = _field_spans(lines, "Request")
    if not requests:
        raise ValueError("the task file has no **Request** to respond to")
    end = requests[-1][1]
    if end < len(lines) and lines[end].startswith("**Response**:"):
        raise ValueError("the latest **Request** already has a **Response**")
    newline = "\r\n" if "\r\n" in text else "\n"
    value = prose.escape_tasktrack(response).replace("\n", newline)
    field = f"**Response**: {value}{newline}"
    if end == len(lines):
        return text.rstrip("\r\n") + newline * 2 + field
    return "".join(lines[:end]) + field + newline + "".join(lines[end:])


def read_raw(path: Path) -> str:
    """A plan file's text with its line endings kept, for an edit that keeps them too."""
    return path.read_bytes().decode("utf-8")


def add_overview_entry(text: str, phase: int, task_id: str, title: str, status: Status) -> str:
    """The overview with a new entry at the end of phase `phase`'s list, every other byte
    left alone; a ValueError when the overview has no such phase."""
    lines = text.splitlines(keepends=True)
    heading = re.compile(rf"^##\s+{phase}\s*:")
    start = next((i for i, line in enumerate(lines) if heading.match(line)), None)
    if start is None:
        raise ValueError(f"the overview has no phase {phase}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    last = max(i for i in range(start, end) if lines[i].strip())
    newline = "\r\n" if "\r\n" in text else "\n"
    entry = f"* [{status}] {task_id}: {title}{newline}"
    if last == start:  # a phase without entries yet: a blank line after its heading
        entry = newline + entry
    if not lines[last].endswith(("\n", "\r")):
        lines[last] += newline
    return "".join(lines[: last + 1]) + entry + "".join(lines[last + 1 :])
