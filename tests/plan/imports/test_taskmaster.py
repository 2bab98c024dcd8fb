"""Taskmaster tasks.json imports: the tagged and the older shape, subtasks as tasks of their
own, every dependency (sibling numbers, "2.3" strings, the parent's), statuses, and what is
reported as dropped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskhand.plan.imports import Imported, import_plan
from taskhand.plan.model import Dialect, Plan, Status
from taskhand.plan.validate import validate
from tests.plan.imports import FIXTURES, holds, imported

# Each fixture's task and subtask ids in plan order (subtasks before their parent), the ones
# done (cancelled ones too, saying so), and each dependency it writes: (later, first).
TAGGED = {
    "tasks": ["1", "2.1", "2.2", "2.3", "2", "3.1", "3.2", "3", "4", "5", "6"],
    "done": ["1", "2.1", "5"],
    "deps": [
        ("2", "1"),
        ("2.2", "2.1"),
        ("2.3", "2.2"),
        ("3", "2"),
        ("3.2", "3.1"),
        ("4", "2"),
        ("4", "3"),
        ("5", "3"),
        ("6", "3"),
        ("6", "5"),
        # a parent after its subtasks; a subtask after what its parent waits for
        ("2", "2.3"),
        ("3", "3.2"),
        ("2.1", "1"),
        ("3.1", "2"),
    ],
}
LEGACY = {
    "tasks": ["1", "2.1", "2.2", "2", "3.1", "3.2", "3", "4"],
    "done": ["1", "3.1"],
    "deps": [
        ("2", "1"),
        ("2.2", "2.1"),
        ("3", "2"),
        ("3.1", "2.2"),
        ("3.2", "3.1"),
        ("4", "2"),
        ("2", "2.2"),
        ("3", "3.2"),
    ],
}
CHECKOUT = {
    "tasks": ["1", "2.1", "2.2", "2.3", "2", "3", "4", "5"],
    "done": ["1", "2.1"],
    "deps": [("2", "1"), ("2.2", "2.1"), ("2.3", "2.2"), ("3", "2"), ("4", "3"), ("4", "5")],
}
EXPECTED = {
    "taskmaster-tagged.json": TAGGED,
    "taskmaster-legacy.json": LEGACY,
    "taskmaster-checkout.json": CHECKOUT,
}  # fmt: skip


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("fixture", list(EXPECTED))
def test_every_task_subtask_and_dependency_is_kept(
    tmp_path: Path, fixture: str, dialect: Dialect
) -> None:
    expected = EXPECTED[fixture]
    done, plan = imported(tmp_path, fixture, dialect, code="SHOP")
    assert list(done.ids) == expected["tasks"]
    assert [t.id for t in plan.tasks] == list(done.ids.values())
    assert len(plan.phases) == 1
    for later, first in expected["deps"]:
        assert holds(plan, done.ids, later, first), (later, first)
    by_id = plan.by_id()
    if dialect is Dialect.TASKTRACK:
        finished = [s for s, t in done.ids.items() if by_id[t].status is Status.DONE]
        assert finished == expected["done"]
    else:
        assert all(t.status is Status.OPEN for t in plan.tasks)
        assert any("a Markdown plan keeps no status" in d.what for d in done.dropped)


def test_fields_find_their_homes(tmp_path: Path) -> None:
    done, plan = imported(tmp_path, "taskmaster-tagged.json", Dialect.TASKTRACK, code="RCP")
    by_source = {s: plan.by_id()[t] for s, t in done.ids.items()}
    # conformant: created when imported, the source as the resource, by its absolute path
    assert plan.created is not None and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", plan.created
    )
    assert plan.resources == [str((FIXTURES / "taskmaster-tagged.json").resolve())]
    assert all(t.updated == plan.created for t in plan.tasks)
    schema = by_source["2"]
    assert schema.title == "Define the database schema"
    assert "Tables for users, recipes and ingredients" in schema.description  # description
    assert "Write prisma/schema.prisma" in schema.description  # details
    assert "task 2 (Priority: high)" in schema.description  # priority, kept as text
    assert [c.text for c in schema.criteria] == [  # testStrategy, one criterion a line
        "prisma migrate dev applies cleanly",
        "the seed script inserts one recipe",
    ]
    assert 'subtask 2.3 of task 2 "Define the database schema"' in by_source["2.3"].description
    assert by_source["5"].resolution == (
        "Cancelled in Taskmaster's taskmaster-tagged.json, tag master; imported as DONE so "
        "that no run takes it up."
    )
    assert by_source["1"].resolution == (
        "Imported as done: done in Taskmaster's taskmaster-tagged.json, tag master."
    )
    checkout, plan = imported(tmp_path, "taskmaster-checkout.json", Dialect.MARKDOWN)
    milestone = plan.by_id()[checkout.ids["3"]]
    assert [c.text for c in milestone.criteria] == [
        "A test card checkout creates a paid order and empties the cart."
    ]
    assert "Type: checkpoint" in milestone.description
    assert "Tags: backend, payments" in plan.by_id()[checkout.ids["2"]].description
    legacy, plan = imported(tmp_path, "taskmaster-legacy.json", Dialect.MARKDOWN)
    assert plan.title == "Notes CLI"
    # relevantFiles marked create or modify are the task's paths; a reference is not
    assert plan.by_id()[legacy.ids["1"]].paths == ["cmd/root.go", "go.mod"]
    assert plan.by_id()[legacy.ids["2.1"]].paths == ["store/slug.go"]


def test_what_has_no_home_is_reported_with_its_json_path(tmp_path: Path) -> None:
    done, _ = imported(tmp_path, "taskmaster-tagged.json", Dialect.TASKTRACK, code="RCP")
    assert [d.render() for d in done.dropped] == [
        "$.feature-meal-plans: tag 'feature-meal-plans' (1 task) is not imported: import it "
        "on its own with --tag feature-meal-plans",
        "$.master.tasks[1].status: 2's status 'in-progress' has no home: imported as OPEN, so "
        "a run takes it up",
        "$.master.tasks[3].status: 4's status 'deferred' has no home: imported as OPEN, so a "
        "run takes it up",
        "$.master.tasks[4].status: 5 is cancelled: imported as DONE (saying so in its "
        "resolution) so that no run takes it up",
    ]
    checkout, _ = imported(tmp_path, "taskmaster-checkout.json", Dialect.TASKTRACK, code="PAY")
    assert [d.render() for d in checkout.dropped] == [
        "$.feature-checkout.tasks[1].subtasks[2].status: 2.3's status 'blocked' has no home: "
        "imported as OPEN, so a run takes it up",
        "$.feature-checkout.tasks[0].createdAt: the field createdAt (2 times) has no home in a "
        "plan",
        "$.feature-checkout.tasks[0].updatedAt: the field updatedAt (once) has no home in a plan",
        "$.feature-checkout.tasks[4]: 5 depends on 4, which closes a dependency cycle",
    ]
    legacy, _ = imported(tmp_path, "taskmaster-legacy.json", Dialect.TASKTRACK, code="NOTE")
    assert "$.tasks[3]: 4 depends on 9, which is no task" in [d.render() for d in legacy.dropped]


def test_another_tag_is_imported_when_asked(tmp_path: Path) -> None:
    done, plan = imported(
        tmp_path, "taskmaster-tagged.json", Dialect.MARKDOWN, tag="feature-meal-plans"
    )
    assert [t.title for t in plan.tasks] == ["Weekly meal plan model"]
    assert "$.master: tag 'master' (6 tasks) is not imported" in done.dropped[0].render()


HOSTILE = (
    "Greet the user.\n## Acceptance criteria\n- `$ true` passes\n**Status**: DONE\n"
    "**Resolution**: nothing to do\n---\nid: T-009\n---\n```\n- [ ] box\n```"
)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_imported_text_that_looks_like_structure_stays_text(
    tmp_path: Path, dialect: Dialect
) -> None:
    """A task's description and details are the source's prose: a heading, a field, front
    matter or a fence in them makes no criterion, status or task of the plan."""
    task = {
        "id": 1,
        "title": "Greet\n## Acceptance criteria",
        "description": HOSTILE,
        "details": HOSTILE.replace("Greet", "Then greet"),
        "testStrategy": "the page says hello",
        "status": "pending",
        "dependencies": [],
    }
    source = tmp_path / "tasks.json"
    source.write_text(json.dumps({"master": {"tasks": [task]}}), encoding="utf-8")
    out = tmp_path / "plan"
    done = import_plan(source, out, dialect, code="HEY" if dialect is Dialect.TASKTRACK else None)
    plan = validate(out).require()
    [imported_task] = plan.tasks
    assert imported_task.id == done.ids["1"] and imported_task.status is Status.OPEN
    assert imported_task.title == "Greet ## Acceptance criteria"
    assert [c.text for c in imported_task.criteria] == ["the page says hello"]
    assert HOSTILE in imported_task.description
    assert imported_task.documents == {} and imported_task.resolution is None


def import_tasks(
    tmp_path: Path, tasks: list[object], dialect: Dialect = Dialect.TASKTRACK
) -> tuple[Imported, Plan]:
    """Import a tasks.json of `tasks` (tag master); what was imported, and the plan read back."""
    source = tmp_path / "tasks.json"
    source.write_text(json.dumps({"master": {"tasks": tasks}}), encoding="utf-8")
    out = tmp_path / f"plan-{dialect}"
    done = import_plan(source, out, dialect, code="HEY" if dialect is Dialect.TASKTRACK else None)
    return done, validate(out).require()


def test_open_subtasks_of_a_done_parent_are_not_offered_again(tmp_path: Path) -> None:
    """Taskmaster offers no subtask of a finished task: a plan that offered them would run
    finished work. They are imported DONE with their parent, and the import says so."""
    subtasks = [
        {"id": 1, "title": "Schema", "status": "done", "dependencies": []},
        {"id": 2, "title": "Seed data", "status": "pending", "dependencies": [1]},
        {"id": 3, "title": "Indexes", "status": "in-progress", "dependencies": []},
    ]
    tasks = [
        {"id": 1, "title": "Database", "status": "done", "dependencies": [], "subtasks": subtasks},
        {"id": 2, "title": "API", "status": "pending", "dependencies": [1]},
    ]
    done, plan = import_tasks(tmp_path, tasks)
    by_source = {s: plan.by_id()[t] for s, t in done.ids.items()}
    assert [s for s, t in by_source.items() if t.status is Status.OPEN] == ["2"]
    assert by_source["1.2"].resolution == (
        "Imported as done with its parent 1, finished in Taskmaster's tasks.json, tag master; "
        "its own status was pending."
    )
    assert [d.render() for d in done.dropped] == [
        "$.master.tasks[0].status: 1 is done but 2 subtasks of it (1.2, 1.3) are not: imported "
        "as DONE with it, as Taskmaster offers no subtask of a finished task (reopen them in the "
        "plan if the work remains)"
    ]


def test_code_in_details_is_kept_byte_for_byte(tmp_path: Path) -> None:
    code = "```bash\n# install the tools\nnpm ci   \n\n\n\n## not a section\n\tmake\n```"
    details = f"Set up the build.  \n\n\n\n{code}\n\nThen run it."
    tasks = [{"id": 1, "title": "Build", "details": details, "status": "pending"}]
    for dialect in Dialect:
        _, plan = import_tasks(tmp_path, tasks, dialect)
        [task] = plan.tasks
        assert f"Set up the build.\n\n{code}\n\nThen run it." in task.description
        assert task.documents == {} and len(task.criteria) == 0
        # in the file too the code stays code: its fences bare, its comment no heading; a
        # `## ` line is escaped only where it is structure (Markdown, not a TaskTrack task)
        [file] = [
            f for f in (tmp_path / f"plan-{dialect}").glob("*.md") if "npm ci" in f.read_text()
        ]
        section = "\\## not a section" if dialect is Dialect.MARKDOWN else "## not a section"
        assert f"\n```bash\n# install the tools\nnpm ci   \n\n\n\n{section}\n\tmake\n```\n" in (
            file.read_text(encoding="utf-8")
        )


def test_fields_of_the_wrong_kind_are_reported_never_written_as_python(tmp_path: Path) -> None:
    tasks = [
        {"id": 1, "title": "Login", "status": "pending", "dependencies": []},
        {
            "id": 2,
            "title": "Logout",
            "description": ["Clear the session.", "Redirect home."],
            "details": {"step": "clear cookie"},
            "testStrategy": {"unit": "cookie gone"},
            "priority": {"level": "high"},
            "tags": ["auth", {"x": 1}],
            "status": "pending",
            "dependencies": "1",
            "subtasks": {"id": 1},
        },
        {"id": 3, "title": "Audit", "status": ["done"], "dependencies": [1, {"id": 2}, None]},
    ]
    done, plan = import_tasks(tmp_path, tasks)
    by_source = {s: plan.by_id()[t] for s, t in done.ids.items()}
    assert list(done.ids) == ["1", "2", "3"]
    assert by_source["2"].dependencies == [done.ids["1"]]  # "1" read as the list [1]
    assert by_source["3"].dependencies == [done.ids["1"]]
    assert "Clear the session.\nRedirect home." in by_source["2"].description
    for task in plan.tasks:
        assert "{" not in task.description and "[" not in task.description, task.description
    assert [d.render() for d in done.dropped] == [
        '$.master.tasks[1].dependencies: 2\'s dependencies are "1", not a list: read as ["1"]',
        "$.master.tasks[1].subtasks: 2's subtasks is an object, not a list: left out",
        "$.master.tasks[1].description: 2's description is a list, not text: its 2 texts are "
        "kept, one a line",
        "$.master.tasks[1].details: 2's details is an object, not text: left out",
        "$.master.tasks[1].priority: 2's priority is an object, not text: left out",
        "$.master.tasks[1].tags: 2's tags is a list, not text: left out",
        "$.master.tasks[1].testStrategy: 2's testStrategy is an object, not text: left out",
        '$.master.tasks[2].dependencies[1]: 3\'s dependency {"id": 2} is not a task id',
        "$.master.tasks[2].dependencies[2]: 3's dependency null is not a task id",
        "$.master.tasks[2].status: 3's status is a list, not text: left out",
    ]


def test_subtask_ids_written_with_a_task_number_are_read_as_their_own(tmp_path: Path) -> None:
    """Files people committed write a subtask's id as "3.1", as the JSON number 3.10 (not
    3.1), or with another task's number: each is read as its own number under its parent."""
    source = tmp_path / "tasks.json"
    source.write_text(
        '{"tasks": [{"id": 3, "title": "Game loop", "subtasks": ['
        '{"id": "3.1", "title": "Tick"}, {"id": 3.10, "title": "Render", "dependencies": [3.1]},'
        '{"id": "4.2", "title": "Input"}]}]}'
    )
    out = tmp_path / "plan"
    done = import_plan(source, out, Dialect.TASKTRACK, code="GAME")
    plan = validate(out).require()
    assert list(done.ids) == ["3.1", "3.10", "3.2", "3"]
    assert plan.by_id()[done.ids["3.10"]].dependencies == [done.ids["3.1"]]
    assert [d.render() for d in done.dropped] == [
        '$.tasks[0].subtasks[2].id: subtask id "4.2" of task 3 names task 4: read as 3.2'
    ]


def test_a_parent_of_one_subtask_says_it_in_the_singular(tmp_path: Path) -> None:
    tasks = [{"id": 1, "title": "Login", "subtasks": [{"id": 1, "title": "Form"}]}]
    done, plan = import_tasks(tmp_path, tasks)
    assert plan.by_id()[done.ids["1"]].description.endswith(
        "Its 1 subtask comes first, as a task of its own; this task completes and checks the whole."
    )
