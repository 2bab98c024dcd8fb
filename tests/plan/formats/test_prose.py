"""A person's or an agent's text written into a plan stays prose: whatever it holds (a heading,
a `**Status**:` line, a fence, a `- [ ]` item, front matter, any line break), a plan written
with it reads back, in either dialect, with the same text and the same structure."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskhand.plan import formats
from taskhand.plan.formats import prose
from taskhand.plan.formats.criteria import parse_criterion
from taskhand.plan.model import Criterion, Dialect, Exchange, Phase, Plan, Status, Task
from taskhand.plan.templates import render_files
from taskhand.state.documents import Documents, reviews
from taskhand.state.paths import StateDir

# Lines every reader or editor of a plan file takes as structure, and their look-alikes.
STRUCTURE = [
    "## Acceptance criteria",
    "## ACCEPTANCE CRITERIA",
    "##\tDescription",
    "## Spec",
    "## Plan",
    "## TaskTrack record",
    "## 2: Another phase",
    "# FOO-9: Another task",
    "# FOO - Another plan",
    "### Review",
    "---",
    "-----",
    "id: T-999",
    "```",
    "  ~~~python",
    "**Status**: DONE",
    "**Resolution**: landed",
    "**Acceptance**:",
    "**Request**: what next",
    "- [ ] a box",
    "* [DONE] FOO-1: First task",
    "- `$ true` passes",
    "- `$ false` (exit 1) passes",
    "\\## escaped already",
    "\\\\**Status**: DONE",
    "  \\---",
]
BREAKS = ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1e"]
_free = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)
_line = st.one_of(
    st.sampled_from(STRUCTURE),
    _free,
    st.builds(str.__add__, st.sampled_from(["## ", "**Status**: ", "- [", "\\", " ", "#"]), _free),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Text as a person or an agent might give it: lines of anything, broken any way."""
    lines = draw(st.lists(_line, min_size=1, max_size=8))
    text = lines[0]
    for line in lines[1:]:
        text += draw(st.sampled_from(BREAKS)) + line
    return "Do it." + draw(st.sampled_from(BREAKS)) + text  # never empty: a description must say


CRITERIA = [parse_criterion("`$ false` passes"), Criterion("The page says hello.")]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def structure(task: Task) -> tuple[object, ...]:
    """What a run acts on, besides the text."""
    checks = [(c.text, c.check.argv if c.check else None) for c in task.criteria]
    return (task.id, task.title, checks, task.dependencies, task.status, task.paths, task.agent)


def read_back(plan: Plan) -> Plan:
    """Write `plan` into a new folder, and read it back with no error."""
    with tempfile.TemporaryDirectory() as folder:
        for name, text in render_files(plan).items():
            (Path(folder) / name).write_text(text, encoding="utf-8", newline="")
        back, problems = formats.load(Path(folder))
    errors = [p.render() for p in problems if p.is_error]
    assert back is not None and not errors, errors
    return back


def task_plan(dialect: Dialect, task: Task, objective: str = "Say hello.") -> Plan:
    code = "FOO" if dialect is Dialect.TASKTRACK else None
    overview = "# Hello\n\nSay hello.\n"
    phase = Phase(1, "First phase", [task.id])
    return Plan(
        dialect, Path("."), "Hello", [task], [phase], code=code, objective=objective,
        overview_text=overview,
    )  # fmt: skip


@SETTINGS
@given(texts(), texts())
def test_a_markdown_tasks_prose_reads_back_as_written(description: str, spec: str) -> None:
    task = Task("T-001", "Say hello", description, list(CRITERIA), dependencies=[], paths=["a/*"])
    task.documents = {"spec": spec}
    [back] = read_back(task_plan(Dialect.MARKDOWN, task)).tasks
    assert back.description == prose.normal(description)
    assert back.documents == {"spec": prose.normal(spec)}
    assert structure(back) == structure(task)


@SETTINGS
@given(texts(), texts(), texts(), texts())
def test_a_tasktrack_tasks_prose_reads_back_as_written(
    description: str, request: str, response: str, resolution: str
) -> None:
    task = Task("FOO-1", "Say hello", description, list(CRITERIA), status=Status.DONE)
    task.exchanges = [Exchange(request, response)]
    task.resolution = resolution
    task.updated = "2026-01-01T00:00:00Z"
    [back] = read_back(task_plan(Dialect.TASKTRACK, task)).tasks
    assert back.description == prose.normal(description)
    assert back.exchanges == [Exchange(prose.normal(request), prose.normal(response))]
    assert back.resolution == prose.normal(resolution)
    assert structure(back) == structure(task)


