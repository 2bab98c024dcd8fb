"""The prototype stage (ui tasks only): the designer's round in a disposable copy leaves a
picture in the task's artifacts (a screenshot with an app, an SVG wireframe without); then a
person reviews it, or with full autonomy it passes. Rounds are capped.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from taskhand.pipeline import roles
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Status, Task
from taskhand.prompts import roles as role_prompts
from taskhand.state.documents import ARTIFACTS, Documents
from taskhand.state.life import Lifecycle
from taskhand.unit import Role

PICTURES = ("prototype*.png", "prototype*.svg")


def prototype(h: Harness, work: Work) -> Ended | None:
    task = work.task
    if (task.kind or "") != "ui":
        return None
    h.track.enter(task, Lifecycle.PROTOTYPE)
    life = h.track.life(work.plan, task)
    rounds = h.caps.prototype_rounds
    if life.rounds >= rounds:
        return Ended(Status.FAIL, f"the prototype's {rounds} rounds are used up")
    work.context = context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    shots = Documents(work.plan, h.state).folder(task.id)
    for old in (p for pattern in PICTURES for p in shots.glob(pattern)):
        old.unlink()  # a new round's pictures replace the last round's

    def keep(folder: Path) -> None:
        """A wireframe or screenshot the designer left in its workspace is kept."""
        for pattern in PICTURES:
            for found in sorted(folder.glob(pattern)):
                if found.is_file() and not found.is_symlink():
                    shutil.copyfile(found, shots / found.name)

    outcome = roles.in_copy(
        h,
        work,
        Role.DESIGNER,
        lambda b: role_prompts.designer(task, context, b),
        work.base,
        shots=shots,
        keep=keep,
    )
    if isinstance(outcome, Ended):
        return outcome
    ended = roles.settle(h, work, outcome, Lifecycle.PROTOTYPE)
    if ended is not None:
        return ended
    left = pictures_left(shots)
    if not pictures(shots):  # the person still reviews the route; the file says why no picture
        done = h.track.life(work.plan, task).rounds + 1
        note = f"prototype round {done} left no picture: review the route in the app"
        Documents(work.plan, h.state).log(task, note)
    if h.config.autonomy == "full":
        h.track.move(task, Lifecycle.READY, round_done=True)
        return None
    h.track.move(
        task, Lifecycle.PROTOTYPE, waiting=True, round_done=True, reason=f"round leaves {left}"
    )
    return roles.hand_over(h, work, review_request(task, shots))


def pictures(shots: Path) -> list[str]:
    """The names of the pictures the last round left in the task's artifacts."""
    return sorted(p.name for pattern in PICTURES for p in shots.glob(pattern))


def pictures_left(shots: Path) -> str:
    """The pictures the last round left in the task's artifacts, as a person reads them."""
    return ", ".join(pictures(shots)) or "no picture (review the route in the app)"


def review_request(task: Task, shots: Path) -> str:
    """What a prototype awaiting review asks of a person (its pictures are in `shots`)."""
    return (
        f"Review the prototype ({pictures_left(shots)}, in {ARTIFACTS}): "
        f"taskhand accept {task.id}, or "
        f'taskhand comment {task.id} "what to change" for another round.'
    )
