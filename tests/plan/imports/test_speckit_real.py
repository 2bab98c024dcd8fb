"""Spec Kit imports of real tasks.md files people committed (fixtures/speckit-real/, each
one's repository, path and commit in its SOURCES.md): every task, every dependency the file
writes (task lines, Dependencies sections, Parallel prose and diagrams), done states, what the
file says runs in parallel, the lines reported as unread, and a plan that validates, in both
dialects. The expectations are read off the files, not off the importer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from taskhand.plan.model import Dialect, Status
from tests.plan.imports import FIXTURES, holds, imported

REAL = FIXTURES / "speckit-real"


def ids(spec: str) -> list[str]:
    """`T001-T003 T007` as ['T001', 'T002', 'T003', 'T007']."""
    found: list[str] = []
    for part in spec.split():
        first, _, last = part.partition("-")
        if last:
            found += [f"T{n:03d}" for n in range(int(first[1:]), int(last[1:]) + 1)]
        else:
            found.append(first)
    return found


def pairs(later: str, first: str) -> list[tuple[str, str]]:
    """Each task of `later` waiting for each of `first`, as a statement over ranges says."""
    return [(a, b) for a in ids(later) for b in ids(first)]


@dataclass
class Real:
    tasks: list[str]  # in file order
    done: list[str]  # [X]
    deps: list[tuple[str, str]]  # (later, first): what the file writes
    free: list[str] = field(default_factory=list)  # said to run in parallel: wait for none
    unread: list[int] = field(default_factory=list)  # lines of statements reported unread


EXPECTED = {
    # `- [x] **T001**: ...`, `- [x] **T002 (US1)**: ... [P]`: a file refused whole before.
    "devfest-responsive-layout.md": Real(
        ids("T001-T012"),
        ids("T001-T012"),
        [],
        # "Within US1, tasks T003, T004, T005, T006, and T007 can be parallelized"
        free=ids("T002-T007"),
    ),
    # `- **T001** [X]: ...` with no checkbox; a mermaid graph; "in parallel after T001".
    "devfest-data-schema.md": Real(
        ids("T001-T015"),
        ids("T001-T010"),
        [
            *pairs("T002", "T001"),
            *pairs("T004", "T002 T003"),
            *pairs("T005", "T004"),
            *pairs("T010", "T008 T009"),
            *pairs("T012 T013", "T011"),
            *pairs("T014", "T012 T013"),
            *pairs("T015", "T014"),
            *pairs("T002-T004", "T001"),
        ],
        free=ids("T008 T009"),
    ),
    # `- **T001 [Setup]**: ...`; "T009 ... can be done after T006/T007".
    "devfest-partners.md": Real(
        ids("T001-T023"),
        [],
        [*pairs("T008", "T007"), *pairs("T009", "T006 T007")],
        free=ids("T010 T011"),
    ),
    # Ranges on both sides: "Tests (T004-T011) before implementation (T012-T023)".
    "portfolio-routing.md": Real(
        ids("T001-T033"),
        [],
        [
            *pairs("T012-T023", "T004-T011"),
            *pairs("T015-T023", "T012-T014"),
            *pairs("T020", "T017-T019"),
            *pairs("T024-T025", "T015-T022"),
        ],
        free=ids("T002-T014 T028-T031"),
        unread=[61],  # "Implementation before polish (T028-T033)": no ids for implementation
    ),
    # Several statements a line, phase lines naming their tasks, "parallel with".
    "padel-court-scores.md": Real(
        ids("T001-T026"),
        ids("T001-T026"),
        [
            *pairs("T002-T003", "T001"),
            *pairs("T004-T012", "T002-T003"),
            *pairs("T013-T018", "T002-T003"),
            *pairs("T014", "T008"),
            *pairs("T019-T021", "T014"),
            *pairs("T021", "T015"),
            *pairs("T015 T017 T018", "T016"),
            *pairs("T020", "T014"),
        ],
        free=ids("T004 T010 T011 T013 T016"),
        unread=[144, 148, 158],
    ),
    # "T013, T014, and T016 can run in parallel after T012".
    "padel-visual-redesign.md": Real(
        ids("T001-T039"),
        ids("T001-T036 T039"),
        [*pairs("T013 T014 T016", "T012"), *pairs("T021-T023", "T020")],
        free=ids("T003 T004"),
        # "after T005 starts", "after baseline shell alignment starts", "before validation"
        unread=[145, 148, 149],
    ),
    # Arrows between lists: "T009/T010 -> T018/T019/T027".
    "padel-ocr-learning.md": Real(
        ids("T001-T036"),
        ids("T001-T036"),
        [
            *pairs("T006 T008", "T005"),
            *pairs("T009", "T007"),
            *pairs("T018 T019 T027", "T009 T010"),
            *pairs("T024-T026", "T011 T012"),
            *pairs("T013 T014", "T015 T016"),
            *pairs("T024-T026", "T021-T023"),
        ],
        free=ids("T003 T004"),
    ),
    # "must precede", an arrow in a table, "parallel in Phase 4".
    "padel-summary-bugs.md": Real(
        ids("T001-T019"),
        [],
        [("T008", "T006")],
        free=ids("T002 T003 T011 T012 T013 T014"),
        unread=[160],  # "T009 verifies fix passes"
    ),
    # `T001b`, T019 written between T010 and T011, `(depends on T011, T014)` in task lines.
    "padel-fullscreen.md": Real(
        ids("T001 T001b T002-T010 T019 T011-T018 T020"),
        ids("T001 T001b T002-T010 T019 T011-T017"),
        [*pairs("T012-T015", "T011"), *pairs("T015", "T014"), *pairs("T020", "T019")],
        free=ids("T003-T010 T016 T017"),
    ),
    # Dependencies wrapped at 80 columns; T065-T074 written before T061-T064.
    "speck-reviewer-plugin.md": Real(
        ids("T001-T060 T065-T074 T061-T064"),
        [
            t
            for t in ids("T001-T060 T065-T074 T061-T064")
            if t not in ids("T005 T031 T041 T052 T053 T060")
        ],
        [*pairs("T063", "T061 T062")],
        free=ids("T003 T004 T061 T062 T064"),
        # 398-402, "User Story 4 (P2): ... depends on US2 state.ts (T018)", are held by phase
        # order; 396 says "may integrate with", 434 "other commands depend on it"
        unread=[396, 434],
    ),
    # A Parallel Example's diagram: "T016: EventTeamsRepository (depends on T013-T015)".
    "padel-gamemodes.md": Real(
        ids("T001-T067"),
        [],
        [*pairs("T016", "T013-T015"), *pairs("T019", "T017-T018")],
        free=ids("T003 T004 T005 T024 T026 T028 T030 T033 T037 T061 T062 T063"),
        # 256, "T030, T033, T037 ... parallel after Phase 2", is held by phase order
        unread=[219, 221, 223, 236, 254],
    ),
    # Task lines wrapped at 80 columns, `(depends on: T018, T019, T014)` across the wrap.
    "badzwanzen-add-players.md": Real(
        ids("T001-T026"),
        ids("T001-T026"),
        [
            *pairs("T008", "T007"),
            *pairs("T012", "T009 T008 T006"),
            *pairs("T013", "T010 T012"),
            *pairs("T014", "T011 T013"),
            *pairs("T015", "T014"),
            *pairs("T018", "T016 T012"),
            *pairs("T019", "T017"),
            *pairs("T020", "T018 T019 T014"),
            *pairs("T022", "T021 T020"),
            *pairs("T023", "T022"),
        ],
        free=ids("T002-T007 T009-T011 T016 T017 T021 T024-T026"),
    ),
    # `- [~] T008` in progress; "TDD: T001→T002, T004→T005."
    "corex-make-site.md": Real(
        ids("T001-T012"),
        ids("T001-T006 T009-T011"),
        [*pairs("T002", "T001"), *pairs("T005", "T004")],
        free=ids("T001 T004 T009"),
        unread=[47],  # "Foundational (T001–T002) blocks the stories": which tasks?
    ),
    # Wrapped task lines, `[~]`, "(T010–T012 → T013–T019; T021 → T022–T025; ...)".
    "corex-roadmap-closeout.md": Real(
        ids("T001-T037"),
        ids("T004-T034 T036 T037"),
        [
            *pairs("T003", "T001-T002"),
            *pairs("T013-T019", "T010-T012"),
            *pairs("T022-T025", "T021"),
            *pairs("T028-T032", "T027"),
            *pairs("T005 T006 T008", "T004"),
            *pairs("T030 T031", "T027-T029"),
        ],
        # "Polish (T034–T037) after the stories it documents/verifies": held by phase order
        free=ids("T002 T010-T012 T021 T027"),
    ),
    # Tasks as headings: `### [X] T003: [US1] ...`, `- **Depends on**: T002` below each one,
    # `### [I] T007` (a mark of the author's own), ids out of order, a mermaid chain.
    "devfest-event-overview.md": Real(
        ids("T001 T002 T003 T013 T014 T015 T016 T006 T007"),
        ids("T001 T002 T003 T013"),
        [
            *pairs("T003", "T002"),
            *pairs("T013", "T003"),
            *pairs("T014", "T013"),
            *pairs("T015", "T014"),
            *pairs("T016", "T015"),
            *pairs("T006", "T016"),
            *pairs("T007", "T006"),
        ],
    ),
    # Its first phase is "Setup (Baseline & Dependency)": a phase, its tasks kept.
    "padel-ocr-import.md": Real(
        ids("T001-T015"),
        [],
        [],
        # "T003 (helpers) and T004 (unit tests) can be written in parallel"
        free=ids("T003 T004 T008 T010 T012 T013"),
    ),
    # `— depends on T013, T012, T010, T008` at the end of task lines; an arrow chain ending
    # in prose ("→ consumed by all stories").
    "carrental-photo-storage.md": Real(
        ids("T001-T033"),
        [t for t in ids("T001-T033") if t != "T032"],
        [
            *pairs("T003", "T002"),
            *pairs("T007", "T005 T006"),
            *pairs("T008", "T005"),
            *pairs("T010", "T009 T004"),
            *pairs("T012", "T011"),
            *pairs("T014", "T013 T012 T010 T008"),
            *pairs("T016", "T015 T014"),
            *pairs("T017", "T016"),
            *pairs("T019", "T018"),
            *pairs("T020", "T019"),
            *pairs("T022", "T021 T008"),
            *pairs("T023", "T022"),
            *pairs("T025", "T024 T010 T008"),
            *pairs("T027", "T026 T025"),
            *pairs("T029", "T028 T008"),
            *pairs("T030", "T029"),
        ],
        free=ids("T001 T004-T006 T009 T011 T013 T015 T018 T021 T024 T026 T028 T030-T032"),
        # "→ consumed by all stories", "independent files after T003" (after: which tasks?)
        unread=[149, 161],
    ),
}


def test_every_fixture_names_its_source() -> None:
    sources = (REAL / "SOURCES.md").read_text()
    for name in EXPECTED:
        row = next((line for line in sources.splitlines() if f"`{name}`" in line), "")
        assert re.search(r"github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+tasks\.md", row), name
    kept = sorted(p.name for p in REAL.glob("*.md") if p.name != "SOURCES.md")
    assert len(EXPECTED) >= 10 and sorted(EXPECTED) == kept


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("fixture", list(EXPECTED))
def test_a_real_file_keeps_every_task_dependency_and_done_state(
    tmp_path: Path, fixture: str, dialect: Dialect
) -> None:
    expected = EXPECTED[fixture]
    done, plan = imported(tmp_path, f"speckit-real/{fixture}", dialect, code="REAL")
    assert list(done.ids) == expected.tasks
    for later, first in expected.deps:
        assert holds(plan, done.ids, later, first), f"{later} must wait for {first}"
        assert not holds(plan, done.ids, first, later), f"{first} waits for {later}: reversed"
    by_id = plan.by_id()
    for task in expected.free:
        assert by_id[done.ids[task]].dependencies == [], f"{task} runs in parallel"
    statuses = {s: by_id[t].status for s, t in done.ids.items()}
    if dialect is Dialect.TASKTRACK:
        assert [s for s, status in statuses.items() if status is Status.DONE] == expected.done
    assert not [d for d in done.dropped if "cycle" in d.what or "itself" in d.what]
    unread = [d.where for d in done.dropped if "no dependency form" in d.what]
    assert unread == [f"{fixture}:{n}" for n in expected.unread]
