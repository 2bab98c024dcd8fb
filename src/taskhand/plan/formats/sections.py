"""Edits of one `## ` section of a Markdown task file, leaving every other byte as it was: the
harness writes the lifecycle's sections (Spec, Plan, Questions) this way, so a person's own
text around them is never touched.
"""

from __future__ import annotations

import re

from taskhand.plan.formats import prose

_HEADING = re.compile(r"^##\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def set_section(text: str, heading: str, body: str) -> str:
    """`text` with the body of its `## heading` section (matched without regard to case)
    replaced by `body`, written as prose (prose.py): a task file's sections end at the next
    `## ` line, code fences or not, so a line of the body that read as a heading would leave
    the section, read as the person's description, and be written twice when the section is
    written again. The section is appended at the end when the file has none."""
    body = prose.escape(body)
    lines = text.splitlines(keepends=True)
    start = end = None
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line.rstrip("\n"))
        if match is None:
            continue
        if start is not None:
            end = index
            break
        if match.group(1).strip().lower() == heading.lower():
            start = index
    if start is not None:  # the heading as the file spells it
        heading = lines[start].strip().removeprefix("##").strip()
    block = f"## {heading}\n\n{body.strip()}\n"
    if start is None:
        joined = "".join(lines).rstrip("\n")
        return f"{joined}\n\n{block}"
    after = lines[end:] if end is not None else []
    return "".join(lines[:start]) + block + ("\n" + "".join(after) if after else "")


def set_front(text: str, key: str, value: str) -> str:
    """`text` with `key: value` in its front matter: the key's line replaced when it has one,
    else added before the block's closing `---`; every other byte as it was."""
    lines = text.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.strip() == "---"][:2]
    if len(marks) < 2:
        raise ValueError("the task file has no front matter")
    start, end = marks
    newline = "\r\n" if lines[start].endswith("\r\n") else "\n"
    entry = f"{key}: {prose.one_line(value)}{newline}"
    for index in range(start + 1, end):
        if lines[index].partition(":")[0].strip().lower() == key:
            lines[index] = entry
            return "".join(lines)
    return "".join([*lines[:end], entry, *lines[end:]])
