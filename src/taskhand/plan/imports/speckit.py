"""GitHub Spec Kit's `tasks.md` as a draft plan: each `## ` section holding task lines is a
phase; within one, a [P] task waits for nothing implicitly and a sequential one for the one
before it and the [P] ones between, as Spec Kit runs them. What the file writes of the order
wins over that implicit order (speckit_order.py); the paths a task's text names make its
scope (speckit_paths.py). docs/authoring.md maps every part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.plan.imports import speckit_statements as statements
from taskhand.plan.imports.draft import Draft, Dropped, Item
from taskhand.plan.imports.speckit_order import names_tasks, order_phase, written
from taskhand.plan.imports.speckit_paths import paths_in, scope, top_folders
from taskhand.plan.lint import PATHS_OPEN

__all__ = ["paths_in", "read", "task_line"]

# A task line as people write it: `- [ ] T001 ...`, `- [x] **T001**: ...`, `1. [ ] T008 ...`,
# `- [~] T012 ...` (in progress), `- [ ] [T003] ...`, or `- **T004** [X]: ...` with no checkbox.
_LIST_ITEM = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[(?P<mark>[^\[\]])\]\s+)?")
_ID_HERE = re.compile(r"\[?(?P<id>T\d+[a-z]?)\]?(?![\w\u2013-])")
# A task written as a heading, its lines below it: `### T001 — Install x`, `### [X] T002: ...`.
_HEADING_TASK = re.compile(
    r"^(?:\[(?P<mark>[^\[\]])\]\s*)?\*{0,2}\[?(?P<id>T\d+[a-z]?)\]?\*{0,2}"
    r"(?![\w\u2013-])(?P<rest>.*)$"
)
_MARK_AFTER = re.compile(r"^\s*\[(?P<mark>[ xX~/])\]")
_SEPARATOR = re.compile(r"^[\s:.\-\u2013\u2014]+")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*\S)\s*$")
_PHASE_PREFIX = re.compile(r"^Phase\s+(?:\d+(?:\.\d+)*|[A-Z])\b\s*[:.\-\u2013\u2014]?\s*", re.I)
_MARKER = re.compile(r"^\[(?P<m>[^\]\s]{1,20})\]\s*|^\((?P<story>US\d+|P\d)\)\s*")
_PARALLEL_MARK = re.compile(r"\[P\]")
_BOXED = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[[^\[\]]\]\s+\*{0,2}\[?T\d+[a-z]?\b", re.M)
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[[^\[\]]\]\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
# An indented line that reads as structure is a task's detail, never its wrapped first line.
_STRUCTURE = re.compile(r"^\s*(?:#|[-*+]\s|\d{1,3}[.)]\s|>|\||---|\*\*[^*]+\*\*\s*:|<)")
_ORDER_HEADING = re.compile(r"dependenc|execution order|parallel", re.I)
_NO_HOME_HEADING = re.compile(r"^(format\b|table of contents|parallel\b.*\bexamples?\b)", re.I)
_PHASE_CHECKS = re.compile(
    r"^\*\*(checkpoint|independent test)\b[^*]*\*\*\s*:\s*(?P<text>.+)$", re.I
)
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(`*])")
_CLAUSE_END = re.compile(r"\s+[\u2014\u2013]\s+|;\s|:\s")
_TITLE_MAX = 100
_MARKS = {
    "~": "in progress",
    "/": "in progress",
    "!": "blocked",
    ">": "in progress",
    "-": "cancelled",
}


@dataclass
class _Task:
    id: str
    mark: str
    first: str  # the line's text after the id: its markers, then its title
    line: int
    group: str
    paragraph: list[str] = field(default_factory=list)  # wrapped lines of the first line
    details: list[str] = field(default_factory=list)  # indented lines after it
    block: bool = False  # a heading: every line up to the next heading is its own


@dataclass
class _Section:
    heading: str
    line: int
    text: list[tuple[int, str]] = field(default_factory=list)  # (line number, line)
    tasks: list[_Task] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)


def task_line(line: str, loose: bool = True) -> tuple[str, str, str] | None:
    """(id, mark, the rest) of a task line, the mark "" without a checkbox; None for any
    other line. A bold id without a
    checkbox is a task only in a file whose task lines have none (`loose`): in one that has,
    `- **T010** — a finding` in its notes is no task."""
    item = _LIST_ITEM.match(line)
    if not item or (item["mark"] is None and not loose):
        return None
    body, mark = line[item.end() :], item["mark"]
    if body.startswith("~~") and mark is None and "~~" in body[2:]:  # `- ~~**T001**~~: ...`
        body, mark = body[2:].replace("~~", "", 1), "x"  # struck through: crossed off, done
    bold = body.startswith("**")
    if bold:
        close = body.find("**", 2)
        if close < 0:
            return None
        inner, after = body[2:close], body[close + 2 :]
        found = _ID_HERE.match(inner)
        if not found:
            return None
        rest = f"{inner[found.end() :].strip()} {after}"
        late = _MARK_AFTER.match(after)
        if mark is None and late:  # `- **T001** [X]: ...`
            mark, rest = late["mark"], f"{inner[found.end() :]} {after[late.end() :]}"
    else:
        found = _ID_HERE.match(body)
        if mark is None or not found:
            return None  # a plain `- T020 depends on T019` is a statement, not a task
        rest = body[found.end() :]
    return found["id"], mark or "", _SEPARATOR.sub("", rest.strip()).strip()


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
    current: _Task | None = None
    wrapping = fence = comment = False
    loose = not _BOXED.search(text)  # no checkbox task line: bold ids and headings are tasks
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
        opens = bool(_FENCE.match(line))
        heading = None if fence or opens else _HEADING.match(line)
        task = None if fence or opens else task_line(line, loose)
        if task and not task[1] and _is_order(sections[-1].heading):
            task = None  # `- **T004** blocks T005` in a Dependencies section is a statement
        if heading and len(heading["hashes"]) == 1 and not title:
            title = re.sub(r"^Tasks\s*:\s*", "", heading["text"], flags=re.I)
            current = None
        elif heading and (len(heading["hashes"]) == 2 or _PHASE_PREFIX.match(heading["text"])):
            sections.append(_Section(heading["text"], number))
            group, current = "", None
        elif heading and loose and (block := _heading_task(heading, sections[-1])):
            current = _Task(block["id"], block["mark"] or " ", block["rest"], number, group)
            current.block = True
            sections[-1].tasks.append(current)
            wrapping = False
        elif heading:
            group, current = heading["text"], None
            sections[-1].text.append((number, line))
        elif task:
            current = _Task(task[0], task[1] or " ", task[2], number, group)
            sections[-1].tasks.append(current)
            wrapping = True
        elif current is not None and line and (raw[:1].isspace() or fence or current.block):
            # A wrapped line (prettier's, at 80 columns) goes on with the task's first line;
            # after a blank line, a sub-list or a fence, indented lines are its details.
            wrapping = wrapping and not (fence or opens or _STRUCTURE.match(line))
            (current.paragraph if wrapping else current.details).append(line.strip())
        elif current is not None and not line:
            wrapping = False  # a blank line may sit between a task and its indented details
        else:
            current = None
            checks = _PHASE_CHECKS.match(line.strip())
            if checks:
                sections[-1].checks.append(f"{checks[1].title()}: {checks['text']}")
            sections[-1].text.append((number, line))
        if opens:
            fence = not fence
    return _draft(title, sections, dropped, name)


def _heading_task(heading: re.Match[str], section: _Section) -> re.Match[str] | None:
    if len(heading["hashes"]) < 3 or _is_order(section.heading):
        return None
    return _HEADING_TASK.match(heading["text"])


def _is_order(heading: str) -> bool:
    """A Dependencies, Execution Order or Parallel section, not a phase that names them."""
    return bool(_ORDER_HEADING.search(heading)) and not _PHASE_PREFIX.match(heading)


def _item(task: _Task, name: str, section: int, others: list[tuple[str, str]]) -> tuple[Item, bool]:
    """The task, and whether it is [P]; what its text says other tasks wait for (`blocks
    T006`, `before T004`) goes to `others`."""
    rest = _SEPARATOR.sub("", task.first.strip())
    labels = []
    while marker := _MARKER.match(rest):
        labels.append(marker["m"] or marker["story"])
        rest = rest[marker.end() :]
    first = _SEPARATOR.sub("", " ".join([rest, *task.paragraph])).strip()
    parallel = "P" in labels or bool(_PARALLEL_MARK.search(first))
    where = f"{name}:{task.line}"
    tags = " ".join(f"[{m}]" for m in labels)
    origin = f"From Spec Kit's {name}, line {task.line}: task {task.id}{' ' + tags if tags else ''}"
    origin += f', under "{task.group}".' if task.group else "."
    if task.mark not in " xX":  # open: in progress, blocked, cancelled, or the author's own
        meaning = f" ({_MARKS[task.mark]})" if task.mark in _MARKS else ""
        origin += f" Marked [{task.mark}]{meaning} there."
    body = "\n".join([first, *task.details]).strip()
    details = "".join(f"\n{line}" for line in task.details)
    item = Item(task.id, _title(first), f"{first}\n\n{origin}{details}", section, where)
    item.paths = paths_in(body)
    told = statements.read(body, [task.id]).pairs
    item.deps = [b for a, b in told if a == task.id]
    others += [(a, b) for a, b in told if a != task.id]
    if task.mark in "xX":
        item.done = f"Imported as done: checked off in Spec Kit's {name}, line {task.line}."
    return item, parallel


def _title(text: str) -> str:
    """The task's first paragraph, or when that is too long for a title, its first sentence,
    else its longest run of clauses (up to ` — `, `; ` or `: `) that fits, else the paragraph
    (shortened with "..." when the plan is built). A boundary in code or in parentheses
    (`PYTHONPATH=. pytest`) ends none."""
    text = " ".join(text.split())
    if len(text) <= _TITLE_MAX:
        return text
    for boundaries in (_SENTENCE_END, _CLAUSE_END):
        ends = [m for m in boundaries.finditer(text, 20, _TITLE_MAX + 1) if _outside(text, m)]
        if boundaries is _SENTENCE_END and ends:
            return text[: ends[0].end()]
        if ends:
            return text[: ends[-1].start()]
    return text


def _outside(text: str, end: re.Match[str]) -> bool:
    """Whether a boundary ends the title within its length and outside code and parentheses."""
    before = text[: end.start()]
    depth = before.count("(") - before.count(")") + before.count("[") - before.count("]")
    return end.end() <= _TITLE_MAX and before.count("`") % 2 == 0 and depth == 0


def _draft(title: str, sections: list[_Section], dropped: list[Dropped], name: str) -> Draft:
    in_tasks: list[tuple[str, str]] = []
    built = [[_item(t, name, n, in_tasks) for t in s.tasks] for n, s in enumerate(sections)]
    items = [item for section in built for item, _ in section]
    by_key: dict[str, Item] = {}
    for item in items:
        by_key.setdefault(item.key, item)
    parallel = {item.key for section in built for item, p in section if p}
    order = [s for s in sections if not s.tasks and _is_order(s.heading)]
    phases = [s.heading if s.tasks else None for s in sections]
    examples = [(s.heading, s.text, bool(_NO_HOME_HEADING.match(s.heading))) for s in order]
    told = written(examples, phases, by_key, dropped, name)
    order = [s for s in order if not _NO_HOME_HEADING.match(s.heading) or names_tasks(s.text)]
    for later, first in [*in_tasks, *told.pairs]:
        if later in by_key and first not in by_key[later].deps:
            by_key[later].deps.append(first)
    parallel.update(told.parallel)
    roots = top_folders([item.paths for item in items])
    for item in items:
        item.paths, unsure = scope(item.paths, item.text, roots)
        if unsure:  # said in the report, and in the task, for whoever scopes it later
            dropped.append(Dropped(item.where, f"{item.key}'s paths are left open: {unsure}"))
            item.text += f"\n\n{PATHS_OPEN}{unsure}."
    notes: list[str] = []
    for section, pairs in zip(sections, built, strict=True):
        body = "\n".join(line for _, line in section.text).strip()
        if pairs:
            order_phase([item for item, _ in pairs], parallel)
            if section.checks and pairs[-1][0].key not in parallel:
                pairs[-1][0].criteria += section.checks
            for number, line in section.text:
                if _CHECKBOX.match(line):  # a task line without its id: no task can be made
                    what = f"kept as text only: a checklist line with no task id: {line.strip()!r}"
                    dropped.append(Dropped(f"{name}:{number}", what))
        elif _NO_HOME_HEADING.match(section.heading) and body and section not in order:
            what = f'the section "{section.heading}": it tells the file\'s format or restates tasks'
            dropped.append(Dropped(f"{name}:{section.line}", what))
            continue
        body = re.sub(r"(?m)^\s*(?:---+|\*\*\*+)\s*$", "", body).strip()  # rules between phases
        if body:
            notes.append(f"### {section.heading}\n\n{body}" if section.heading else body)
    titles = [_PHASE_PREFIX.sub("", section.heading) for section in sections]
    lead = f"{title or 'Tasks'}: the tasks of Spec Kit's {name}, imported by taskhand."
    return Draft(title or "Spec Kit tasks", "\n\n".join([lead, *notes]), titles, items, dropped)
