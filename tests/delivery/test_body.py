"""The pull request's body: goal, plan, criteria ticked with their command or screenshot, how
many [found] criteria qa walked, the verdicts with their units, the commits."""

from __future__ import annotations

from pathlib import Path

from taskhand.delivery.body import Judgement, Story, TaskFacts, render
from taskhand.delivery.contract import Commit
from taskhand.plan.model import Check, Criterion

PYTEST = Check(("pytest", "-q", "tests/test_toggle.py"))
CRITERIA = [
    Criterion("`$ pytest -q tests/test_toggle.py` passes", PYTEST),
    Criterion("[found] the toggle shows in the header"),
    Criterion("[found] dark mode survives a reload"),
    Criterion("the copy reads well"),
]


def test_a_task_body_ticks_what_was_proven_and_leaves_the_rest_to_a_person() -> None:
    facts = TaskFacts(
        "T-7",
        "Dark mode toggle",
        CRITERIA,
        screenshots={"[found] the toggle shows in the header": Path("/a/T-7/found-1.png")},
        walked=1,
        judgements=[
            Judgement("qa", True, "all closing checks pass", 12),
            Judgement("judge", True, "re-ran every check", 14),
        ],
    )
    story = Story(
        "T-7: Dark mode toggle",
        "Users want a dark theme.",
        "1. Add the toggle.\n2. Persist the choice.",
        [facts],
        [Commit("a" * 40, "T-7: Dark mode toggle")],
    )
    assert render(story) == (
        "## Goal\n\nUsers want a dark theme.\n\n"
        "## Plan\n\n1. Add the toggle.\n2. Persist the choice.\n\n"
        "## Acceptance criteria\n\n"
        "- [x] ✓ `$ pytest -q tests/test_toggle.py` passes\n"
        "- [x] ✓ [found] the toggle shows in the header (screenshot: `found-1.png`)\n"
        "- [ ] [found] dark mode survives a reload\n"
        "- [ ] the copy reads well\n\n"
        "qa walked 1 of 2 [found] criteria in the browser.\n\n"
        "Verdicts:\n\n"
        "- ✓ qa (unit 12) accepts: all closing checks pass\n"
        "- ✓ judge (unit 14) accepts: re-ran every check\n\n"
        "## Commits\n\n"
        f"- `{'a' * 12}` T-7: Dark mode toggle\n\n"
        "---\nOpened by taskhand. Nothing is merged for you: merging is yours.\n"
    )


def test_without_qa_the_found_criteria_are_a_persons_and_a_stack_says_what_goes_first() -> None:
    facts = TaskFacts("T-2", "B", [CRITERIA[2], Criterion("`$ make` (exit 0)", Check(("make",)))])
    text = render(Story("T-2: B", "", "", [facts], stacked_on="Merge T-1's first."))
    assert text.startswith("> **Stacked pull request.** Merge T-1's first.\n\n## Goal\n\nT-2: B")
    assert "No qa walked the 1 [found] criteria: they are yours to check." in text
    assert "- [x] ✓ `$ make` (exit 0)\n" in text
    assert "## Plan" not in text


def test_a_run_body_has_a_part_per_task() -> None:
    parts = [TaskFacts("T-1", "A", CRITERIA[3:]), TaskFacts("T-2", "B", CRITERIA[:1])]
    text = render(Story("Feature", "Ship it.", tasks=parts))
    assert "## Tasks\n\n### T-1: A\n\n- [ ] the copy reads well\n\n### T-2: B\n\n- [x] ✓" in text
