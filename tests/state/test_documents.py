"""The lifecycle documents a Markdown task keeps in its own file: written again (a resumed run,
a new plan round), they replace themselves, and a writer's own headings stay inside them."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.validate import validate
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.paths import StateDir
from tests.plans import md_task

SPEC = "The header gets a toggle.\n\n## Scope\n\nOnly the header; the settings page is T-002's."


def test_a_spec_with_its_own_headings_written_twice_stays_one_section(tmp_path: Path) -> None:
    plan_root = tmp_path / "plan"
    plan_root.mkdir()
    (plan_root / "overview.md").write_text("# Themes\n\n## Goal\nA dark theme.\n")
    source = plan_root / "T-001-toggle.md"
    source.write_text(md_task("T-001", "Dark mode toggle"))
    loaded = validate(plan_root).plan
    assert loaded is not None
    task = loaded.tasks[0]
    docs = Documents(loaded, StateDir(tmp_path / "state"))

    docs.write(task, documents.SPEC, SPEC)
    docs.write(task, documents.SPEC, SPEC)  # a run killed after the first write does it again

    text = source.read_text()
    assert text.count("## Spec") == 1 and text.count("Scope") == 1, text
    again = validate(plan_root)
    assert again.ok and again.plan is not None, again.problems
    fresh = again.plan.tasks[0]
    assert fresh.description == "Do the thing."  # the writer's heading is not the person's
    assert fresh.documents["spec"] == SPEC.strip()  # as written, its own heading and all
    assert docs.read(fresh, documents.SPEC) == fresh.documents["spec"] == task.documents["spec"]
