"""What one dialect holds and the other has no field for, carried where no text a person or an
agent wrote can forge it, for the reverse conversion to read back: a TaskTrack task's status,
timestamps, requests and outcome in a Markdown task's `## TaskTrack record` section (kept
apart from its description); a Markdown task's settings (paths, agent, ...) in a TaskTrack
task's `**Markdown settings**` field; the plan's code, creation time, resources and phase
titles in the Markdown overview's `## TaskTrack plan` section, the overview's prose escaped
so that no line of it is that section (plan/formats/prose.py).
"""

from __future__ import annotations

import re

from taskhand.plan.formats import markdown, prose, tasktrack_task

RECORD = markdown.RECORD  # a Markdown task's section, kept apart from its description
PLAN_RECORD = "TaskTrack plan"  # the Markdown overview's section
SETTINGS = tasktrack_task.CARRIED  # a TaskTrack task's field

_HEADING = re.compile(r"^(#{2,6})(\s+\S.*)$")
_ITEM = re.compile(r"^- (?P<name>[A-Za-z][\w -]*?):(?: (?P<value>.*))?$")
_PLAN_MARK = re.compile(rf"##\s+{PLAN_RECORD}\s*$", re.IGNORECASE)  # what overview prose escapes

Items = list[tuple[str, str]]


def render_items(items: Items) -> str:
    """`- Name: value` lines; a value's further lines indented by two spaces."""
    lines = []
    for name, value in items:
        first, *rest = value.split("\n")
        lines.append(f"- {name}: {first}".rstrip())
        lines += [f"  {line}" for line in rest]
    return "\n".join(lines)


def parse_items(text: str) -> Items:
    """The `- Name: value` items of `render_items`' text, in order."""
    items: Items = []
    for line in text.split("\n"):
        match = _ITEM.match(line)
        if match:
            items.append((match.group("name"), match.group("value") or ""))
        elif items:
            name, value = items[-1]
            items[-1] = (name, f"{value}\n{line.removeprefix('  ')}")
    return [(name, value.rstrip()) for name, value in items]


def sections(text: str) -> list[tuple[str, str]]:
    """A Markdown text's `## ` sections as (heading, body), prose before the first as ("", ..)."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in text.split("\n"):
        match = re.match(r"^##\s+(.*\S)\s*$", line)
        if match:
            parts.append((match.group(1), []))
        else:
            parts[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in parts if h or "\n".join(body).strip()]


def join_sections(parts: list[tuple[str, str]]) -> str:
    """Sections back into text, as the Markdown reader joins a description: a sole
    `## Description` (or prose) bare, any other with its headings."""
    parts = [(h, body) for h, body in parts if body]
    if len(parts) == 1 and parts[0][0].lower() in ("", "description"):
        return parts[0][1]
    return "\n\n".join(body if not h else f"## {h}\n{body}" for h, body in parts)


def take_section(text: str, heading: str) -> tuple[str, Items]:
    """`text` without its `## heading` section, and that section's items."""
    parts = sections(text)
    found = [body for h, body in parts if h.lower() == heading.lower()]
    if not found:
        return text, []
    rest = join_sections([(h, b) for h, b in parts if h.lower() != heading.lower()])
    return rest, parse_items(found[0])


def overview_prose(text: str) -> str:
    """A Markdown overview's prose as written: no line of it reads as the `## TaskTrack plan`
    section (the overview's one other line a reader takes as structure is its first, the title)."""
    return prose.escape(text, _PLAN_MARK)


def overview_text(text: str) -> str:
    """What `overview_prose` wrote, as it was."""
    return prose.unescape(text, _PLAN_MARK)


def deepen(text: str, by: int) -> str:
    """Headings of level 2 and more moved `by` levels: a Markdown overview's `## Goal` is
    `### Goal` in a TaskTrack objective, where `## ` would start the phases."""

    def move(match: re.Match[str]) -> str:
        level = max(2, min(6, len(match.group(1)) + by))
        return "#" * level + match.group(2)

    return "\n".join(_HEADING.sub(move, line) for line in text.split("\n"))
