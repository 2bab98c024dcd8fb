"""The pipelines, declared as lists of stages (like a web app's routes): the attempt runs them
in order, and a new stage is a function of the `Stage` signature and one entry here.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskhand.pipeline.gate import gate
from taskhand.pipeline.implement import implement
from taskhand.pipeline.integrate import integrate
from taskhand.pipeline.review import review
from taskhand.pipeline.work import Stage

# Today's lifecycle: the implementer's unit, the machine gate, the reviewers, integration.
DEFAULT: tuple[Stage, ...] = (implement, gate, review, integrate)


def name(stage: Stage) -> str:
    """A stage's name, as events and paused attempts record it."""
    return getattr(stage, "__name__", repr(stage))


def index_of(pipeline: Sequence[Stage], stage_name: str) -> int:
    """Where the stage called `stage_name` sits in `pipeline`."""
    names = [name(s) for s in pipeline]
    if stage_name not in names:
        raise ValueError(f"no stage {stage_name!r} in this pipeline ({', '.join(names)})")
    return names.index(stage_name)
