"""A plan an author returns as data: the model it becomes in each dialect, and what is wrong
with malformed data, in sentences an agent can act on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from taskhand.plan import lint
from taskhand.plan.authored import Frame, build, build_all
from taskhand.plan.formats.markdown import PATH_SEPARATOR
from taskhand.plan.model import Check, Dialect, Status
from taskhand.plan.write import write_plan
from tests.run.authoring import fixed_plan

STAMP = "2026-01-02T03:04:05Z"


def frame(dialect: Dialect, code: str = "") -> Frame:
    return Frame(dialect, Path("plan"), ("/docs/req.md",), STAMP, code)


def test_tasktrack_gets_ids_statuses_stamps_and_resources() -> None:
    plan = build(fixed_plan(), frame(Dialect.TASKTRACK))
    assert not isinstance(plan, list)
    assert [t.id for t in plan.tasks] == ["WCNT-1", "WCNT-2", "WCNT-3", "WCNT-4"]
    assert {t.status for t in plan.tasks} == {Status.OPEN}
    assert plan.created == STAMP and {t.updated for t in plan.tasks} == {STAMP}
    assert plan.resources == ["/docs/req.md"]
    assert [(p.number, p.title, p.task_ids) for p in plan.phases] == [
        (1, "Core", ["WCNT-1", "WCNT-2"]),
        (2, "Documentation", ["WCNT-3", "WCNT-4"]),
    ]
    assert plan.tasks[3].dependencies == ["WCNT-3"]
    assert plan.tasks[0].description.endswith("Paths: `wc.py`.") and plan.tasks[0].paths == []
    assert plan.tasks[0].criteria[0].check == Check(("python", "-c", "pass"))


def test_markdown_gets_padded_ids_paths_and_an_overview() -> None:
    plan = build(fixed_plan(), frame(Dialect.MARKDOWN))
    assert not isinstance(plan, list)
    assert [t.id for t in plan.tasks] == ["T-001", "T-002", "T-003", "T-004"]
    assert plan.code is None and plan.tasks[0].paths == ["wc.py"]
    assert "## Phases\n1. Core\n2. Documentation" in plan.overview_text
    assert "- /docs/req.md" in plan.overview_text


def test_a_persons_code_wins_over_the_authors() -> None:
    plan = build(fixed_plan(), frame(Dialect.TASKTRACK, code="WORDS"))
    assert not isinstance(plan, list) and plan.tasks[0].id == "WORDS-1"


def test_what_is_wrong_comes_back_one_sentence_each() -> None:
    data: dict[str, Any] = fixed_plan()
    del data["code"]
    first, second = data["phases"][0]["tasks"]
    first["id"] = "one"
    second["criteria"] = [{"text": "runs", "command": []}]
    second["paths"] = ["/etc/passwd", "../up"]
    second["dependencies"] = [None]
    data["phases"][1]["tasks"][1]["id"] = 3  # the same number as the task before it
    problems = build(data, frame(Dialect.TASKTRACK))
    assert problems == [
        "code None must be 3 to 5 uppercase letters A-Z, like WORD",
        "phase 1, task 1: id must be a whole number from 1 (got 'one')",
        "phase 1, task 2 (id 2): dependency None is not a task number",
        "phase 1, task 2 (id 2): path '/etc/passwd' must be relative to the repository root",
        "phase 1, task 2 (id 2): path '../up' must be relative to the repository root",
        "phase 1, task 2 (id 2): the command of 'runs' must be a non-empty argv list",
        "two tasks have the id 3; number tasks 1, 2, 3, ...",
    ]


def test_data_that_is_no_plan_at_all() -> None:
    assert build([], frame(Dialect.MARKDOWN)) == [
        "the plan must be a JSON object with code, title, objective and phases"
    ]
    assert build({"title": "t", "objective": "o", "phases": []}, frame(Dialect.MARKDOWN)) == [
        "phases must be a non-empty list of {title, tasks}"
    ]


def test_a_markdown_path_with_a_comma_or_a_space_goes_back_to_the_author() -> None:
    """A Markdown task's paths are one line split at commas and spaces: such a path would read
    back as two; import refuses it in the same words. TaskTrack keeps it in the text."""
    data: dict[str, Any] = fixed_plan()
    data["phases"][0]["tasks"][0]["paths"] = ["docs/a,b.md", "my notes.md", "wc.py"]
    assert build(data, frame(Dialect.MARKDOWN)) == [
        f"phase 1, task 1 (id 1): path 'docs/a,b.md' {PATH_SEPARATOR}",
        f"phase 1, task 1 (id 1): path 'my notes.md' {PATH_SEPARATOR}",
    ]
    assert not isinstance(build(data, frame(Dialect.TASKTRACK)), list)


def test_a_task_without_criteria_is_built_for_lint_to_warn_of() -> None:
    data = fixed_plan()
    data["phases"][0]["tasks"][0]["criteria"] = []
    del data["phases"][0]["tasks"][1]["criteria"]
    plan = build(data, frame(Dialect.MARKDOWN))
    assert not isinstance(plan, list)
    assert [t.criteria for t in plan.tasks[:2]] == [[], []]


def test_what_is_usable_is_built_beside_what_is_wrong() -> None:
    data = fixed_plan()
    data["phases"][1]["tasks"][0]["dependencies"] = ["x", 1]  # a bad one, one across phases
    plan, problems = build_all(data, frame(Dialect.MARKDOWN))
    assert problems == ["phase 2, task 1 (id 3): dependency 'x' is not a task number"]
    assert plan is not None and plan.task("T-003").dependencies == ["T-001"]  # type: ignore[union-attr]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_every_locator_of_a_round_counts_from_1_and_points_at_what_it_names(
    dialect: Dialect, tmp_path: Path
) -> None:
    data = fixed_plan()
    core, docs = data["phases"][0]["tasks"], data["phases"][1]["tasks"]
    core[0]["criteria"] = [{"text": "the code is clean"}]  # nothing to observe
    core[1]["criteria"] = []
    core[1]["dependencies"] = [3]  # on a later phase
    docs[0]["paths"], docs[1]["paths"] = ["README.md"], ["docs/usage.md"]
    docs[1]["dependencies"] = [3, "x"]  # disjoint paths, and no task number
    plan, problems = build_all(data, frame(dialect, "WCNT"))
    assert problems == ["phase 2, task 2 (id 4): dependency 'x' is not a task number"]
    assert docs[1]["id"] == 4  # phase 2, task 2, counted from 1
    assert plan is not None
    folder = tmp_path / "plan"
    write_plan(replace(plan, root=folder), folder)
    found = {f.code: f for f in lint.findings(lint.lint(folder)) if f.code != "spec"}
    where = {
        "cross-phase-dependency": ("dependencies", "2"),
        "disjoint-dependency": ("dependencies", "4"),
        "criteria-missing": ("acceptance", "2"),
        "uncheckable-criterion": ("the code is clean", "1"),
    }
    if dialect is Dialect.TASKTRACK:
        del where["disjoint-dependency"]  # TaskTrack has no paths to judge
    assert sorted(found) == sorted(where)
    for code, (marker, number) in where.items():
        finding = found[code]
        assert finding.file.startswith((f"T-00{number}-", f"WCNT-{number}.")), code
        assert finding.line is not None
        shown = (folder / finding.file).read_text().split("\n")[finding.line - 1]
        assert marker in shown.lower().replace("depends", "dependencies"), (code, shown)
