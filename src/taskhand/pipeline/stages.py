"""The pipelines, declared as lists of stages (like a web app's routes): the attempt runs them
in order, and a new stage is a function of the `Stage` signature and one entry here.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskhand.pipeline.checking import judge, qa
from taskhand.pipeline.deliver import deliver
from taskhand.pipeline.gate import gate
from taskhand.pipeline.implement import implement
from taskhand.pipeline.integrate import integrate
from taskhand.pipeline.planning import plan
from taskhand.pipeline.prototype import prototype
from taskhand.pipeline.review import review
from taskhand.pipeline.spec import spec
from taskhand.pipeline.testing import tests
from taskhand.pipeline.work import Stage

# The implementer's unit, the machine gate, the reviewers, integration, and with delivery
# per task, the task's pull request.
DEFAULT: tuple[Stage, ...] = (implement, gate, review, integrate, deliver)
# The board lifecycle: a spec from a draft, a plan a person approves, a prototype of a ui
# task, tests before code, qa and a judge that tries to reject; then integration and delivery.
FULL: tuple[Stage, ...] = (
    *(spec, plan, prototype, tests, implement, gate, qa, judge, integrate, deliver),
)
PIPELINES = {"default": DEFAULT, "full": FULL}
LANDS = "integrate"  # the stage that puts a task's work on the run branch


def name(stage: Stage) -> str:
    """A stage's name, as events and paused attempts record it."""
    return getattr(stage, "__name__", repr(stage))


def index_of(pipeline: Sequence[Stage], stage_name: str) -> int:
    """Where the stage called `stage_name` sits in `pipeline`."""
    names = [name(s) for s in pipeline]
    if stage_name not in names:
        raise ValueError(f"no stage {stage_name!r} in this pipeline ({', '.join(names)})")
    return names.index(stage_name)


def entry(pipeline: Sequence[Stage], wanted: Sequence[str]) -> int:
    """Where an attempt starts: the first of the `wanted` stages the pipeline has (the
    lifecycle's entry for the task's status), else its first stage."""
    names = [name(s) for s in pipeline]
    return next((names.index(w) for w in wanted if w in names), 0)


def after_landing(pipeline: Sequence[Stage]) -> tuple[Stage, ...]:
    """The stages after the one that lands the work: all that a task whose work already landed
    goes through again (its delivery failed, or its run died before the task concluded)."""
    names = [name(s) for s in pipeline]
    return tuple(pipeline[names.index(LANDS) + 1 :]) if LANDS in names else ()
