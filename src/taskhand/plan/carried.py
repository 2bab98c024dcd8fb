"""What one dialect holds and the other has no field for, carried where no text a person or an
agent wrote can forge it, for the reverse conversion to read back: a TaskTrack task's status,
timestamps, requests and outcome in a Markdown task's `## TaskTrack record` section (kept
apart from its description); a Markdown task's settings (paths, agent, ...) in a TaskTrack
task's `**Markdown settings**` field (and a Markdown overview's, its TaskTrack overview's);
the plan's code, creation time, resources, phase titles and unknown fields in the Markdown
overview's `## TaskTrack plan` section, the overview's prose escaped so that no line of it
is that section (plan/formats/prose.py). Each way here has a way back that gives the same
text, so a plan converted there and back is the same files.
"""

from __future__ import annotations

import re

from taskhand.plan.formats import markdown, prose, tasktrack_task

RECORD = markdown.RECORD  # a Markdown task's section, kept apart from its description
PLAN_RECORD = "TaskTrack plan"  # the Markdown overview's section
SETTINGS = tasktrack_task.CARRIED  # a TaskTrack task's field

_MARK = re.compile(r"^(\\*)(#+)(?=\s|$)")  # a heading's marks, and backslashes before them
_SECTION = re.compile(r"##\s")
_ITEM = re.compile(r"^- (?P<name>[A-Za-z][\w -]*?):(?: (?P<value>.*))?$")
_PLAN_MARK = re.compile(rf"##\s+{PLAN_RECORD}\s*$", re.IGNORECASE)  # what overview prose escapes

Items = list[tuple[str, str]]


def render_items(items: Items) -> str:
    """`- Name: value` lines; a value's further lines indented by two spaces."""
    lines = []
    for name, value in items:
        first, *rest = value.split("\n")
        lines.append(f"- {name}:" + (f" {first}" if first else ""))
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


def take_section(text: str, heading: str) -> tuple[str, Items]:
    """`text` without its `## heading` section, every other byte as it was, and that
    section's items: the section runs from its heading to the next `## ` line."""
    lines = text.split("\n")
    mark = re.compile(rf"##\s+{re.escape(heading)}\s*$", re.IGNORECASE)
    start = next((i for i, line in enumerate(lines) if mark.match(line)), None)
    if start is None:
        return text, []
    ends = (i for i in range(start + 1, len(lines)) if _SECTION.match(lines[i]))
    end = next(ends, len(lines))
    rest = "\n".join(lines[:start] + lines[end:])
    return rest, parse_items("\n".join(lines[start + 1 : end]))


def overview_prose(text: str) -> str:
    """A Markdown overview's prose as written: no line of it reads as the `## TaskTrack plan`
    section (the overview's one other line a reader takes as structure is its first, the title)."""
    return prose.escape(text, _PLAN_MARK)


def overview_text(text: str) -> str:
    """What `overview_prose` wrote, as it was."""
    return prose.unescape(text, _PLAN_MARK)


def deepen(text: str) -> str:
    """A Markdown overview's prose as a TaskTrack objective: each heading one level deeper
    (its `## Goal` is `### Goal` there, where `## ` would start the phases). The one line
    that may read `## ` in an objective (escaped in its file) came back from `shallow`
    with a backslash more, which goes again; `shallow(deepen(t)) == t` for every text."""
    return "\n".join(_MARK.sub(_deeper, line, count=1) for line in text.split("\n"))


def shallow(text: str) -> str:
    """A TaskTrack objective as a Markdown overview's prose: each heading of level 3 and
    more one level up; a `## ` line gets a backslash more, so `deepen` can tell it apart
    from the `### ` line that went up; `deepen(shallow(t)) == t` for every text."""
    return "\n".join(_MARK.sub(_shallower, line, count=1) for line in text.split("\n"))


def _deeper(match: re.Match[str]) -> str:
    slashes, marks = match.groups()
    if slashes and marks == "##":
        return slashes[1:] + marks
    return slashes + marks + ("#" if not slashes and len(marks) >= 2 else "")


def _shallower(match: re.Match[str]) -> str:
    slashes, marks = match.groups()
    if marks == "##":
        return "\\" + slashes + marks
    return slashes + (marks[1:] if not slashes and len(marks) >= 3 else marks)
