"""How a Spec Kit tasks.md is read, form by form: the task lines people write, each dependency
statement on its own and never reversed, what the file writes winning over its order, prose
saying tasks run in parallel, wrapped lines, and paths that never forbid a task's own work."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan import lint
from taskhand.plan.imports import Imported, import_plan
from taskhand.plan.imports.speckit import paths_in
from taskhand.plan.model import Dialect, Status
from taskhand.plan.validate import validate


def imported(tmp_path: Path, text: str, dialect: Dialect = Dialect.TASKTRACK) -> Imported:
    tmp_path.mkdir(exist_ok=True)
    source = tmp_path / "tasks.md"
    source.write_text(text)
    code = "ABC" if dialect is Dialect.TASKTRACK else None
    done = import_plan(source, tmp_path / "out", dialect, code=code)
    assert not validate(tmp_path / "out").errors
    return done


def waits(done: Imported) -> dict[str, list[str]]:
    """Each source task and the source tasks it waits for, in the plan as written."""
    back = {v: k for k, v in done.ids.items()}
    return {back[t.id]: [back[d] for d in t.dependencies] for t in done.plan.tasks}


def test_the_task_lines_people_write_are_all_tasks(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# Tasks: X\n\n## Phase 1: Setup\n\n"
        "- [x] **T001**: Bold id with a colon\n"
        "- [X] **T002 (US1)**: Bold id and story, parallel at the end [P]\n"
        "1. [ ] T003 A numbered list\n"
        "2. [~] T004 In progress\n"
        "- [ ] [T005] A bracketed id\n\n"
        "## Notes\n\n- **T003** \u2014 a finding about it, no task\n\n"
        "## Dependencies\n\n- **T005** blocks nothing taskhand knows\n",
    )
    assert list(done.ids) == [f"T00{n}" for n in range(1, 6)]
    tasks = {s: done.plan.by_id()[t] for s, t in done.ids.items()}
    assert [s for s, t in tasks.items() if t.status is Status.DONE] == ["T001", "T002"]
    assert tasks["T001"].title == "Bold id with a colon"
    assert tasks["T002"].title == "Bold id and story, parallel at the end [P]"
    assert "Marked [~] (in progress) there." in tasks["T004"].description
    assert tasks["T004"].status is Status.OPEN
    assert waits(done)["T002"] == []  # its [P] at the end frees it


def test_a_file_without_checkboxes_has_its_bold_ids_as_tasks(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# Tasks: X\n\n## Phase 1: Setup\n\n"
        "- **T001** [X]: Done, marked after the id\n- **T002 [Setup]**: Open\n"
        "- ~~**T003 (US1)**~~: Struck through, crossed off\n",
    )
    tasks = {s: done.plan.by_id()[t] for s, t in done.ids.items()}
    assert [(s, t.title, t.status) for s, t in tasks.items()] == [
        ("T001", "Done, marked after the id", Status.DONE),
        ("T002", "Open", Status.OPEN),
        ("T003", "Struck through, crossed off", Status.DONE),
    ]


def test_a_task_written_as_a_heading_owns_the_lines_below_it(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1 \u2014 Setup\n\n### [X] T001: Create the data file\n\n"
        "- **File**: `src/data/dev/event.json`\n\n### T002 \u2014 Build the card\n"
        "- **File**: `src/features/card/Card.tsx`\n- **Depends on**: T001\n\n"
        "### [I] T003: [US1] Test it\n",
        Dialect.MARKDOWN,
    )
    tasks = {s: done.plan.by_id()[t] for s, t in done.ids.items()}
    assert [t.title for t in tasks.values()] == [
        "Create the data file",
        "Build the card",
        "Test it",
    ]
    assert tasks["T002"].paths == ["src/features/card/Card.tsx"]
    assert waits(done) == {"T001": [], "T002": ["T001"], "T003": ["T002"]}
    assert "Marked [I] there." in tasks["T003"].description


def test_a_file_of_bold_ids_only_is_a_spec_kit_file(tmp_path: Path) -> None:
    done = imported(tmp_path, "# Tasks: X\n\n## Phase 1\n\n- [x] **T001**: One\n")
    assert list(done.ids) == ["T001"]


def test_each_statement_of_a_line_is_read_on_its_own(tmp_path: Path) -> None:
    tasks = "".join(f"- [ ] T{n:03d} [P] Task {n}\n" for n in range(1, 32))
    done = imported(
        tmp_path,
        f"# Tasks: X\n\n## Phase 1\n\n{tasks}\n## Dependencies\n\n"
        "- T020 depends on T011\u2013T019; T021 depends on T020\n"
        "- Tests (T001-T003) before implementation (T004-T005)\n"
        "- T006 blocks T007, T008 unblocks T009\n"
        "- US2 extends US1 (T022 depends on T012, T023 depends on T014)\n"
        "- T010 after T009. Polish after everything (T024)\n"
        "- T025 needed for T026; T027 gates T028\n"
        "- T029 \u2192 T030 \u2192 consumed by all stories\n"
        "- T031: a line naming a task, saying nothing of order\n",
    )
    got = waits(done)
    assert set(got["T020"]) == {f"T{n:03d}" for n in range(11, 20)}
    assert got["T021"] == ["T020"]  # not T011-T019, and T020 not on itself
    assert set(got["T004"]) == set(got["T005"]) == {"T001", "T002", "T003"}
    assert got["T007"] == ["T006"] and got["T009"] == ["T008"]  # never reversed
    assert got["T022"] == ["T012"] and got["T023"] == ["T014"]
    assert got["T010"] == ["T009"]
    assert got["T026"] == ["T025"] and got["T028"] == ["T027"] and got["T030"] == ["T029"]
    assert got["T006"] == got["T008"] == got["T024"] == []
    assert [d.render() for d in done.dropped] == [
        "tasks.md:43: kept as text only: a statement naming tasks in no dependency form "
        "taskhand reads: 'Polish after everything (T024)'",
        "tasks.md:45: kept as text only: a line naming tasks in no dependency form taskhand "
        "reads: '- T029 \u2192 T030 \u2192 consumed by all stories'",
    ]


def test_arrows_read_the_way_most_of_the_files_arrows_point(tmp_path: Path) -> None:
    tasks = "".join(f"- [ ] T{n:03d} [P] Task {n}\n" for n in range(1, 7))
    forward = imported(
        tmp_path / "a",
        f"# X\n\n## Phase 1\n\n{tasks}\n## Dependencies\n\nT001 \u2192 T002\u2192\n"
        "T003 -> T004/T005\n",
    )
    assert waits(forward)["T003"] == ["T002"] and waits(forward)["T004"] == ["T003"]
    back = imported(
        tmp_path / "b",
        f"# X\n\n## Phase 1\n\n{tasks}\n## Dependencies\n\n"
        "- T003 \u2192 T002; T005 \u2192 T001 + T004; T006 \u2192 T005\n",
    )
    assert waits(back)["T003"] == ["T002"] and waits(back)["T006"] == ["T005"]
    assert set(waits(back)["T005"]) == {"T001", "T004"}


def test_what_the_file_writes_wins_over_its_order(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1\n\n- [ ] T001 One\n- [ ] T002 Two\n- [ ] T003 Three\n\n"
        "## Dependencies\n\n- T002 depends on T003\n",
    )
    # T003 waiting for T002, as the file's order would have it, would close a cycle: not made
    assert waits(done) == {"T001": [], "T002": ["T001", "T003"], "T003": []}
    assert not done.dropped


def test_prose_saying_tasks_run_in_parallel_frees_them(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1\n\n" + "".join(f"- [ ] T00{n} Task {n}\n" for n in range(1, 7)) + "\n"
        "## Dependencies & Execution Order\n\n### Parallel Opportunities\n\n"
        "- T002-T004 can run in parallel after T001\n"
        "- T006 can run in parallel with T005, after their shared setup\n",
    )
    got = waits(done)
    assert got["T002"] == got["T003"] == got["T004"] == ["T001"]
    assert set(got["T005"]) == {"T002", "T003", "T004"}
    assert got["T006"] == ["T005"]  # "after their shared setup" is unread: not freed
    assert [d.where for d in done.dropped] == ["tasks.md:17"]


def test_a_wrapped_line_is_part_of_its_task(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1\n\n- [ ] T001 [P] Write the storage helper\n"
        "- [ ] T002 Implement `storage.ts` to make T001 pass, in\n"
        "      `src/lib/storage.ts` (depends on:\n      T001)\n"
        "- [ ] T003 [P] Scaffold the Vite + React + TypeScript project at the repository root,\n"
        "      keeping the files there. Then add the template's files in `src/`\n",
        Dialect.MARKDOWN,
    )
    tasks = {s: done.plan.by_id()[t] for s, t in done.ids.items()}
    assert tasks["T002"].title == (
        "Implement `storage.ts` to make T001 pass, in `src/lib/storage.ts` (depends on: T001)"
    )
    assert tasks["T002"].paths == ["src/lib/storage.ts"]
    assert tasks["T002"].dependencies == [done.ids["T001"]]
    assert tasks["T003"].title == (
        "Scaffold the Vite + React + TypeScript project at the repository root, keeping the "
        "files there."
    )


def test_paths_taken_from_text_never_forbid_its_own_work(tmp_path: Path) -> None:
    assert paths_in("Add hooks in src/hooks and clients in src/lib/{db,api}") == [
        "src/hooks",
        "src/lib/db",
        "src/lib/api",
    ]
    assert paths_in("Read/write access and GET/POST routes") == []
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1\n\n"
        "- [ ] T001 [P] In src/features/cards/: add components/Card.tsx and `index.ts`\n"
        "- [ ] T002 [P] Identify layout components (e.g., `src/components/Header.tsx`)\n"
        "- [ ] T003 [P] Document the baseline in /home/me/src/app/notes.md\n",
        Dialect.MARKDOWN,
    )
    tasks = {s: done.plan.by_id()[t] for s, t in done.ids.items()}
    # a name the text does not place may sit under the folder it names: any depth
    assert tasks["T001"].paths == ["src/features/cards/", "**/components/Card.tsx", "**/index.ts"]
    assert tasks["T002"].paths == tasks["T003"].paths == []  # unsure: open, and said so
    assert "Imported with no paths: its text names paths as examples" in tasks["T002"].description
    assert [d.render() for d in done.dropped] == [
        "tasks.md:6: T002's paths are left open: its text names paths as examples ('e.g.'), "
        "so its work may go beyond them; name them in its task file to scope it",
        "tasks.md:7: T003's paths are left open: its text names '/home/', a path of one "
        "machine, not the repository's",
    ]

    # lint names them too, until a person scopes them (or deletes the note)
    def open_paths() -> list[str]:
        report = lint.lint(tmp_path / "out")
        return [f.message for f in lint.findings(report) if f.code == "paths-open"]

    t2, t3 = done.ids["T002"], done.ids["T003"]
    assert [m.split(":")[0] for m in open_paths()] == [t2, t3]
    assert "names paths as examples" in open_paths()[0] and "runs unscoped" in open_paths()[0]
    [source] = (tmp_path / "out").glob(f"{t2}-*.md")
    source.write_text(source.read_text().replace("\n---\n", "\npaths: src/components/\n---\n", 1))
    assert [m.split(":")[0] for m in open_paths()] == [t3]


def test_a_statement_naming_phases_is_held_by_their_order_or_reported(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1: Setup\n\n- [ ] T001 One\n\n"
        "## Phase 2: User Story 1\n\n- [ ] T002 Two\n\n"
        "## Phase 3: User Story 2\n\n- [ ] T003 Three\n- [ ] T004 Four\n\n"
        "## Dependencies\n\n"
        "- US2 (T003-T004) depends on US1; Setup (T001) blocks the stories\n"
        "- T003, T004 can run in parallel after Phase 1\n"
        "- User Story 2 - depends on the model (T002)\n"
        "- T002 depends on Phase 3\n",
    )
    assert waits(done) == {"T001": [], "T002": [], "T003": [], "T004": []}
    assert [d.render() for d in done.dropped] == [
        "tasks.md:21: kept as text only: a line naming tasks in no dependency form taskhand "
        "reads: '- T002 depends on Phase 3'"
    ]


def test_a_task_line_says_what_it_waits_for_and_what_waits_for_it(tmp_path: Path) -> None:
    done = imported(
        tmp_path,
        "# X\n\n## Phase 1\n\n- [ ] T001 [P] One\n- [ ] T002 [P] Two (deps: T001)\n"
        "- [ ] T003 [P] Three, after T001, T002 and before T004\n- [ ] T004 [P] Four\n"
        "- [ ] T005 [P] Five \u2014 depends on T001 and blocks T006\n- [ ] T006 [P] Six\n"
        "- [ ] T007 [P] Validate before saving, to pass T006 \u2014 depends on T006\n\n"
        "## Dependencies\n\n- US1 (T001-T007) shares a file (sequence them: T004 before T005)\n",
    )
    assert waits(done) == {
        "T001": [],
        "T002": ["T001"],
        "T003": ["T002"],  # and T001, which T002 already waits for
        "T004": ["T003"],
        "T005": ["T004"],  # and T001, which T004 already waits for
        "T006": ["T005"],
        "T007": ["T006"],  # not T006 waiting for T007: "before saving" names no task
    }
