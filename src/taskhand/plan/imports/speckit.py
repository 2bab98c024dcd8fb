"""GitHub Spec Kit's `tasks.md` as a draft plan: each `## ` section holding task lines is a
phase; within one, a [P] task waits for nothing implicitly and a sequential one for the one
before it and the [P] ones between, as Spec Kit runs them. docs/authoring.md maps every part.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.plan.imports.draft import Draft, Dropped, Item

_TASK = re.compile(
    r"^(?P<indent>\s*)[-*]\s+\[(?P<mark>[ xX])\]\s+(?P<id>T\d+[a-z]?)\b[:.]?\s*(?P<rest>.*)$"
)
_CHECKBOX = re.compile(r"^\s*[-*]\s+\[[ xX]\]\s")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*\S)\s*$")
_PHASE_PREFIX = re.compile(r"^Phase\s+(?:\d+(?:\.\d+)*|[A-Z])\b\s*[:.\-\u2013\u2014]?\s*", re.I)
_MARKER = re.compile(r"^\[(?P<m>[^\]\s]{1,20})\]\s*")
_IDS = re.compile(r"\bT\d+[a-z]?\b")
_RANGE = re.compile(r"\b(T\d+)\s*(?:-|\u2013|to)\s*(T\d+)\b")
_IN_TEXT = re.compile(
    r"\b(?:depends? on|dependent on|after|requires?|needs?|blocked by)\s+"
    r"(?P<ids>\(?T\d+[a-z]?\b(?:\s*(?:,|and|&|/|-|\u2013|to)\s*T\d+[a-z]?\b)*)",
    re.I,
)
_PATH = re.compile(r"(?<![\w/.@+-])((?:[\w.@+-]+/)+[\w.@+-]*)")
_FILE_IN_CODE = re.compile(r"`([\w.@+-]+\.[A-Za-z0-9]{1,10})`")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_ARROW = re.compile(r"\s*(?:->|\u2192)\s*")
_FORWARD = re.compile(r"\b(?:blocks|before)\b", re.I)
_BACKWARD = re.compile(r"\b(?:depends? on|requires?|needs?|after|blocked by)\b", re.I)
_DEPENDENCY_HEADING = re.compile(r"dependenc|execution order", re.I)
_NO_HOME_HEADING = re.compile(r"^(format\b|table of contents|parallel\b)", re.I)
_PHASE_CHECKS = re.compile(
    r"^\*\*(checkpoint|independent test)\b[^*]*\*\*\s*:\s*(?P<text>.+)$", re.I
)


@dataclass
class _Section:
    heading: str
    line: int
    text: list[tuple[int, str]] = field(default_factory=list)  # (line number, line)
    items: list[tuple[Item, bool]] = field(default_factory=list)  # (task, marked [P])
    checks: list[str] = field(default_factory=list)


def read(text: str, source: Path) -> Draft:
    """The draft plan of a Spec Kit tasks.md's `text`: paths in a task's text are its paths,
    `[X]` marks it done, a phase's checkpoint and independent test are criteria of its last
    task when that one is sequential (it runs after all the others), other prose is kept for
    the objective, and what has no home (template comments, format notes, parallel examples)
    is reported as dropped."""
    name = source.name
    dropped: list[Dropped] = []
    title = ""
    sections = [_Section("", 1)]
    group = ""
    current: Item | None = None
    fence = comment = False
    lines = text.split("\n")
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    if lines[0].strip() == "---" and closing:  # the command's front matter: blank from here on
        dropped.append(Dropped(f"{name}:1", f"the front matter (lines 1-{closing + 1})"))
        lines[: closing + 1] = [""] * (closing + 1)
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if comment or line.lstrip().startswith("<!--"):
            if not comment:
                dropped.append(Dropped(f"{name}:{number}", "a comment of the template"))
            comment = "-->" not in line
            continue
        if line.lstrip().startswith("```"):
            fence = not fence
        heading = None if fence else _HEADING.match(line)
        task = None if fence else _TASK.match(line)
        if heading and len(heading["hashes"]) == 1 and not title:
            title = re.sub(r"^Tasks\s*:\s*", "", heading["text"], flags=re.I)
            current = None
        elif heading and (len(heading["hashes"]) == 2 or _PHASE_PREFIX.match(heading["text"])):
            sections.append(_Section(heading["text"], number))
            group, current = "", None
        elif heading:
            group, current = heading["text"], None
            sections[-1].text.append((number, line))
        elif task:
            current = _item(task, number, name, group, len(sections) - 1)
            sections[-1].items.append((current, _parallel(task["rest"])))
        elif current is not None and line and raw[:1].isspace():
            current.text += "\n" + line.strip()  # an indented line under a task is part of it
        elif current is not None and not line:
            continue  # a blank line may sit between a task and its indented details
        else:
            current = None
            checks = _PHASE_CHECKS.match(line.strip())
            if checks:
                sections[-1].checks.append(f"{checks[1].title()}: {checks['text']}")
            sections[-1].text.append((number, line))
    return _draft(title, sections, dropped, name)


def _item(task: re.Match[str], number: int, name: str, group: str, section: int) -> Item:
    rest = task["rest"]
    labels = []
    while marker := _MARKER.match(rest):
        labels.append(marker["m"])
        rest = rest[marker.end() :]
    where = f"{name}:{number}"
    tags = " ".join(f"[{m}]" for m in labels)
    origin = f"From Spec Kit's {name}, line {number}: task {task['id']}{' ' + tags if tags else ''}"
    origin += f', under "{group}".' if group else "."
    item = Item(task["id"], rest, f"{rest}\n\n{origin}", section, where)
    item.paths = paths_in(rest)
    item.deps = [d for match in _IN_TEXT.finditer(rest) for d in _expand(match["ids"])]
    if task["mark"] in "xX":
        item.done = f"Imported as done: checked off in Spec Kit's {name}, line {number}."
    return item


def _parallel(rest: str) -> bool:
    while marker := _MARKER.match(rest):
        if marker["m"] == "P":
            return True
        rest = rest[marker.end() :]
    return False


def paths_in(text: str) -> list[str]:
    """File and folder paths the text names: `a/b.py`, `docs/`, or a quoted `package.json`."""
    found = []
    for match in _PATH.finditer(text):
        path = match[1].rstrip(".")
        if path.endswith("/") or _EXTENSION.search(path):
            found.append(path)
    found += _FILE_IN_CODE.findall(text)
    return list(dict.fromkeys(found))


def _expand(text: str) -> list[str]:
    """Task ids in `text`, a range like T004-T007 standing for every id in it."""
    ids: list[str] = []
    for match in _RANGE.finditer(text):
        first, last = int(match[1][1:]), int(match[2][1:])
        width = len(match[1]) - 1
        if 0 <= last - first <= 500:
            ids += [f"T{n:0{width}d}" for n in range(first, last + 1)]
    return list(dict.fromkeys([*ids, *_IDS.findall(text)]))


def _draft(title: str, sections: list[_Section], dropped: list[Dropped], name: str) -> Draft:
    items = [item for section in sections for item, _ in section.items]
    notes: list[str] = []
    for section in sections:
        body = "\n".join(line for _, line in section.text).strip()
        if section.items:
            _order(section)
            if section.checks and not section.items[-1][1]:
                section.items[-1][0].criteria += section.checks
            for number, line in section.text:
                if _CHECKBOX.match(line):  # a task line without its id: no task can be made
                    what = f"kept as text only: a checklist line with no task id: {line.strip()!r}"
                    dropped.append(Dropped(f"{name}:{number}", what))
        elif _NO_HOME_HEADING.match(section.heading) and body:
            what = f'the section "{section.heading}": it tells the file\'s format or restates tasks'
            dropped.append(Dropped(f"{name}:{section.line}", what))
            continue
        elif _DEPENDENCY_HEADING.search(section.heading):
            body = _dependency_lines(section, items, dropped, name)
        body = re.sub(r"(?m)^\s*(?:---+|\*\*\*+)\s*$", "", body).strip()  # rules between phases
        if body:
            notes.append(f"### {section.heading}\n\n{body}" if section.heading else body)
    phases = [_PHASE_PREFIX.sub("", section.heading) for section in sections]
    lead = f"{title or 'Tasks'}: the tasks of Spec Kit's {name}, imported by taskhand."
    return Draft(title or "Spec Kit tasks", "\n\n".join([lead, *notes]), phases, items, dropped)


def _order(section: _Section) -> None:
    """A sequential task waits for the sequential task before it and the [P] ones between."""
    previous: str | None = None
    parallel: list[str] = []
    for item, is_parallel in section.items:
        if is_parallel:
            parallel.append(item.key)
            continue
        item.deps = [*([previous] if previous else []), *parallel, *item.deps]
        previous, parallel = item.key, []


def _dependency_lines(
    section: _Section, items: list[Item], dropped: list[Dropped], name: str
) -> str:
    """Add the dependencies the section writes between task ids; return its text, all kept."""
    by_key = {item.key: item for item in items}
    for number, line in section.text:
        if not _IDS.search(line):
            continue
        pairs = _pairs(line)
        for later, first in pairs or []:
            if later in by_key:
                by_key[later].deps.append(first)
        if pairs is None:
            dropped.append(
                Dropped(
                    f"{name}:{number}",
                    "kept as text only: a line naming tasks in no dependency form taskhand "
                    f"reads: {line.strip()!r}",
                )
            )
    return "\n".join(line for _, line in section.text).strip()


def _pairs(line: str) -> list[tuple[str, str]] | None:
    """(task, what it waits for) for each dependency one line writes out; None for a line
    in no form read here."""
    parts = [_expand(p) for p in _ARROW.split(line)]
    if len([p for p in parts if p]) >= 2:
        chain = [p for p in parts if p]
        return [
            (b, a) for before, after in itertools.pairwise(chain) for a in before for b in after
        ]
    for pattern, forward in ((_FORWARD, True), (_BACKWARD, False)):
        match = pattern.search(line)
        if match:
            left, right = _expand(line[: match.start()]), _expand(line[match.end() :])
            if forward:
                return [(b, a) for a in left for b in right]
            return [(a, b) for a in left for b in right]
    return None
