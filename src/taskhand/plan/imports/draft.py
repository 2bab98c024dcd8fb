"""What an importer reads out of another tool's file, before it is a plan (tasks under the
source's ids, phases, dependencies by those ids), and `build`, which makes the plan of either
dialect from it, keeping each dependency that can hold and reporting the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.plan import carried
from taskhand.plan.formats import markdown, prose
from taskhand.plan.formats.criteria import CriterionError, parse_criterion
from taskhand.plan.formats.tasktrack_edit import now
from taskhand.plan.model import Criterion, Dialect, Phase, Plan, Status, Task
from taskhand.text import plural, printable

TITLE_MAX = 100
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Dropped:
    """Something of the source with no home in the plan: where it was, and what it was."""

    where: str
    what: str

    def render(self) -> str:
        return printable(f"{self.where}: {self.what}")


@dataclass
class Item:
    """One task as the source has it."""

    key: str  # the source's id: "T014", "3", "3.2"
    title: str
    text: str
    phase: int  # an index into Draft.phases
    where: str  # "tasks.md:42", "$.master.tasks[2]"
    deps: list[str] = field(default_factory=list)  # source ids
    criteria: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    done: str | None = None  # the resolution, when the source says it is done


@dataclass
class Draft:
    title: str
    objective: str
    phases: list[str]
    items: list[Item]
    dropped: list[Dropped] = field(default_factory=list)


@dataclass
class Built:
    plan: Plan
    ids: dict[str, str]  # source id -> the plan's id
    dropped: list[Dropped]


def build(draft: Draft, dialect: Dialect, code: str, root: Path, source: Path) -> Built:
    """The plan of `draft` in `dialect`, and what could not be carried over.

    A dependency on an earlier phase is already held by phase order (left out); one on a later
    phase, on no task, on the task itself or closing a cycle cannot hold (reported); one the
    task's other dependencies imply is left out, the order staying the same.
    """
    dropped = list(draft.dropped)
    used = sorted({i.phase for i in draft.items})
    number = {old: new for new, old in enumerate(used, start=1)}
    items = sorted(draft.items, key=lambda i: number[i.phase])  # stable: file order kept
    width = max(3, len(str(len(items))))
    ids: dict[str, str] = {}
    tasks: list[Task] = []
    for n, item in enumerate(items, start=1):
        task_id = f"T-{n:0{width}d}" if dialect is Dialect.MARKDOWN else f"{code}-{n}"
        if item.key in ids:
            what = f"{item.key} is written twice: it is imported as {task_id}, and a "
            dropped.append(
                Dropped(item.where, what + f"dependency on {item.key} means {ids[item.key]}")
            )
        ids.setdefault(item.key, task_id)
        tasks.append(_task(item, task_id, number[item.phase], dialect, dropped))
    by_key: dict[str, Task] = {}
    for item, task in zip(items, tasks, strict=True):
        by_key.setdefault(item.key, task)
    for item, task in zip(items, tasks, strict=True):
        task.dependencies = _dependencies(item, task, by_key, dropped)
    _break_cycles(items, tasks, dropped)
    _reduce(tasks)
    phases = [
        Phase(number[old], clean_line(draft.phases[old]) or f"Phase {number[old]}") for old in used
    ]
    for task in tasks:
        phases[task.phase - 1].task_ids.append(task.id)
    plan = Plan(
        dialect,
        root,
        clean_line(draft.title) or source.stem,
        tasks,
        phases,
        code=code if dialect is Dialect.TASKTRACK else None,
        objective=clean_text(draft.objective),
        created=now(),
        resources=[str(source.resolve())],
    )
    if dialect is Dialect.MARKDOWN:
        _as_markdown(plan, [i.key for i in items if i.done is not None], source, dropped)
    return Built(plan, ids, dropped)


def _as_markdown(plan: Plan, done: list[str], source: Path, dropped: list[Dropped]) -> None:
    """What the Markdown dialect's files cannot hold: the phases' titles go into the
    overview; the tasks done in the source are reported."""
    titles = "".join(f"- Phase {p.number}: {p.title}\n" for p in plan.phases)
    goal = carried.overview_prose(plan.objective)
    plan.overview_text = (
        f"# {plan.title}\n\n## Goal\n{goal}\n\n## Phases\n{titles}\n"
        f"## Source\nImported by taskhand from {plan.resources[0]}; each task says where "
        "in it it was written.\n"
    )
    if done:
        shown = ", ".join(done[:8]) + (", ..." if len(done) > 8 else "")
        them = "it" if len(done) == 1 else "them"
        what = (
            f"{plural(len(done), 'task')} done in the source ({shown}); a Markdown plan keeps "
            f"no status, so a run would do {them} again (import with --dialect tasktrack to "
            f"keep {them} DONE)"
        )
        dropped.append(Dropped(source.name, what))


def _task(item: Item, task_id: str, phase: int, dialect: Dialect, dropped: list[Dropped]) -> Task:
    title = clean_line(item.title) or f"Task {item.key}"
    if len(title) > TITLE_MAX:
        title = title[: TITLE_MAX - 3].rsplit(" ", 1)[0].rstrip(" ,;:") + "..."
    task = Task(
        task_id,
        title,
        clean_text(item.text) or title,
        [c for c in (_criterion(text, item, dropped) for text in item.criteria) if c],
        phase=phase,
        updated=now(),
    )
    if item.done is not None and dialect is Dialect.TASKTRACK:
        task.status = Status.DONE
        task.resolution = clean_line(item.done)
    if dialect is Dialect.MARKDOWN:
        task.paths = [p for p in dict.fromkeys(item.paths) if safe_path(p)]
        for path in (p for p in dict.fromkeys(item.paths) if re.search(r"[,\s]", p)):
            dropped.append(
                Dropped(item.where, f"{item.key}'s path {path!r} {markdown.PATH_SEPARATOR}")
            )
    return task


def _criterion(text: str, item: Item, dropped: list[Dropped]) -> Criterion | None:
    line = clean_line(text)
    if not line:
        return None
    try:
        return parse_criterion(line)
    except CriterionError as exc:
        # Kept as the reviewer's criterion: the command as written cannot run as a check.
        dropped.append(Dropped(item.where, f"{item.key}'s criterion is no check: {exc}"))
        return Criterion(f"As written: {line}")


def _dependencies(
    item: Item, task: Task, by_key: dict[str, Task], dropped: list[Dropped]
) -> list[str]:
    kept: list[str] = []
    for dep in dict.fromkeys(item.deps):
        other = by_key.get(dep)
        if other is None:
            dropped.append(Dropped(item.where, f"{item.key} depends on {dep}, which is no task"))
        elif other is task:
            dropped.append(Dropped(item.where, f"{item.key} depends on itself"))
        elif other.phase > task.phase:
            dropped.append(
                Dropped(
                    item.where,
                    f"{item.key} depends on {dep} of a later phase; phases run in order, so "
                    "the dependency cannot hold",
                )
            )
        elif other.phase == task.phase:
            kept.append(other.id)
        # an earlier phase: phase order already runs it first
    return kept


def _break_cycles(items: list[Item], tasks: list[Task], dropped: list[Dropped]) -> None:
    """Drop each dependency that closes a cycle, found depth first in file order."""
    by_id = {t.id: t for t in tasks}
    where = {t.id: (i.key, i.where) for i, t in zip(items, tasks, strict=True)}
    key_of = {t.id: i.key for i, t in zip(items, tasks, strict=True)}
    state: dict[str, int] = {}  # 1: on the path, 2: finished
    for start in tasks:
        if start.id in state:
            continue
        state[start.id] = 1
        stack: list[tuple[Task, int]] = [(start, 0)]
        while stack:
            task, index = stack[-1]
            if index == len(task.dependencies):
                state[task.id] = 2
                stack.pop()
                continue
            stack[-1] = (task, index + 1)
            dep = task.dependencies[index]
            if state.get(dep) == 1:
                task.dependencies.remove(dep)
                stack[-1] = (task, index)
                key, at = where[task.id]
                dropped.append(
                    Dropped(at, f"{key} depends on {key_of[dep]}, which closes a dependency cycle")
                )
            elif dep not in state:
                state[dep] = 1
                stack.append((by_id[dep], 0))


def _reduce(tasks: list[Task]) -> None:
    """Leave out each dependency that the task's other dependencies already imply."""
    by_id = {t.id: t for t in tasks}
    below: dict[str, set[str]] = {}
    for task in _deps_first(tasks, by_id):
        below[task.id] = set(task.dependencies).union(*(below[d] for d in task.dependencies))
    for task in tasks:
        deps = task.dependencies
        task.dependencies = [d for d in deps if not any(d in below[o] for o in deps if o != d)]


