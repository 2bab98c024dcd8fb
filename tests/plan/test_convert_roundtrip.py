"""Round trips, as docs/authoring.md promises them: a plan in the form taskhand writes (init,
import, author, convert), converted to the other dialect and back, gives back the same files
byte for byte, in both directions; free text keeps its headings (with or without text under
them), its blank lines, code fences and odd whitespace. A file laid out otherwise is named in
a note, since the way back writes it taskhand's way."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskhand.plan import carried
from taskhand.plan.convert import convert_folder
from taskhand.plan.imports import import_plan
from taskhand.plan.model import Criterion, Dialect, Exchange, Phase, Plan, Status, Task
from taskhand.plan.templates import init_plan
from taskhand.plan.validate import validate
from taskhand.plan.write import write_plan

SPEC_TEXT = "# The TaskTrack Specification (stand-in for tests)\n"
FIXTURES = Path(__file__).parent / "imports" / "fixtures"
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))

# Lines a person writes into an objective, an overview or a description: headings of every
# level with and without text under them, what reads as structure in either dialect (escaped
# when written), code fences, list items, and whitespace of every odd kind.
LINES = st.sampled_from(
    [
        "", "", "### Notes", "### Notes", "## Goal", "## TaskTrack plan", "# Top", "#### Deep",
        "###### Six", "####### Seven", "##", "### ", "\\## escaped", "\\\\### two", "```",
        "```python", "~~~", "    code()", "\tTabbed", "trailing  ", "- item", "* [OPEN] X-1: y",
        "- [ ] box", "**Status**: DONE", "---", "Some words.", "Notes", "a\u00a0b", " lead",
        "- TaskTrack record", "## Acceptance criteria", "Paths: `src/a.py`.",
    ]
)  # fmt: skip
WORDS = st.sampled_from(["Count", "words", "in", "wc.py", "#7", "a:b", "`x`", "-", "(c)"])


@st.composite
def prose_text(draw: st.DrawFn) -> str:
    """Free text as a reader gives it back: lines, no space around the whole."""
    text = "\n".join(draw(st.lists(LINES, min_size=1, max_size=12))).strip()
    return text or draw(WORDS)


def one_line(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(WORDS, min_size=1, max_size=5)))


@st.composite
def plans(draw: st.DrawFn, dialect: Dialect) -> Plan:
    tasktrack = dialect is Dialect.TASKTRACK
    created = "2026-12-01T09:00:00Z"
    phases: list[Phase] = []
    tasks: list[Task] = []
    numbers = iter(sorted(draw(st.sets(st.integers(1, 999), min_size=1, max_size=7))))
    # TaskTrack may have a phase without tasks (validate warns); Markdown cannot say one.
    counts = draw(st.lists(st.integers(0 if tasktrack else 1, 3), min_size=1, max_size=3))
    counts[0] = max(counts[0], 1)
    for phase_number, count in enumerate(counts, start=1):
        title = draw(st.sampled_from([f"Phase {phase_number}", "Setup", "User Story 1 - Save"]))
        phase = Phase(phase_number, title)
        for _ in range(count):
            number = next(numbers, None)
            if number is None:
                break
            task_id = f"FOO-{number}" if tasktrack else f"T-{number:03d}"
            task = Task(task_id, one_line(draw), draw(prose_text()), phase=phase_number)
            task.criteria = [
                Criterion(c)
                for c in draw(
                    st.lists(
                        st.sampled_from(["prints 0", "`$ python -m pytest -q` passes", "Notes"]),
                        max_size=2,
                    )
                )
            ]
            if phase.task_ids:  # on earlier tasks of its phase: no cycle, none across phases
                task.dependencies = draw(st.lists(st.sampled_from(phase.task_ids), unique=True))
            task.kind = draw(st.sampled_from([None, "logic", "ui"]))
            if tasktrack:
                _tasktrack_state(draw, task, created)
            else:
                task.paths = draw(st.lists(st.sampled_from(["src/a.py", "tests/"]), unique=True))
                task.model = draw(st.sampled_from([None, "sonnet"]))
                task.timeout_seconds = draw(st.sampled_from([None, 900.0]))
                task.max_attempts = draw(st.sampled_from([None, 2]))
                for name in draw(st.lists(st.sampled_from(["spec", "plan", "questions"]))):
                    task.documents[name] = draw(prose_text())  # a run's lifecycle sections
            phase.task_ids.append(task_id)
            tasks.append(task)
        if phase.task_ids or tasktrack:
            phases.append(phase)
    title = one_line(draw)
    plan = Plan(dialect, Path("."), title, tasks, phases)
    if tasktrack:
        plan.code, plan.created, plan.objective = "FOO", created, draw(prose_text())
        plan.resources = draw(st.sampled_from([[], ["/srv/req.md", "/srv/b.md"]]))
        plan.extra = draw(st.sampled_from([{}, {"Owner": "Ana\n### Notes"}]))  # kept as is
    else:
        plan.overview_text = _overview(draw, title, phases, created)
    return plan


def _tasktrack_state(draw: st.DrawFn, task: Task, created: str) -> None:
    task.status = draw(st.sampled_from(list(Status)))
    task.updated = draw(st.sampled_from([created, "2026-12-02T10:00:00Z"]))
    if task.status is Status.WAIT or draw(st.booleans()):
        task.exchanges = [Exchange(draw(prose_text()), draw(st.sampled_from([None, "Yes."])))]
        if task.status is Status.WAIT:
            task.exchanges.append(Exchange(draw(prose_text())))
    if task.status is Status.DONE:
        task.resolution = draw(prose_text())
    if task.status is Status.FAIL:
        task.failure = draw(prose_text())


def _overview(draw: st.DrawFn, title: str, phases: list[Phase], created: str) -> str:
    """A Markdown overview: its title, free text (raw `## ` headings too) and, when it came
    from TaskTrack, its `## TaskTrack plan` section last."""
    lines = draw(st.lists(LINES.filter(lambda line: line != "## TaskTrack plan"), max_size=12))
    body = carried.overview_prose("\n".join(lines).strip())
    parts = [f"# {title}", body]
    if draw(st.booleans()):
        items = [("Code", "FOO"), ("Created", created)]
        items += [(f"Phase {p.number}", p.title) for p in phases if p.title != f"Phase {p.number}"]
        parts.append(f"## {carried.PLAN_RECORD}\n{carried.render_items(items)}")
    return "\n\n".join(part for part in parts if part) + "\n"


def round_trip(
    folder: Path, dialect: Dialect, work: Path
) -> tuple[list[str], list[str], list[str]]:
    """`folder` converted to the other dialect and back; the files that differ, and the
    notes of each conversion."""
    work.mkdir()
    spec = work / "TaskTrack-v1.md"
    spec.write_text(SPEC_TEXT)
    other = Dialect.MARKDOWN if dialect is Dialect.TASKTRACK else Dialect.TASKTRACK

    def given(target: Dialect) -> Path | None:
        return spec if target is Dialect.TASKTRACK else None

    there, _ = convert_folder(folder, work / "there", other, spec=given(other))
    back, _ = convert_folder(work / "there", work / "back", dialect, spec=given(dialect))
    names = {p.name for p in folder.iterdir()} | {p.name for p in (work / "back").iterdir()}
    differ = [
        name
        for name in sorted(names)
        if not (folder / name).is_file()
        or not (work / "back" / name).is_file()
        or (folder / name).read_bytes() != (work / "back" / name).read_bytes()
    ]
    return differ, there.notes, back.notes


def assert_comes_back(folder: Path, dialect: Dialect, work: Path) -> None:
    """Byte for byte; a Markdown plan that never was TaskTrack the second time, its
    overview having gained the `## TaskTrack plan` section (a code and a time) the first."""
    differ, there, back = round_trip(folder, dialect, work / "first")
    notes = there + back
    assert not_given_back(notes) == []
    overview = folder / "overview.md"
    if dialect is Dialect.MARKDOWN and f"\n## {carried.PLAN_RECORD}\n" not in overview.read_text():
        assert differ == ["overview.md"]
        back = (work / "first" / "back" / "overview.md").read_text()
        assert back.startswith(overview.read_text().rstrip("\n") + "\n\n## TaskTrack plan\n")
        assert any("converting back writes them there" in note for note in notes)
        differ, there, back = round_trip(work / "first" / "back", dialect, work / "second")
        assert not_given_back(there + back) == []
    assert differ == []


def written(plan: Plan, folder: Path) -> Path:
    spec = folder.parent / "TaskTrack-v1.md"
    spec.write_text(SPEC_TEXT)
    write_plan(plan, folder, spec if plan.dialect is Dialect.TASKTRACK else None)
    report = validate(folder)
    assert report.errors == [], [p.render() for p in report.errors]
    return folder


def not_given_back(notes: list[str]) -> list[str]:
    return [n for n in notes if "would not give back" in n]


@SETTINGS
@given(plans(Dialect.TASKTRACK))
def test_tasktrack_to_markdown_and_back_is_byte_for_byte(plan: Plan) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        assert_comes_back(written(plan, work / "plan"), Dialect.TASKTRACK, work)


@SETTINGS
@given(plans(Dialect.MARKDOWN))
def test_markdown_to_tasktrack_and_back_is_byte_for_byte(plan: Plan) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        assert_comes_back(written(plan, work / "plan"), Dialect.MARKDOWN, work)


def _imported_or_init() -> list[tuple[str, Dialect]]:
    sources = [f.name for f in sorted(FIXTURES.glob("speckit-*.md"))] + ["init"]
    return [(name, dialect) for name in sources for dialect in Dialect]


@pytest.mark.parametrize(("source", "dialect"), _imported_or_init())
def test_imported_and_init_plans_come_back_byte_for_byte(
    source: str, dialect: Dialect, tmp_path: Path
) -> None:
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text(SPEC_TEXT)
    given = spec if dialect is Dialect.TASKTRACK else None
    folder = tmp_path / "plan"
    if source == "init":
        init_plan(folder, dialect, "INIT", "Notes app", given)
        objective = "\n\n### Notes\n\n### Risks\nNone yet.\n"  # a person's headings, one empty
        overview = next(folder.glob("*TaskTrack.md" if given else "overview.md"))
        text = overview.read_text()
        marker = "\n\n**Created**" if given else "\n\n## Context"
        overview.write_text(text.replace(marker, objective.rstrip("\n") + marker, 1))
    else:
        import_plan(FIXTURES / source, folder, dialect, "SPECK", given)
    assert_comes_back(folder, dialect, tmp_path)


def test_a_file_laid_out_by_hand_is_named_as_not_coming_back(tmp_path: Path) -> None:
    folder = tmp_path / "plan"
    plan = Plan(Dialect.MARKDOWN, folder, "Feature", [Task("T-001", "Parse", "Parse it.")], [])
    plan.phases = [Phase(1, "Phase 1", ["T-001"])]
    plan.overview_text = "# Feature\n\n## Goal\nShip it.\n"
    written(plan, folder)
    task = next(folder.glob("T-001-*.md"))
    task.write_text(task.read_text().replace("title: Parse", "title:   Parse"))  # by hand
    conversion, _ = convert_folder(folder, tmp_path / "tt", Dialect.TASKTRACK)
    assert not_given_back(conversion.notes) == [
        "the way back (convert --dialect markdown) would not give back byte for byte: "
        "T-001-parse.md: what the notes say is dropped, or a layout other than the one "
        "taskhand writes (docs/authoring.md, 'Round trips')"
    ]
    shutil.rmtree(tmp_path / "tt")
    task.write_text(task.read_text().replace("title:   Parse", "title: Parse"))
    conversion, _ = convert_folder(folder, tmp_path / "tt", Dialect.TASKTRACK)
    assert not_given_back(conversion.notes) == []
    shutil.rmtree(tmp_path / "tt")
    task.rename(folder / "T-001-mine.md")
    conversion, _ = convert_folder(folder, tmp_path / "tt", Dialect.TASKTRACK)
    assert "byte for byte: T-001-mine.md (back as T-001-parse.md): " in conversion.notes[-1]


EDITS = {
    Dialect.MARKDOWN: [
        ("title: ", "title:  "),  # spacing the reader drops
        ("---\nid: ", "---\nkind: logic\nid: "),  # front matter in another order
    ],
    Dialect.TASKTRACK: [
        ("**Acceptance**", "```\n\n**Acceptance**"),  # a raw code fence, written escaped
        ("\n* [", "\n- ["),  # entries marked with -
    ],
}


def named(notes: list[str]) -> set[str]:
    """The files a note says would not come back."""
    found = not_given_back(notes)
    if not found:
        return set()
    names = found[0].split("byte for byte: ", 1)[1].split(": what the notes say", 1)[0]
    return {name.split(" (back as ")[0] for name in names.split(", ")}


@SETTINGS
@given(st.sampled_from(list(Dialect)).flatmap(lambda d: st.tuples(plans(d), st.data())))
def test_each_file_that_does_not_come_back_is_named(drawn: tuple[Plan, st.DataObject]) -> None:
    plan, data = drawn
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = written(plan, work / "plan")
        for path in sorted(folder.glob("*.md")):  # a person's edits, here and there
            old, new = data.draw(st.sampled_from([("", ""), *EDITS[plan.dialect]]))
            path.write_text(path.read_text().replace(old, new, 1) if old else path.read_text())
        if validate(folder).errors:
            return  # an edit this plan does not take
        differ, first, _ = round_trip(folder, plan.dialect, work / "trip")
        overview = (folder / "overview.md").read_text() if not plan.code else ""
        if plan.dialect is Dialect.MARKDOWN and f"## {carried.PLAN_RECORD}" not in overview:
            differ = [name for name in differ if name != "overview.md"]  # a note of its own
        assert set(differ) == named(first)


def test_a_tasktrack_description_as_a_person_writes_it_comes_back(tmp_path: Path) -> None:
    plan = Plan(Dialect.TASKTRACK, tmp_path, "Notes", [], [Phase(1, "Core", ["NOTE-1"])])
    plan.code, plan.created, plan.objective = "NOTE", "2026-12-01T09:00:00Z", "Take notes."
    plan.tasks = [Task("NOTE-1", "Add", "Add notes.", updated=plan.created)]
    folder = written(plan, tmp_path / "plan")
    task = folder / "NOTE-1.md"
    by_hand = "Add notes.\n\n## Notes\n\n```python\nadd()\n```\n\n---\n- [ ] a step\n~~~"
    task.write_text(task.read_text().replace("Add notes.", by_hand))
    assert validate(folder).errors == []
    assert_comes_back(folder, Dialect.TASKTRACK, tmp_path)
    middle = next((tmp_path / "first" / "there").glob("T-001-*.md")).read_text()
    # in Markdown a closed code block stays code (its fences bare); the rest is escaped
    assert "\\## Notes\n\n```python\nadd()\n```\n\n\\---\n\\- [ ] a step\n\\~~~" in middle


def test_a_line_escaped_the_old_way_in_a_tasktrack_file_reads_as_it_was(tmp_path: Path) -> None:
    plan = Plan(Dialect.TASKTRACK, tmp_path, "Notes", [], [Phase(1, "Core", ["NOTE-1"])])
    plan.code, plan.created, plan.objective = "NOTE", "2026-12-01T09:00:00Z", "Take notes."
    plan.tasks = [Task("NOTE-1", "Add", "Add notes.", updated=plan.created)]
    folder = written(plan, tmp_path / "plan")
    task = folder / "NOTE-1.md"
    task.write_text(task.read_text().replace("Add notes.", "Add notes.\n\\```\nadd()\n\\```"))
    [read] = validate(folder).require().tasks
    assert read.description == "Add notes.\n```\nadd()\n```"
