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
