"""Taskmaster's `tasks.json` as a draft plan, tagged (one tag imported: --tag, else master,
else the first, as Taskmaster resolves it) or in the older `{"tasks": [...]}` shape: one phase,
each subtask a task of its own before its parent. docs/authoring.md maps every field.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from taskhand.plan.imports.draft import Draft, Dropped, Item
from taskhand.plan.imports.fields import Fields, kind_of, shown
from taskhand.plan.imports.source import ImportFileError
from taskhand.text import plural

MASTER = "master"
KNOWN_MAJOR = "1"
_TEXT_KEYS = {"priority": "Priority", "type": "Type", "tags": "Tags", "complexity": "Complexity"}
_TEXT_KEYS |= {"assignee": "Assignee", "effort": "Effort"}
_MAPPED = {"id", "title", "description", "details", "testStrategy", "status", "dependencies"}
_MAPPED |= {"subtasks", "acceptanceCriteria", "relevantFiles", "parentTaskId", "parentId"}
_ID = re.compile(r"^[0-9]{1,9}$")
_SUB_ID = re.compile(r"^([0-9]{1,9})\.([0-9]{1,9})$")
_WRITES = ("create", "modify")


class TaskmasterStatus(StrEnum):
    """The statuses Taskmaster writes."""

    PENDING = "pending"
    IN_PROGRESS = "in-progress"
    DONE = "done"
    COMPLETED = "completed"
    REVIEW = "review"
    DEFERRED = "deferred"
    CANCELLED = "cancelled"
    BLOCKED = "blocked"


_FINISHED = (TaskmasterStatus.DONE, TaskmasterStatus.COMPLETED, TaskmasterStatus.CANCELLED)


def read(data: Any, source: Path, tag: str | None = None) -> Draft:
    """The draft plan of a Taskmaster tasks.json already read as JSON `data`."""
    tasks, at, chosen, meta, dropped = _select(data, source, tag)
    _check_version(meta, source, at)
    top = {_id_of(task, f"{at}[{n}]", source) for n, task in enumerate(tasks)}
    context = f"Taskmaster's {source.name}" + (f", tag {chosen}" if chosen else "")
    unmapped: dict[str, tuple[int, str]] = {}
    items: list[Item] = []
    for n, task in enumerate(tasks):
        items += _items(task, f"{at}[{n}]", top, context, source, unmapped, dropped)
    for key, (count, where) in unmapped.items():
        times = "once" if count == 1 else f"{count} times"
        dropped.append(Dropped(where, f"the field {key} ({times}) has no home in a plan"))
    names = [meta.get(k) for k in ("projectName", "name")]
    name = next((n for n in names if isinstance(n, str) and n.strip()), None)
    name = name or f"Taskmaster tasks ({chosen or MASTER})"
    objective = f"{name}: the tasks of {context}, imported by taskhand."
    if isinstance(meta.get("description"), str) and meta["description"].strip():
        objective += "\n\n" + meta["description"]
    return Draft(str(name), objective, [f"Tasks ({chosen or MASTER})"], items, dropped)


def _select(
    data: Any, source: Path, tag: str | None
) -> tuple[list[Any], str, str | None, dict[str, Any], list[Dropped]]:
    """The tasks to import, their JSON path, the tag, its metadata, and the tags left out."""
    where = str(source)
    untagged = isinstance(_dict(data).get("tasks"), list)
    if (untagged or _task_list(data)) and tag not in (None, MASTER):
        raise ImportFileError(
            f"--tag {tag}: the file has no tags", where=where, fix="leave --tag out"
        )
    if untagged:
        return data["tasks"], "$.tasks", None, _dict(data.get("metadata")), []
    if _task_list(data):
        what = 'the file is a list of tasks, not {"tasks": [...]}: read as its tasks'
        return data, "$", None, {}, [Dropped("$", what)]
    tags = {k: v for k, v in _dict(data).items() if isinstance(_dict(v).get("tasks"), list)}
    bare = {k: v for k, v in _dict(data).items() if k not in tags and _task_list(v)}
    tags |= {k: {"tasks": v} for k, v in bare.items()}
    if not tags:
        raise ImportFileError(
            "JSON, but not a Taskmaster tasks.json taskhand knows: "
            + (
                'no "tasks" list, at the top or under a tag like "master"'
                if isinstance(data, dict)
                else f"{kind_of(data)} at the top, not an object"
            ),
            where=where,
            fix="give Taskmaster's .taskmaster/tasks/tasks.json",
        )
    if tag is not None and tag not in tags:
        raise ImportFileError(
            f"no tag {tag!r} in the file", where=where, fix=f"use one of: {', '.join(tags)}"
        )
    chosen = tag or (MASTER if MASTER in tags else next(iter(tags)))
    at = f"{_path(chosen)}" + ("" if chosen in bare else ".tasks")
    dropped = [
        Dropped(
            _path(other),
            f"tag {other!r} ({plural(len(body['tasks']), 'task')}) is not imported: "
            f"import it on its own with --tag {other}",
        )
        for other, body in tags.items()
        if other != chosen
    ]
    if chosen in bare:
        what = f'tag {chosen!r} is a list of tasks, not {{"tasks": [...]}}: read as its tasks'
        dropped.append(Dropped(_path(chosen), what))
    return (
        tags[chosen]["tasks"],
        at,
        chosen,
        _dict(tags[chosen].get("metadata")),
        dropped,
    )


def _task_list(value: Any) -> bool:
    """Whether `value` is a list of tasks written straight under a tag, as some files have it."""
    return (
        bool(value)
        and isinstance(value, list)
        and all(isinstance(t, dict) and "id" in t and "title" in t for t in value)
    )


def _path(tag: str) -> str:
    return f"$.{tag}" if re.fullmatch(r"[A-Za-z_][\w-]*", tag) else f"$[{tag!r}]"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _check_version(meta: dict[str, Any], source: Path, at: str) -> None:
    version = meta.get("version")
    if version is not None and str(version).split(".")[0] != KNOWN_MAJOR:
        raise ImportFileError(
            f"Taskmaster format version {version}, which taskhand does not know "
            f"(it reads version {KNOWN_MAJOR}.x)",
            where=f"{source} at {at.rsplit('.', 1)[0]}.metadata.version",
            fix="save the tasks with a Taskmaster release that writes version 1, or "
            "report the new version",
        )


def _id_of(
    entry: Any,
    at: str,
    source: Path,
    parent: str | None = None,
    dropped: list[Dropped] | None = None,
) -> str:
    """A task's or subtask's id as text; anything but a whole number is a shape not known,
    but for a subtask's id written with a task's ("7.1"), read as its own number (reported
    when the task is not its parent)."""
    title = entry.get("title") if isinstance(entry, dict) else None
    if not isinstance(title, str):
        raise ImportFileError(
            "not a Taskmaster task: "
            + ("no title" if title is None else f"its title is {kind_of(title)}, not text"),
            where=f"{source} at {at}" + ("" if title is None else ".title"),
            fix="give each task an id and a title, as Taskmaster writes them",
        )
    raw = entry.get("id")
    text = str(raw).strip() if isinstance(raw, int | str) and not isinstance(raw, bool) else ""
    whole = _SUB_ID.match(text)
    if parent is not None and whole:
        if str(int(whole[1])) != parent and dropped is not None:
            what = f"subtask id {shown(raw)} of task {parent} names task {int(whole[1])}"
            dropped.append(Dropped(f"{at}.id", f"{what}: read as {parent}.{int(whole[2])}"))
        text = whole[2]
    if not _ID.match(text):
        if re.fullmatch(r"-[0-9]+", text):
            what = "is negative; Taskmaster numbers tasks from 1"
        elif re.fullmatch(r"[0-9]+", text):
            what = f"has {len(text)} digits, more than the 9 taskhand reads"
        else:
            what = "is not a whole number, as Taskmaster's file storage writes ids"
        raise ImportFileError(
            f"task id {shown(raw)} {what}",
            where=f"{source} at {at}.id",
            fix="give the tasks.json of Taskmaster's local file storage",
        )
    return str(int(text))


def _items(
    task: dict[str, Any],
    at: str,
    top: set[str],
    context: str,
    source: Path,
    unmapped: dict[str, tuple[int, str]],
    dropped: list[Dropped],
) -> list[Item]:
    """The items of one task: its subtasks first, each waiting for what the parent waits for
    (Taskmaster offers a parent's subtasks only once its dependencies are done), then the
    task itself, which depends on them: it completes and checks the whole."""
    key = _id_of(task, at, source)
    own = _deps(task, at, key, None, top, set(), dropped)
    raw_subtasks = Fields(task, at, key, dropped).of("subtasks", list) or []
    subs = [
        (n, s, f"{key}.{_id_of(s, f'{at}.subtasks[{n}]', source, key, dropped)}")
        for n, s in enumerate(raw_subtasks)
    ]
    siblings = {sub_key.split(".")[1] for _, _, sub_key in subs}
    finished = _status_text(task, at, key) in _FINISHED
    items = []
    for n, sub, sub_key in subs:
        where = f"{at}.subtasks[{n}]"
        what = f'subtask {sub_key} of task {key} "{task["title"]}"'
        item = _item(sub, where, sub_key, what, context, unmapped, dropped, finished)
        item.deps = [*_deps(sub, where, sub_key, key, top, siblings, dropped), *own]
        items.append(item)
    parent = _item(task, at, key, f"task {key}", context, unmapped, dropped)
    parent.deps = [*own, *(sub_key for _, _, sub_key in subs)]
    if subs:
        first = (
            "1 subtask comes first, as a task of its own"
            if len(subs) == 1
            else f"{len(subs)} subtasks come first, as tasks of their own"
        )
        parent.text += f"\n\nIts {first}; this task completes and checks the whole."
    open_subs = [i.key for i in items if i.done and i.done.startswith(_UNDER_FINISHED)]
    if open_subs:
        # Taskmaster's `next` offers no subtask of a finished task; neither may a run.
        named = list(dict.fromkeys(open_subs))
        listed = ", ".join(named[:8]) + (", ..." if len(named) > 8 else "")
        one = len(open_subs) == 1
        dropped.append(
            Dropped(
                f"{at}.status",
                f"{key} is {_status_text(task, at, key)} but {plural(len(open_subs), 'subtask')} "
                f"of it ({listed}) {'is' if one else 'are'} not: imported as DONE with it, as "
                "Taskmaster offers no subtask of a finished task (reopen "
                f"{'it' if one else 'them'} in the plan if the work remains)",
            )
        )
    return [*items, parent]


def _item(
    entry: dict[str, Any],
    at: str,
    key: str,
    what: str,
    context: str,
    unmapped: dict[str, tuple[int, str]],
    dropped: list[Dropped],
    under_finished: bool = False,
) -> Item:
    fields = Fields(entry, at, key, dropped)
    parts = [fields.text(k).strip() for k in ("description", "details")]
    notes = [f"{label}: {w}" for k, label in _TEXT_KEYS.items() if (w := fields.words(k))]
    origin = f"From {context}: {what}" + (f" ({'; '.join(notes)})." if notes else ".")
    item = Item(key, entry["title"], "\n\n".join([*filter(None, parts), origin]), 0, at)
    item.criteria = [
        line for k in ("testStrategy", "acceptanceCriteria") for line in fields.lines(k)
    ]
    files = fields.of("relevantFiles", list) or []
    item.paths = [
        f["path"]
        for f in files
        if isinstance(f, dict) and isinstance(f.get("path"), str) and f.get("action") in _WRITES
    ]
    item.done = _status(entry, at, key, context, dropped, under_finished)
    for name in entry:
        if name not in _MAPPED and name not in _TEXT_KEYS:
            count, first = unmapped.get(name, (0, f"{at}.{name}"))
            unmapped[name] = (count + 1, first)
    return item


_UNDER_FINISHED = "Imported as done with its parent"


def _status_text(
    entry: dict[str, Any], at: str, key: str, dropped: list[Dropped] | None = None
) -> str:
    """The status, as Taskmaster spells it; reported (when asked) if it is not text."""
    text = Fields(entry, at, key, [] if dropped is None else dropped).of("status", str) or ""
    return text.strip().lower() or TaskmasterStatus.PENDING


def _status(
    entry: dict[str, Any],
    at: str,
    key: str,
    context: str,
    dropped: list[Dropped],
    under_finished: bool,
) -> str | None:
    """The resolution of a task the source has finished, or whose parent it has finished
    (reported by the parent); None for one still to do."""
    raw = _status_text(entry, at, key, dropped)
    if raw in (TaskmasterStatus.DONE, TaskmasterStatus.COMPLETED):
        return f"Imported as done: {raw} in {context}."
    if raw == TaskmasterStatus.CANCELLED:
        dropped.append(
            Dropped(
                f"{at}.status",
                f"{key} is cancelled: imported as DONE (saying "
                "so in its resolution) so that no run takes it up",
            )
        )
        return f"Cancelled in {context}; imported as DONE so that no run takes it up."
    if under_finished:
        parent = key.split(".")[0]
        return f"{_UNDER_FINISHED} {parent}, finished in {context}; its own status was {raw}."
    if raw != TaskmasterStatus.PENDING:
        dropped.append(
            Dropped(
                f"{at}.status",
                f"{key}'s status '{raw}' has no home: imported as OPEN, so a run takes it up",
            )
        )
    return None


def _deps(
    entry: dict[str, Any],
    at: str,
    key: str,
    parent: str | None,
    top: set[str],
    siblings: set[str],
    dropped: list[Dropped],
) -> list[str]:
    """The dependencies of a task (parent None) or subtask, as the keys of their items."""
    raw = entry.get("dependencies")
    if isinstance(raw, str | int) and not isinstance(raw, bool):
        # Taskmaster's own commands take "2, 3": read so, and say the file is not as it writes
        listed = [d for d in re.split(r"[,\s]+", str(raw)) if d]
        dropped.append(
            Dropped(
                f"{at}.dependencies",
                f"{key}'s dependencies are {shown(raw)}, not a list: read as {shown(listed)}",
            )
        )
        raw = listed
    elif raw is not None and not isinstance(raw, list):
        Fields(entry, at, key, dropped).of("dependencies", list)
    found = []
    for n, dep in enumerate(raw if isinstance(raw, list) else []):
        text = str(dep).strip() if isinstance(dep, int | str) and not isinstance(dep, bool) else ""
        sub = _SUB_ID.match(text)
        if sub:
            found.append(f"{int(sub[1])}.{int(sub[2])}")
        elif (
            _ID.match(text)
            and parent is not None
            and (str(int(text)) in siblings or str(int(text)) not in top)
        ):
            found.append(f"{parent}.{int(text)}")  # a number in a subtask names a sibling
        elif _ID.match(text):
            found.append(str(int(text)))
        else:
            dropped.append(
                Dropped(
                    f"{at}.dependencies[{n}]",
                    f"{key}'s dependency {shown(dep)} is not a task id",
                )
            )
    return found
