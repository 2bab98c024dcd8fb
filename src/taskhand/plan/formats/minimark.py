"""TaskTrack's file shape: a heading line, then `**Field**: value` blocks.

Both TaskTrack files are MiniMark documents of this shape; this module splits them into
fields with line numbers and checks the parts every field shares (order, timestamps, lists).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from taskhand.plan.formats.tasktrack_edit import NONE, now
from taskhand.plan.problems import Collector

FIELD_RE = re.compile(r"^\*\*(?P<name>[A-Za-z][A-Za-z ]*)\*\*:(?P<value>.*)$")
_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$")


@dataclass
class Field:
    name: str
    value: str
    line: int
    # The line the value starts on: a value may begin on a line below its label.
    value_line: int = 0


@dataclass
class Doc:
    """A TaskTrack file split into its heading line and `**Field**: value` blocks."""

    heading: str = ""
    heading_line: int = 0
    fields: list[Field] = field(default_factory=list)
    tail: list[tuple[int, str]] = field(default_factory=list)  # lines after the fields


def split_fields(text: str, stop: re.Pattern[str] | None = None) -> Doc:
    """Split into heading and fields; from the first `stop` line on, lines go to the tail."""
    doc = Doc()
    blocks: list[list[str]] = []
    stopped = False
    for number, line in enumerate(text.split("\n"), start=1):
        if not doc.heading and line.strip():
            doc.heading, doc.heading_line = line.lstrip("\ufeff"), number
            continue
        stopped = stopped or bool(stop and stop.match(line))
        match = None if stopped else FIELD_RE.match(line)
        if match:
            blocks.append([match.group("value")])
            doc.fields.append(Field(match.group("name").strip(), "", number))
        elif blocks and not stopped:
            blocks[-1].append(line)
        elif line.strip() or stopped:
            doc.tail.append((number, line))
    for f, block in zip(doc.fields, blocks, strict=True):
        joined = "\n".join(block)
        f.value = joined.strip()
        f.value_line = f.line + joined[: len(joined) - len(joined.lstrip())].count("\n")
    return doc


def check_timestamp(value: str, line: int, out: Collector, what: str) -> None:
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


def split_list(value: str) -> list[str]:
    return [] if value.strip().lower() == NONE else [v.strip() for v in value.split(",")]


def check_order(doc: Doc, expected: tuple[str, ...], out: Collector, what: str) -> None:
    names = [f.name for f in doc.fields if f.name in expected]
    if tuple(names) == expected:  # each field once, in order: the file as it should be
        return
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
