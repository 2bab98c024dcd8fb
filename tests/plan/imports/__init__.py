"""What the import tests share: the fixtures, an import read back, and whether a dependency
of the source still holds in the plan."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.formats import load
from taskhand.plan.imports import Imported, import_plan
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.validate import validate

FIXTURES = Path(__file__).parent / "fixtures"


def imported(
    tmp_path: Path, fixture: str, dialect: Dialect, **options: str
) -> tuple[Imported, Plan]:
    """Import a fixture into a new folder; the plan as read back from the files, which must
    validate without an error."""
    out = tmp_path / f"{Path(fixture).stem}-{dialect}"
    done = import_plan(FIXTURES / fixture, out, dialect, **options)  # type: ignore[arg-type]
    report = validate(out)
    assert not report.errors, [p.render() for p in report.errors]
    plan, problems = load(out)
    assert plan is not None and not [p for p in problems if p.is_error]
    return done, plan


def holds(plan: Plan, ids: dict[str, str], later: str, first: str) -> bool:
    """Whether source task `later` still runs after source task `first` in the plan: an earlier
    phase, or a chain of dependencies."""
    by_id = plan.by_id()
    a, b = by_id[ids[later]], by_id[ids[first]]
    if b.phase < a.phase:
        return True
    seen, stack = set(), list(a.dependencies)
    while stack:
        current = stack.pop()
        if current == b.id:
            return True
        if current not in seen:
            seen.add(current)
            stack += by_id[current].dependencies
    return False


def source_ids(plan: Plan, ids: dict[str, str]) -> dict[str, str]:
    """The plan's id of each source id, checked against what each task's text says."""
    by_id = plan.by_id()
    for source, task_id in ids.items():
        assert f" {source}" in by_id[task_id].description, (source, by_id[task_id].description)
    return ids
