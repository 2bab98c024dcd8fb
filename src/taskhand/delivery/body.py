"""The pull request's text, from plain facts any pipeline can fill: the goal, the plan, each
criterion ticked with its command or its screenshot, how many `[found]` criteria qa walked, the
verdicts with their unit numbers, the commits, and for a stacked pull request what to merge
first. Nothing here reads the store or the repository.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.delivery.contract import Commit
from taskhand.plan.model import Criterion
from taskhand.text import cap

FOUND = "[found]"  # a behaviour a person would see in the running app; qa walks it
SECTION_BYTES = 12 * 1024  # the goal's and the plan's share: GitHub takes 65,536 characters
BODY_BYTES = 60 * 1024


@dataclass(frozen=True)
class Judgement:
    """A verdict the work went through: who gave it (qa, judge, a reviewer), whether it
    accepted, its one line, and the number of the unit that gave it."""

    role: str
    accepted: bool
    text: str = ""
    unit: int | None = None

    def line(self) -> str:
        mark, says = ("✓", "accepts") if self.accepted else ("✗", "rejects")
        unit = f" (unit {self.unit})" if self.unit is not None else ""
        return f"- {mark} {self.role}{unit} {says}" + (f": {self.text}" if self.text else "")


@dataclass(frozen=True)
class TaskFacts:
    """What one task's part of the text says. `screenshots` maps a `[found]` criterion's text
    to the picture qa took of it; `walked` is how many `[found]` criteria qa walked in the
    browser (None: no qa stage ran, so they are a person's to check)."""

    task_id: str
    title: str
    criteria: Sequence[Criterion] = ()
    screenshots: Mapping[str, Path] = field(default_factory=dict)
    walked: int | None = None
    judgements: Sequence[Judgement] = ()


@dataclass(frozen=True)
class Story:
    """The pull request's facts: one task's (a task's PR) or each task's (the run's PR)."""

    title: str
    goal: str
    plan: str = ""
    tasks: Sequence[TaskFacts] = ()
    commits: Sequence[Commit] = ()  # the branch's own, as the contract read them
    stacked_on: str = ""  # for a stacked pull request: what it stands on, to merge first


def is_found(criterion: Criterion) -> bool:
    return criterion.tag == "found" or criterion.text.lstrip().lower().startswith(FOUND)


def qa_screenshots(folder: Path, criteria: Sequence[Criterion]) -> dict[str, Path]:
    """The screenshots qa left in `folder` (the task's artifacts), by the `[found]` criterion
    each proves: criterion N (numbered from 1, as qa's prompt numbers them) is `found-N.png`."""
    found = {}
    for number, criterion in enumerate(criteria, start=1):
        shot = folder / f"found-{number}.png"
        if is_found(criterion) and shot.is_file():
            found[criterion.text] = shot
    return found


def render(story: Story) -> str:
    """The pull request's body as Markdown."""
    parts = []
    if story.stacked_on:
        parts.append(f"> **Stacked pull request.** {story.stacked_on}")
    parts.append(f"## Goal\n\n{cap(story.goal.strip() or story.title, SECTION_BYTES)}")
    if story.plan.strip():
        parts.append(f"## Plan\n\n{cap(story.plan.strip(), SECTION_BYTES)}")
    if len(story.tasks) == 1:
        parts.append(_task_part(story.tasks[0], "##", heading="Acceptance criteria"))
    elif story.tasks:
        tasks = [_task_part(t, "###", heading=f"{t.task_id}: {t.title}") for t in story.tasks]
        parts.append("## Tasks\n\n" + "\n\n".join(tasks))
    if story.commits:
        parts.append(
            "## Commits\n\n" + "\n".join(f"- `{c.sha[:12]}` {c.subject}" for c in story.commits)
        )
    parts.append("---\nOpened by taskhand. Nothing is merged for you: merging is yours.")
    return cap("\n\n".join(parts), BODY_BYTES) + "\n"


def _task_part(facts: TaskFacts, level: str, heading: str) -> str:
    lines = [f"{level} {heading}", ""]
    lines += [_criterion(c, facts.screenshots) for c in facts.criteria] or ["(none written)"]
    found = [c for c in facts.criteria if is_found(c)]
    if facts.walked is not None:
        lines += ["", f"qa walked {facts.walked} of {len(found)} [found] criteria in the browser."]
    elif found:
        lines += ["", f"No qa walked the {len(found)} [found] criteria: they are yours to check."]
    if facts.judgements:
        lines += ["", "Verdicts:", "", *(j.line() for j in facts.judgements)]
    return "\n".join(lines)


def _criterion(criterion: Criterion, screenshots: Mapping[str, Path]) -> str:
    """A closing check is ticked with its command (it passed before the work landed); a
    `[found]` criterion with its screenshot; any other stays unticked, for a person."""
    text = " ".join(criterion.text.split())
    if criterion.check is not None:
        command = shlex.join(criterion.check.argv)
        shown = "" if command in text else f" (`{command}`)"
        return f"- [x] ✓ {text}{shown}"
    shot = screenshots.get(criterion.text) if is_found(criterion) else None
    if shot is None and is_found(criterion):
        shot = screenshots.get(criterion.text.lstrip()[len(FOUND) :].strip())
    if shot is not None:
        return f"- [x] ✓ {text} (screenshot: `{shot.name}`)"
    return f"- [ ] {text}"