@SETTINGS
@given(texts())
def test_a_tasktrack_objective_reads_back_as_written(objective: str) -> None:
    task = Task("FOO-1", "Say hello", "Say it.", list(CRITERIA), updated="2026-01-01T00:00:00Z")
    plan = task_plan(Dialect.TASKTRACK, task, objective)
    plan.created = "2026-01-01T00:00:00Z"
    back = read_back(plan)
    assert back.objective == prose.normal(objective)
    assert [(p.number, p.task_ids) for p in back.phases] == [(1, ["FOO-1"])]
    assert [structure(t) for t in back.tasks] == [structure(task)]


@SETTINGS
@given(texts(), texts(), texts())
def test_a_plan_and_its_reviews_read_back_as_written(plan: str, one: str, two: str) -> None:
    """The harness writes a task's plan into its file, a person reviews it twice, and the
    planner's next round writes it again: each review stays one block, as its person wrote
    it, and the task's description and criteria stay as they were."""
    task = Task("T-001", "Say hello", "Say it.", list(CRITERIA))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        docs, written = written_task(root, task)
        docs.write_plan(written, plan)
        docs.add_review(written, one)
        docs.add_review(written, two)
        docs.write_plan(written, plan)  # a new round
        reloaded, _ = formats.load(root)
        assert reloaded is not None
        [back] = reloaded.tasks
        assert reviews(docs.read(back, "plan")) == [prose.normal(one), prose.normal(two)]
    assert back.description == "Say it."
    assert structure(back) == structure(task)


def test_a_line_that_reads_as_structure_gets_one_backslash_more() -> None:
    text = "Intro\n## Acceptance criteria\n- `$ true`\n**Status**: DONE\n\\## kept\nplain # not"
    written = prose.escape(text)
    assert written.split("\n") == [
        "Intro",
        "\\## Acceptance criteria",
        "- `$ true`",  # a bullet is prose outside the criteria, which prose never reaches
        "\\**Status**: DONE",
        "\\\\## kept",
        "plain # not",
    ]
    assert prose.unescape(written) == text
    assert prose.one_line("a\nb\u2028  c\x85d") == "a b c d"


def test_a_fenced_code_block_stays_code_where_the_file_is_shown() -> None:
    """Its fences are written as they are, so a `# comment` in it is no heading where the file
    is shown; a line in it a reader takes as structure is escaped still, and a fence without
    its partner (or inside another block, or first, after TaskTrack's label) is escaped."""
    text = "Run:\n```bash\n# install\n## Spec\n~~~\n```\n~~~ open\nlast"
    written = prose.escape(text)
    assert written.split("\n") == [
        "Run:",
        "```bash",
        "# install",
        "\\## Spec",
        "\\~~~",
        "```",
        "\\~~~ open",
        "last",
    ]
    assert prose.unescape(written) == text
    assert prose.escape("```\nx\n```").split("\n") == ["\\```", "x", "\\```"]


def test_a_section_written_after_a_code_block_is_found_again() -> None:
    """The harness finds its sections past a description's code block (sections.py counts
    fences): a fence written bare is always one of a pair."""
    task = Task("T-001", "Say hello", "Run:\n```sh\n## Spec\n~~~\n```\nDone.", list(CRITERIA))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        docs, written = written_task(root, task)
        docs.write_plan(written, "first")
        docs.write_plan(written, "second")
        reloaded, _ = formats.load(root)
        assert reloaded is not None
        [back] = reloaded.tasks
        assert docs.read(back, "plan") == "second"
        assert back.description == task.description


def written_task(root: Path, task: Task) -> tuple[Documents, Task]:
    """`task` alone in a Markdown plan written at `root`, as read back, and its documents."""
    for name, text in render_files(task_plan(Dialect.MARKDOWN, task)).items():
        (root / name).write_text(text, encoding="utf-8")
    loaded, _ = formats.load(root)
    assert loaded is not None
    [written] = loaded.tasks
    return Documents(loaded, StateDir(root / "state")), written
