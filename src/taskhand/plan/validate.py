"""Validation: every problem of a plan in one pass, file rules and plan-wide rules alike.

The dialect readers report what is wrong inside a file; this module adds the rules that
need the whole plan: dependencies, cycles, busy tasks, criteria, and needless serialization.
Whether the plan can run here is run.preflight's question, asked one layer up.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taskhand.plan import formats, schedule
from taskhand.plan.model import Dialect, Plan, Status, Task, counter, id_key
from taskhand.plan.problems import Collector, PlanError, Problem, Severity

# Redundant-dependency search stops after this many steps so a huge plan stays fast.
REDUNDANCY_BUDGET = 2_000_000


@dataclass
class Report:
    path: Path
    plan: Plan | None
    problems: list[Problem]
    # The plan's critical path and widths, worked out once for the rules and the summary.
    shape: schedule.Shape | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    def ok(self, strict: bool = False) -> bool:
        return not self.errors and not (strict and self.warnings)

    def require(self) -> Plan:
        """The plan, when none of its problems is an error; else a PlanError listing them all.
        The one rule of every command that needs a plan to work on."""
        if self.plan is None or self.errors:
            raise PlanError(self.errors)
        return self.plan

    def adding(self, problems: list[Problem]) -> Report:
        """This report with more problems of the same plan, all in file and line order."""
        return Report(self.path, self.plan, _in_order([*self.problems, *problems]), self.shape)


def validate(path: Path) -> Report:
    """Read and check the plan at `path`."""
    with collector_paused():
        plan, problems = formats.load(path)
        shape = None
        if plan is not None:
            shape = schedule.shape(plan)
            problems.extend(check_plan(plan, shape))
        return Report(path, plan, _in_order(problems), shape)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: reading and checking a plan makes a dozen objects
    per line and frees none in cycles, and the collector would walk them over and over (a fifth
    of the time of a 10,000-task validate). Nested pauses resume it once, at the outermost."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _in_order(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (str(p.path), p.line or 0))


def check_plan(plan: Plan, shape: schedule.Shape) -> list[Problem]:
    """The plan-wide rules, on a plan whose files have been read, and its shape."""
    problems: list[Problem] = []
    _check_dependencies(plan, problems)
    _check_cycles(plan, problems)
    _check_busy(plan, problems)
    _check_criteria(plan, problems)
    _check_counters(plan, problems)
    _check_serialization(plan, shape, problems)
    return problems


def _at(task: Task, plan: Plan, problems: list[Problem]) -> Collector:
    return Collector(problems, task.source or plan.root)


def _check_dependencies(plan: Plan, problems: list[Problem]) -> None:
    by_id = plan.by_id()
    tasktrack = plan.dialect is Dialect.TASKTRACK
    for task in (t for t in plan.tasks if t.dependencies):
        out, line = _at(task, plan, problems), task.lines.get("dependencies", task.line)
        for dep in task.dependencies:
            other = by_id.get(dep)
            if dep == task.id:
                out.error(line, f"{task.id} depends on itself", "remove it", "self-dependency")
            elif other is None:
                out.error(
                    line,
                    f"{task.id} depends on {dep}, which is not in the plan",
                    "fix the id or remove the dependency",
                    "unknown-dependency",
                )
            elif other.phase > task.phase:
                out.error(
                    line,
                    f"{task.id} (phase {task.phase}) depends on {dep} (phase "
                    f"{other.phase}), which can only run after it",
                    f"move {dep} into phase {task.phase} or earlier, or drop the dependency",
                    "cross-phase-dependency",
                )
            elif other.phase < task.phase and tasktrack:
                out.error(
                    line,
                    f"{task.id} (phase {task.phase}) depends on {dep} (phase "
                    f"{other.phase}); TaskTrack allows dependencies only within a phase",
                    f"drop it: phase order already runs {dep} first",
                    "cross-phase-dependency",
                )
            elif other.phase < task.phase:
                out.warn(
                    line,
                    f"{task.id} depends on {dep} of an earlier phase, which phase "
                    "order already guarantees",
                    "drop the dependency",
                    "redundant-dependency",
                )


def _check_cycles(plan: Plan, problems: list[Problem]) -> None:
    by_id = plan.by_id()
    for cycle in schedule.find_cycles(plan.tasks):
        task = by_id[cycle[0]]
        _at(task, plan, problems).error(
            task.lines.get("dependencies", task.line),
            f"dependency cycle: {' -> '.join(cycle)}",
            "remove one of these dependencies so the tasks can be ordered",
            "cycle",
        )


def _check_busy(plan: Plan, problems: list[Problem]) -> None:
    in_files = [t.id for t in plan.tasks if t.status is Status.BUSY]
    in_overview = [i for i, s in plan.overview_statuses.items() if s is Status.BUSY]
    ids = sorted(in_files if len(in_files) >= len(in_overview) else in_overview, key=id_key)
    if len(ids) > 1:
        # The spec has one task in progress at a time; a run of several jobs (taskhand run
        # --jobs N, asked for at the command line) has more, and resumes them all.
        Collector(problems, plan.overview_path or plan.root).warn(
            None,
            f"{len(ids)} tasks are BUSY ({', '.join(ids)}); the TaskTrack spec has one at a "
            "time (taskhand run --jobs N runs several)",
            "let that run finish or resume it (taskhand resume); if none runs, set every task "
            "not really in progress back to OPEN, in both files",
            "busy",
        )


def _check_criteria(plan: Plan, problems: list[Problem]) -> None:
    for task in plan.tasks:
        if not task.criteria:
            _at(task, plan, problems).warn(
                task.lines.get("criteria", task.line),
                f"{task.id} has no acceptance criteria; a reviewer has nothing concrete to check",
                "add a bullet list of checkable outcomes",
                "criteria-missing",
            )


def _check_counters(plan: Plan, problems: list[Problem]) -> None:
    if plan.dialect is Dialect.TASKTRACK:
        # At most 9 digits each; an id without a number is reported by its own rule.
        counters = [int(number) for t in plan.tasks if (number := counter(t.id))]
        missing = sorted(set(range(1, max(counters, default=0) + 1)) - set(counters))
        if missing and plan.overview_path:
            shown = ", ".join(f"{plan.code}-{n}" for n in missing[:5])
            Collector(problems, plan.overview_path).warn(
                None,
                f"task numbers are not consecutive (no {shown})",
                "renumber the tasks 1, 2, 3, ... when convenient",
                "counters",
            )
        return
    seen: dict[str, str] = {}
    for task in plan.tasks:
        number = counter(task.id)
        if number in seen and seen[number] != task.id:
            _at(task, plan, problems).warn(
                task.line,
                f"{task.id} and {seen[number]} have the same number",
                "use one zero-padded width for all ids (T-001)",
                "counters",
            )
        seen.setdefault(number, task.id)
    widths = {len(t.id) for t in plan.tasks}
    if len(widths) > 1:
        shortest = min(plan.tasks, key=lambda t: len(t.id))
        longest = max(plan.tasks, key=lambda t: len(t.id))
        Collector(problems, plan.overview_path or plan.root).warn(
            None,
            f"ids have different widths ({shortest.id}, {longest.id}); taskhand orders them by "
            "number, Tilth by text, so the two would run them in different orders",
            "use one zero-padded width for all ids (T-001)",
            "counters",
        )


def _check_serialization(plan: Plan, shape: schedule.Shape, problems: list[Problem]) -> None:
    """Warn about dependencies that order tasks needlessly: redundant ones and lone chains."""
    by_id = plan.by_id()
    budget = REDUNDANCY_BUDGET
    for task in plan.tasks:
        deps = [d for d in dict.fromkeys(task.dependencies) if d in by_id and d != task.id]
        if len(deps) < 2 or budget <= 0:
            continue
        for dep in deps:
            reached, steps = _reaches(by_id, [d for d in deps if d != dep], dep, budget)
            budget -= steps
            if reached:
                _at(task, plan, problems).warn(
                    task.lines.get("dependencies", task.line),
                    f"{task.id}'s dependency on {dep} is implied by its other dependencies",
                    f"drop {dep} from the list",
                    "redundant-dependency",
                )
    for phase in plan.phases:
        size = sum(1 for i in phase.task_ids if i in by_id)
        if size >= 3 and shape.phase_widths.get(phase.number) == 1:
            Collector(problems, plan.overview_path or plan.root).warn(
                None,
                f"phase {phase.number}'s {size} tasks form one dependency chain, "
                f"so none can run in parallel (plan critical path {len(shape.critical_path)}"
                f" of {shape.tasks} tasks, width {shape.width})",
                "keep only dependencies on work a task really uses; if the order is real, "
                "use successive phases",
                "serialized",
            )


def _reaches(
    by_id: dict[str, Task], starts: list[str], target: str, budget: int
) -> tuple[bool, int]:
    """Whether `target` is an ancestor of any of `starts`, and the steps spent finding out."""
    seen: set[str] = set()
    stack = list(starts)
    steps = 0
    while stack and steps < budget:
        current = stack.pop()
        steps += 1
        if current == target:
            return True, steps
        if current in seen or current not in by_id:
            continue
        seen.add(current)
        stack.extend(by_id[current].dependencies)
    return False, steps
