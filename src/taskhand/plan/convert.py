"""Converting a plan between our two dialects: ids renamed (CODE-N <-> T-NNN) and every
dependency with them, phases, criteria and their commands kept; what the other dialect has
no field for is carried (plan/carried.py) or named, one line each, in the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan import carried, formats, publication
from taskhand.plan.formats import markdown, tasktrack
from taskhand.plan.formats.criteria import CriterionError, parse_duration
from taskhand.plan.formats.tasktrack_edit import now
from taskhand.plan.model import Dialect, Exchange, Phase, Plan, Status, Task, counter, id_key
from taskhand.plan.templates import default_code, render_files
from taskhand.plan.validate import validate
from taskhand.plan.write import check_out_folder, write_plan

OUTCOMES = ("Request", "Response", "Resolution", "Failure")
SECTION = " section"  # a Markdown task's lifecycle section among its carried settings
SETTINGS_FILE = "taskhand.toml"  # a plan's own settings, beside its files
# A Markdown overview with no text but its title, said in its TaskTrack overview's
# **Markdown settings**: the objective TaskTrack needs is the title, for TaskTrack alone.
OBJECTIVE = "objective"
UNTOLD = "the title"


class ConvertError(UserError):
    """A plan that cannot be converted as asked: the message says why, and the fix."""


@dataclass
class Conversion:
    source: Dialect
    plan: Plan  # in the target dialect, its root the output folder
    ids: dict[str, str]  # source id -> new id
    notes: list[str] = field(default_factory=list)  # carried as text, or dropped


def convert_folder(
    path: Path, out: Path, dialect: Dialect, code: str | None = None, spec: Path | None = None
) -> tuple[Conversion, list[Path]]:
    """Read the plan at `path`, convert it and write it into the new folder `out`; refused
    before anything is written when the plan has errors or `out` holds files."""
    check_out_folder(out)
    source = validate(path).require()
    if source.dialect is dialect:
        other = Dialect.MARKDOWN if dialect is Dialect.TASKTRACK else Dialect.TASKTRACK
        raise ConvertError(
            f"{path} is already a {dialect} plan", fix=f"convert it with --dialect {other}"
        )
    spec = publication.checked(spec, dialect)
    if spec is None and dialect is Dialect.TASKTRACK:
        spec = publication.nearby(path)
        found = spec
    else:
        found = None
    conversion = convert(source, dialect, out, code)
    if (source.root / SETTINGS_FILE).is_file():
        conversion.notes.append(
            f"the plan's {SETTINGS_FILE}: not copied (it may name what one dialect has and the "
            "other not); copy it in by hand if it still applies"
        )
    if dialect is Dialect.TASKTRACK and spec is None:
        conversion.notes.append(
            "the spec publication: the folder has none (taskhand ships none, and no TaskTrack "
            "plan of this repository holds one); copy a TaskTrack-<REVISION>.md into it, or "
            "convert again with --spec FILE"
        )
    elif found is not None:
        conversion.notes.append(f"the spec publication: copied from {found}")
    written = write_plan(conversion.plan, out, spec)
    conversion.notes += _not_given_back(source, conversion, out)
    return conversion, written


def _not_given_back(source: Plan, conversion: Conversion, out: Path) -> list[str]:
    """A note naming the files of `source` that converting `out` back would not give back
    byte for byte: ones laid out otherwise than taskhand writes them, which the way back
    writes its own way (the spec publication and the plan's settings aside)."""
    converted, _ = formats.load(out)
    if converted is None:
        return []
    way_back = convert(converted, source.dialect, source.root)
    back = render_files(way_back.plan)
    names = list(back)  # the overview's, then each task's, in the plan's order
    task_files = dict(zip((t.id for t in way_back.plan.tasks), names[1:], strict=True))
    files: list[tuple[Path | None, str | None]] = [
        (t.source, task_files.get(way_back.ids.get(conversion.ids.get(t.id, ""), "")))
        for t in source.tasks
    ]
    record = carried.take_section(source.overview_text, carried.PLAN_RECORD)[1]
    if source.dialect is Dialect.TASKTRACK or record:  # else a note of its own says why
        files.insert(0, (source.overview_path, names[0]))
    shown = [
        path.name + (f" (back as {name})" if name and name != path.name else "")
        for path, name in files
        if path is not None and (name != path.name or back[name].encode() != path.read_bytes())
    ]
    if not shown:
        return []
    listed = ", ".join(shown[:10]) + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")
    return [
        f"the way back (convert --dialect {source.dialect}) would not give back byte for "
        f"byte: {listed}: what the notes say is dropped, or a layout other than the one "
        "taskhand writes (docs/authoring.md, 'Round trips')"
    ]


def convert(source: Plan, dialect: Dialect, out: Path, code: str | None = None) -> Conversion:
    """`source` in `dialect`, its root `out`; nothing is read or written."""
    if dialect is Dialect.TASKTRACK:
        return to_tasktrack(source, out, code)
    if code is not None:
        raise ConvertError("--code applies to a TaskTrack result", fix="drop --code")
    return to_markdown(source, out)


def to_markdown(source: Plan, out: Path) -> Conversion:
    width = max([3, *(len(counter(t.id)) for t in source.tasks)])
    ids = {t.id: f"T-{int(counter(t.id)):0{width}d}" for t in source.tasks}
    notes = []
    tasks = []
    for task in source.tasks:
        extra = dict(task.extra)
        settings = carried.parse_items(extra.pop(carried.SETTINGS, ""))
        new = Task(
            ids[task.id],
            task.title,
            task.description,
            criteria=list(task.criteria),
            phase=task.phase,
            dependencies=[ids.get(d, d) for d in task.dependencies],
            kind=task.kind,
            pipeline=task.pipeline,
        )
        record = _record(task, source.created, extra)
        if record:  # first: a run's lifecycle sections come after it
            new.documents[carried.RECORD.lower()] = carried.render_items(record)
        _apply_settings(new, settings)
        tasks.append(new)
    recorded = [
        t.id
        for t, new in zip(source.tasks, tasks, strict=True)
        if carried.RECORD.lower() in new.documents
    ]
    if recorded:
        notes.append(
            f"statuses, update times, requests and outcomes of {', '.join(recorded)}: kept "
            f"as text in their '## {carried.RECORD}' sections (a Markdown run keeps statuses "
            "itself and starts every task OPEN)"
        )
    extra = dict(source.extra)
    kept = dict(carried.parse_items(extra.pop(carried.SETTINGS, "")))
    plan_items = [("Code", source.code or ""), ("Created", source.created or now())]
    if source.resources:
        plan_items.append(("Resources", ", ".join(source.resources)))
    plan_items += [
        (f"Phase {p.number}", p.title)
        for p in source.phases
        if p.title != f"Phase {p.number}" or not p.task_ids  # a phase without tasks too
    ]
    plan_items += list(extra.items())
    untold = kept.get(OBJECTIVE) == UNTOLD and source.objective == source.title
    body = "" if untold else carried.overview_prose(carried.shallow(source.objective))
    section = f"## {carried.PLAN_RECORD}\n{carried.render_items(plan_items)}"
    overview = "\n\n".join(part for part in (f"# {source.title}", body, section) if part)
    notes.append(
        f"the plan's code, creation time, resources and phase titles: kept as text in the "
        f"overview's '## {carried.PLAN_RECORD}' section"
    )
    if source.spec_path is not None:
        notes.append(f"the spec publication {source.spec_path.name}: dropped (Markdown has none)")
    notes += _empty_phases(source)
    plan = Plan(
        Dialect.MARKDOWN,
        out,
        source.title,
        tasks,
        [Phase(p.number, p.title, [ids[i] for i in p.task_ids if i in ids]) for p in source.phases],
        overview_text=overview.rstrip() + "\n",
    )
    return Conversion(source.dialect, plan, ids, notes)


def to_tasktrack(source: Plan, out: Path, code: str | None) -> Conversion:
    overview, plan_items = carried.take_section(source.overview_text, carried.PLAN_RECORD)
    recorded = dict(plan_items)
    code = code or recorded.get("Code") or default_code(out)
    if not tasktrack.CODE_RE.match(code):
        raise ConvertError(f"plan code {code!r} must be 3 to 5 letters A-Z", fix="--code FOO")
    stamp = recorded.get("Created") or now()
    numbers = {t.id: int(counter(t.id)) for t in source.tasks}
    usable = all(0 < n < 10**9 for n in numbers.values())  # TaskTrack's N: 1 to 9 digits
    if not usable or len(set(numbers.values())) < len(numbers):
        ordered = sorted(source.tasks, key=lambda t: (t.phase, id_key(t.id)))
        numbers = {t.id: n for n, t in enumerate(ordered, start=1)}
    ids = {i: f"{code}-{n}" for i, n in numbers.items()}
    listed = {int(name.split()[1]) for name in recorded if re.fullmatch(r"Phase \d{1,6}", name)}
    numbers_used = sorted({t.phase for t in source.tasks} | listed)
    phase_of = {old: new for new, old in enumerate(numbers_used, 1)}
    notes = []
    moved = [f"{old} -> {new}" for old, new in phase_of.items() if old != new]
    if moved:
        notes.append(
            f"phases renumbered 1, 2, 3 in order, as TaskTrack has them ({', '.join(moved)})"
        )
    tasks = []
    for task in source.tasks:
        record = carried.parse_items(task.documents.get(carried.RECORD.lower(), ""))
        new = Task(
            ids[task.id],
            task.title,
            task.description or task.title,
            criteria=list(task.criteria),
            phase=phase_of[task.phase],
            dependencies=[ids.get(d, d) for d in task.dependencies],
            kind=task.kind,
            pipeline=task.pipeline,
            updated=stamp,
        )
        settings = _settings(task)
        if settings:
            new.extra[carried.SETTINGS] = (
                f"kept for the way back:\n{carried.render_items(settings)}"
            )
        notes += _apply_record(new, record)
        tasks.append(new)
    with_settings = [t.id for t in source.tasks if _settings(t)]
    if with_settings:
        notes.append(
            f"paths, agents, models, timeouts, attempts and lifecycle sections of "
            f"{', '.join(with_settings)}: kept in their '**{carried.SETTINGS}**' fields "
            "(TaskTrack has no such fields: a run there neither confines nor routes them)"
        )
    phases = [
        Phase(n, recorded.get(f"Phase {old}") or f"Phase {n}")
        for old, n in sorted(phase_of.items())
    ]
    for task in sorted(tasks, key=lambda t: id_key(t.id)):
        phases[task.phase - 1].task_ids.append(task.id)
    title_line = f"# {source.title}"
    objective = carried.overview_text(overview.strip().removeprefix(title_line).strip())
    overview_settings = [(OBJECTIVE, UNTOLD)] if not objective else []
    if not plan_items:
        notes.append(
            f"overview.md has no '## {carried.PLAN_RECORD}' section: the code {code} and the "
            f"creation time are new; converting back writes them there, so overview.md comes "
            "back with that section added"
        )
    known = {"Code", "Created", "Resources", *(f"Phase {old}" for old in phase_of)}
    plan = Plan(
        Dialect.TASKTRACK,
        out,
        source.title,
        sorted(tasks, key=lambda t: id_key(t.id)),
        phases,
        code=code,
        objective=carried.deepen(objective) or source.title,
        created=stamp,
        resources=[r.strip() for r in recorded.get("Resources", "").split(",") if r.strip()],
        extra={name: value for name, value in plan_items if name not in known},
    )
    if overview_settings:
        plan.extra[carried.SETTINGS] = (
            f"kept for the way back:\n{carried.render_items(overview_settings)}"
        )
    return Conversion(source.dialect, plan, ids, notes)


def _record(task: Task, created: str | None, extra: dict[str, str]) -> carried.Items:
    """A TaskTrack task's fields that a Markdown task has no place for (`extra`: its fields
    taskhand does not know); none for a task that is simply OPEN since the plan was made."""
    items: carried.Items = []
    for exchange in task.exchanges:
        items.append(("Request", exchange.request))
        if exchange.response is not None:
            items.append(("Response", exchange.response))
    if task.resolution is not None:
        items.append(("Resolution", task.resolution))
    if task.failure is not None:
        items.append(("Failure", task.failure))
    items += list(extra.items())
    if task.status is Status.OPEN and not items and task.updated in (None, created):
        return []
    return [("Status", str(task.status)), ("Updated", task.updated or now()), *items]


def _apply_record(task: Task, record: carried.Items) -> list[str]:
    notes = []
    for name, value in record:
        if name == "Status" and value in Status.__members__:
            task.status = Status(value)
        elif name == "Updated":
            task.updated = value
        elif name == "Request":
            task.exchanges.append(Exchange(value))
        elif name == "Response" and task.exchanges and task.exchanges[-1].response is None:
            task.exchanges[-1].response = value
        elif name in ("Resolution", "Failure"):
            setattr(task, name.lower(), value)
        else:
            task.extra[name] = value
    missing = {Status.DONE: "resolution", Status.FAIL: "failure"}.get(task.status)
    if missing and getattr(task, missing) is None:
        setattr(task, missing, "(none recorded before the conversion)")
        notes.append(f"{task.id}: {task.status} without a {missing}; one was written to say so")
    if task.status is Status.WAIT and not (task.exchanges and task.exchanges[-1].response is None):
        task.status = Status.OPEN
        notes.append(f"{task.id}: WAIT without an open request; set OPEN")
    return notes


def _settings(task: Task) -> carried.Items:
    """A Markdown task's settings that TaskTrack has no field for, as frontmatter writes them."""
    items: carried.Items = []
    if task.paths:
        items.append(("paths", ", ".join(task.paths)))
    items += [(key, getattr(task, key)) for key in ("agent", "model") if getattr(task, key)]
    if task.timeout_seconds is not None:
        items.append(("timeout", f"{task.timeout_seconds:g}s"))
    if task.max_attempts is not None:
        items.append(("max_attempts", str(task.max_attempts)))
    items += list(task.extra.items())
    # A run's lifecycle sections (## Spec, ...), which TaskTrack keeps elsewhere.
    return items + [
        (f"{name}{SECTION}", text)
        for name, text in task.documents.items()
        if name != carried.RECORD.lower()
    ]


def _apply_settings(task: Task, settings: carried.Items) -> None:
    for key, value in settings:
        try:
            if key == "paths":
                task.paths = [p.strip() for p in value.split(",") if p.strip()]
            elif key in ("agent", "model") and value:
                setattr(task, key, value)
            elif key == "timeout":
                task.timeout_seconds = parse_duration(value)
            elif key == "max_attempts" and value.isdigit():
                task.max_attempts = int(value)
            elif key.endswith(SECTION) and key.removesuffix(SECTION) in markdown.DOCUMENTS:
                task.documents[key.removesuffix(SECTION)] = value
            else:
                task.extra[key] = value
        except CriterionError:
            task.extra[key] = value


def _empty_phases(source: Plan) -> list[str]:
    return [
        f"phase {p.number} ({p.title}): it has no tasks, which a Markdown plan cannot hold; "
        f"kept in the overview's '## {carried.PLAN_RECORD}' section for the way back"
        for p in source.phases
        if not p.task_ids
    ]