def _deps_first(tasks: list[Task], by_id: dict[str, Task]) -> list[Task]:
    """The tasks of an acyclic plan, each after all it depends on (no recursion: long chains)."""
    order: list[Task] = []
    seen: set[str] = set()
    for start in tasks:
        if start.id in seen:
            continue
        seen.add(start.id)
        stack = [(start, iter(start.dependencies))]
        while stack:
            task, deps = stack[-1]
            dep = next((d for d in deps if d not in seen), None)
            if dep is None:
                order.append(task)
                stack.pop()
            else:
                seen.add(dep)
                stack.append((by_id[dep], iter(by_id[dep].dependencies)))
    return order


def clean_line(text: str) -> str:
    """One line of text, safe in any field: no control characters, single spaces."""
    return " ".join(printable(text, lines=True).split())


def clean_text(text: str) -> str:
    """Text for a description or objective: no control characters, no trailing spaces or runs
    of blank lines outside code fences; a fenced block is code, kept as written. It is written
    as prose (plan/formats/prose.py), so no line of it reads as structure."""
    kept: list[str] = []
    fence = ""  # the open fence's mark, "" outside one
    for line in printable(prose.normal(text), lines=True).split("\n"):
        mark = _FENCE.match(line)
        if fence and mark and mark[1].startswith(fence) and not line.strip(" `~\t"):
            fence = ""  # the closing fence: the opening one's mark, at least as long
            kept.append(line)
        elif fence:
            kept.append(line)
        elif not line.strip():
            if kept and kept[-1]:
                kept.append("")  # one blank line of a run
        else:
            fence = mark[1] if mark else ""
            kept.append(line.rstrip())
    return "\n".join(kept).strip()


def safe_path(path: str) -> bool:
    """A path a Markdown plan's `paths` may name: inside the repository, outside `.git`."""
    parts = path.strip("/").split("/")
    separated = re.search(r"[,\s]", path)  # reported: see _task
    return not (path.startswith("/") or ".." in parts or ".git" in parts or separated)
