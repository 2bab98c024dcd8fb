"""Spec Kit tasks.md imports: every task and dependency of three files shaped like the public
template (current and older), in both dialects, and what is reported as dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan.imports.speckit import paths_in
from taskhand.plan.model import Dialect, Status
from tests.plan.imports import holds, imported

# What each fixture says: its task ids, the tasks done ([X]), and each dependency its text
# writes out or its order implies (a task without [P] after the one before it and the [P]
# ones between); (later, first).
ALBUMS = {
    "tasks": [f"T{n:03d}" for n in range(1, 21)],
    "done": ["T001", "T002"],
    "deps": [
        ("T002", "T001"),
        ("T007", "T004"),
        ("T007", "T005"),
        ("T007", "T006"),
        ("T012", "T010"),
        ("T012", "T011"),
        ("T012", "T008"),
        ("T013", "T012"),
        ("T014", "T013"),
        ("T017", "T016"),
        ("T017", "T015"),
        ("T020", "T018"),
        ("T008", "T007"),
        ("T015", "T014"),
        ("T018", "T017"),
    ],
    "free": ["T003", "T004", "T005", "T006", "T008", "T009", "T010", "T011", "T015"],
}
WEATHER = {
    "tasks": [f"T{n:03d}" for n in range(1, 19)],
    "done": ["T001", "T002"],
    "deps": [
        ("T008", "T004"),
        ("T013", "T007"),
        ("T009", "T008"),
        ("T010", "T008"),
        ("T015", "T014"),
        ("T012", "T011"),
        ("T016", "T013"),
        ("T002", "T001"),
    ],
    "free": ["T003", "T004", "T005", "T006", "T007", "T008", "T014", "T016", "T017"],
}
KANBAN = {
    "tasks": [f"T{n:03d}" for n in range(1, 20)],
    "done": [],
    "deps": [
        ("T009", "T008"),
        ("T010", "T009"),
        ("T011", "T007"),
        ("T014", "T012"),
        ("T017", "T015"),
        ("T006", "T004"),
        ("T018", "T017"),
    ],
    "free": ["T002", "T003", "T007", "T008", "T011", "T012", "T013", "T015", "T016"],
}
EXPECTED = {
    "speckit-albums.md": ALBUMS,
    "speckit-weather-cli.md": WEATHER,
    "speckit-kanban.md": KANBAN,
}  # fmt: skip


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("fixture", list(EXPECTED))
def test_every_task_and_dependency_is_kept(tmp_path: Path, fixture: str, dialect: Dialect) -> None:
    expected = EXPECTED[fixture]
    done, plan = imported(tmp_path, fixture, dialect, code="SHOP")
    assert list(done.ids) == expected["tasks"]
    assert [t.id for t in plan.tasks] == list(done.ids.values())
    for later, first in expected["deps"]:
        assert holds(plan, done.ids, later, first), (later, first)
    by_id = plan.by_id()
    for free in expected["free"]:  # [P] tasks wait for nothing: the phase is not serialized
        assert by_id[done.ids[free]].dependencies == [], free
    statuses = {s: by_id[t].status for s, t in done.ids.items()}
    if dialect is Dialect.TASKTRACK:
        assert [s for s, status in statuses.items() if status is Status.DONE] == expected["done"]
        for source in expected["done"]:
            assert "Imported as done" in (by_id[done.ids[source]].resolution or "")
    elif expected["done"]:
        assert any("a Markdown plan keeps no status" in d.what for d in done.dropped)


def test_phases_paths_and_checkpoints_are_carried_over(tmp_path: Path) -> None:
    done, plan = imported(tmp_path, "speckit-albums.md", Dialect.MARKDOWN)
    assert [p.title for p in done.plan.phases] == [
        "Setup (Shared Infrastructure)",
        "Foundational (Blocking Prerequisites)",
        "User Story 1 - Create an album (Priority: P1) 🎯 MVP",
        "User Story 2 - Share an album (Priority: P2)",
        "Polish & Cross-Cutting Concerns",
    ]
    by_source = {s: plan.by_id()[t] for s, t in done.ids.items()}
    assert by_source["T012"].paths == ["src/albums/services/albums.py"]
    assert by_source["T001"].paths == ["src/albums/", "tests/"]
    assert by_source["T020"].paths == []
    assert "[P] [US1]" in by_source["T010"].description
    assert 'under "Implementation for User Story 1"' in by_source["T010"].description
    # the story's checks go to its last task, which runs after all the others of the phase
    assert [c.text for c in by_source["T014"].criteria] == [
        "Independent Test: POST /albums then POST /albums/1/photos returns 201 and the photo lists",
        "Checkpoint: User Story 1 works on its own",
    ]
    # indented lines under a task belong to it
    assert "register the blueprints" in by_source["T007"].description
    assert "Ship User Story 1 as the MVP" in plan.overview_text
    assert "- Phase 3: User Story 1 - Create an album (Priority: P1)" in plan.overview_text


def test_what_has_no_home_is_reported_with_its_line(tmp_path: Path) -> None:
    done, _ = imported(tmp_path, "speckit-albums.md", Dialect.TASKTRACK)
    assert [d.render() for d in done.dropped] == [
        "speckit-albums.md:1: the front matter (lines 1-3)",
        "speckit-albums.md:19: a comment of the template",
        'speckit-albums.md:14: the section "Format: `[ID] [P?] [Story] Description`": it tells '
        "the file's format or restates tasks",
        'speckit-albums.md:110: the section "Parallel Example: User Story 1": it tells the '
        "file's format or restates tasks",
    ]
    kanban, _ = imported(tmp_path, "speckit-kanban.md", Dialect.TASKTRACK)
    assert [d.render() for d in kanban.dropped] == [
        "speckit-kanban.md:44: T014 depends on T016 of a later phase; phases run in order, so "
        "the dependency cannot hold"
    ]


def test_lines_taskhand_cannot_read_are_reported(tmp_path: Path) -> None:
    source = tmp_path / "tasks.md"
    source.write_text(
        "# Tasks: X\n\n## Phase 1: Setup\n\n- [ ] T001 One in a/one.py\n- [ ] T002 [P] Two\n\n"
        "- [ ] Three, with no id\n\n## Dependencies\n\n- T002 goes with T001 somehow\n"
        "- T001 -> T002\n"
    )
    from taskhand.plan.imports import import_plan

    done = import_plan(source, tmp_path / "out", Dialect.MARKDOWN)
    assert [d.render() for d in done.dropped] == [
        "tasks.md:12: kept as text only: a line naming tasks in no dependency form taskhand "
        "reads: '- T002 goes with T001 somehow'",
        "tasks.md:8: kept as text only: a checklist line with no task id: '- [ ] Three, with "
        "no id'",
    ]
    assert done.plan.by_id()["T-002"].dependencies == ["T-001"]  # the arrow, though [P]


def test_paths_are_told_from_prose() -> None:
    text = "Add GET/POST routes and read/write access in src/app/routes.py, docs/ and `setup.cfg`."
    assert paths_in(text) == ["src/app/routes.py", "docs/", "setup.cfg"]
    assert paths_in("Call https://example.com/a.py and /abs/file.py") == []


def test_an_id_written_twice_keeps_both_tasks(tmp_path: Path) -> None:
    source = tmp_path / "tasks.md"
    source.write_text(
        "# Tasks: X\n\n## Phase 1: Setup\n\n- [ ] T001 One\n- [ ] T002 Two\n- [ ] T002 Again\n"
        "- [ ] T003 [P] Three (depends on T002)\n"
    )
    from taskhand.plan.imports import import_plan

    done = import_plan(source, tmp_path / "out", Dialect.MARKDOWN)
    assert [t.title for t in done.plan.tasks] == ["One", "Two", "Again", "Three (depends on T002)"]
    assert done.plan.by_id()["T-004"].dependencies == ["T-002"]
    assert [d.render() for d in done.dropped] == [
        "tasks.md:7: T002 is written twice: it is imported as T-003, and a dependency on T002 "
        "means T-002"
    ]


def test_ids_with_a_letter_and_checks_naming_their_story(tmp_path: Path) -> None:
    source = tmp_path / "tasks.md"
    source.write_text(
        "# Tasks: X\n\n## Phase 3: User Story 2 — Ads (Priority: P2)\n\n"
        "- [ ] T141 [US2] Add the slot in `client/src/Ad.tsx`\n"
        "- [ ] T141a [P] [US2] Failing test in `test/ad_test.exs`\n"
        "- [x] T141b [US2] Wire it (depends on T141a)\n\n"
        "**Checkpoint (US2)**: the slot shows on every page\n"
    )
    from taskhand.plan.imports import import_plan

    done = import_plan(source, tmp_path / "out", Dialect.TASKTRACK, code="ADS")
    assert done.ids == {"T141": "ADS-1", "T141a": "ADS-2", "T141b": "ADS-3"}
    last = done.plan.by_id()["ADS-3"]
    assert last.dependencies == ["ADS-1", "ADS-2"] and last.status is Status.DONE
    assert [c.text for c in last.criteria] == ["Checkpoint: the slot shows on every page"]
    assert done.plan.by_id()["ADS-2"].paths == []  # TaskTrack keeps them in the text only
    assert "`test/ad_test.exs`" in done.plan.by_id()["ADS-2"].description


@pytest.mark.parametrize("dialect", list(Dialect))
def test_a_tasks_indented_details_that_look_like_structure_stay_its_text(
    tmp_path: Path, dialect: Dialect
) -> None:
    """The lines indented under a task are its text: one that reads like a section, a field,
    front matter or a checkbox makes no criterion, status or task of the plan."""
    details = ["## Acceptance criteria", "- `$ true` passes", "**Status**: DONE", "---", "- [ ] x"]
    source = tmp_path / "tasks.md"
    source.write_text(
        "# Tasks: X\n\n## Phase 1: Setup\n\n- [ ] T001 Write a/one.py\n"
        + "".join(f"  {line}\n" for line in details)
    )
    from taskhand.plan.imports import import_plan
    from taskhand.plan.validate import validate

    import_plan(
        source, tmp_path / "out", dialect, code="ONE" if dialect is Dialect.TASKTRACK else None
    )
    [task] = validate(tmp_path / "out").require().tasks
    assert task.description.endswith("task T001.\n" + "\n".join(details))
    assert task.criteria == [] and task.status is Status.OPEN
