"""Scheduling as pure functions: active phase, eligible tasks, exit condition, graph shape.

Eligibility and the exit condition follow the TaskTrack spec for both dialects: a task is
eligible when it is open, every earlier phase is done, and its dependencies are done.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from taskhand.plan import paths
from taskhand.plan.model import Plan, Status, Task, id_key

Statuses = Mapping[str, Status]
_PENDING = (Status.OPEN, Status.BUSY, Status.WAIT)


class Exit(StrEnum):
    """Why a plan execution run stops, in the order the spec evaluates them."""

    PLAN_COMPLETED = "Plan Completed"
    FAILED_TASKS = "Failed Tasks"
    WAITING = "Waiting for Human Feedback"
    NO_ELIGIBLE = "No Eligible Tasks"

    @property
    def message(self) -> str:
        return f"TaskTrack EXIT: {self.value}"


def active_phase(plan: Plan, statuses: Statuses | None = None) -> int | None:
    """The lowest phase with open, busy or waiting tasks, if every earlier phase is done."""
    status = statuses if statuses is not None else plan.statuses()
    earlier_done = True
    for phase in plan.phases:
        codes = [status.get(i, Status.OPEN) for i in phase.task_ids]
        if any(c in _PENDING for c in codes):
            return phase.number if earlier_done else None
        earlier_done = earlier_done and all(c is Status.DONE for c in codes)
    return None


def eligible(plan: Plan, statuses: Statuses | None = None) -> list[str]:
    """Every task that may start now (the frontier), lowest id first."""
    status = statuses if statuses is not None else plan.statuses()
    number = active_phase(plan, status)
    if number is None:
        return []
    by_id = plan.by_id()
    phase = next(p for p in plan.phases if p.number == number)
    ready = [
        i
        for i in phase.task_ids
        if status.get(i, Status.OPEN) is Status.OPEN
        and i in by_id
        and all(status.get(d) is Status.DONE for d in by_id[i].dependencies)
    ]
    return sorted(ready, key=id_key)


def longest_first(plan: Plan, statuses: Statuses, frontier: list[str]) -> list[str]:
    """`frontier` ordered by the longest chain of unfinished tasks that waits on each (its
    remaining critical path, counted in tasks), longest first; ties: lowest id. Several jobs
    start the task the plan's end depends on most."""
    waiting: dict[str, list[str]] = {}
    for task in plan.tasks:
        if statuses.get(task.id, task.status) is not Status.DONE:
            for dependency in task.dependencies:
                waiting.setdefault(dependency, []).append(task.id)
    length: dict[str, int] = {}

    def chain(task_id: str) -> int:  # iterative, so a 50,000-task chain needs no deep stack
        stack = [task_id]
        while stack:
            top = stack[-1]
            later = [t for t in waiting.get(top, []) if t not in length]
            if later:
                stack.extend(later)
                continue
            stack.pop()
            length[top] = 1 + max((length[t] for t in waiting.get(top, [])), default=0)
        return length[task_id]

    return sorted(frontier, key=lambda t: (-chain(t), id_key(t)))


def apart(
    ordered: list[str], count: int, footprints: Mapping[str, list[str]], running: Iterable[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """Up to `count` of `ordered` (best first), none whose footprint (the paths it declares
    and the files its earlier attempts changed) meets a running task's or one picked before
    it: two such tasks side by side would likely conflict, wasting one's unit. Those passed
    over wait (they stay eligible), each with the tasks it meets. With nothing running the
    best one always starts, so holding back never deadlocks."""
    taken = list(running)
    picked: list[str] = []
    held: dict[str, list[str]] = {}
    for task_id in ordered:
        if len(picked) == count:
            break
        mine = footprints.get(task_id, [])
        met = [t for t in taken if paths.meet(mine, footprints.get(t, []))]
        if met:
            held[task_id] = met
            continue
        picked.append(task_id)
        taken.append(task_id)
    return picked, held


def exit_condition(plan: Plan, statuses: Statuses | None = None) -> Exit | None:
    """Why a run must stop now, or None while some task is eligible."""
    status = statuses if statuses is not None else plan.statuses()
    if eligible(plan, status):
        return None
    codes = [status.get(t.id, Status.OPEN) for t in plan.tasks]
    if all(c is Status.DONE for c in codes):
        return Exit.PLAN_COMPLETED
    if Status.FAIL in codes:
        return Exit.FAILED_TASKS
    if Status.WAIT in codes:
        return Exit.WAITING
    return Exit.NO_ELIGIBLE


@dataclass(frozen=True)
class Shape:
    """How much of a plan can run at once: its longest chain and its widest step."""

    critical_path: list[str]
    width: int
    tasks: int
    phase_widths: dict[int, int]


def shape(plan: Plan, statuses: Statuses | None = None, remaining: bool = False) -> Shape:
    """Critical path and parallel width, phases acting as barriers between steps.

    With `remaining`, done tasks are left out (the work still ahead).
    """
    status = statuses if statuses is not None else plan.statuses()
    tasks = [t for t in plan.tasks if not remaining or status.get(t.id) is not Status.DONE]
    level, previous = _levels(tasks)
    by_phase: dict[int, list[str]] = {}
    for task in tasks:
        if task.id in level:
            by_phase.setdefault(task.phase, []).append(task.id)
    path: list[str] = []
    widths: dict[int, int] = {}
    for number in sorted(by_phase):
        members = by_phase[number]
        deepest = max(level[i] for i in members)
        chain = [min((i for i in members if level[i] == deepest), key=id_key)]
        while (before := previous.get(chain[-1])) is not None:
            chain.append(before)
        path.extend(reversed(chain))
        widths[number] = max(Counter(level[i] for i in members).values())
    return Shape(path, max(widths.values(), default=0), len(tasks), widths)


def _levels(tasks: list[Task]) -> tuple[dict[str, int], dict[str, str | None]]:
    """Longest-chain depth of each task within its phase (tasks in cycles are left out)."""
    by_id = {t.id: t for t in tasks}
    indegree = dict.fromkeys(by_id, 0)
    children: dict[str, list[str]] = {i: [] for i in by_id}
    for task in tasks:
        for dep in set(task.dependencies):
            if dep in by_id and by_id[dep].phase == task.phase and dep != task.id:
                indegree[task.id] += 1
                children[dep].append(task.id)
    level = {i: 1 for i, n in indegree.items() if n == 0}
    previous: dict[str, str | None] = dict.fromkeys(level)
    queue = deque(sorted(level, key=id_key))
    while queue:
        current = queue.popleft()
        for child in children[current]:
            if level[current] + 1 > level.get(child, 0):
                level[child] = level[current] + 1
                previous[child] = current
            indegree[child] -= 1
            if indegree[child] == 0:
                queue.append(child)
    return {i: n for i, n in level.items() if indegree[i] == 0}, previous


def find_cycles(tasks: Iterable[Task]) -> list[list[str]]:
    """Each dependency cycle as a closed walk (first id repeated last), lowest id first."""
    graph = {t.id: [d for d in t.dependencies] for t in tasks}
    cycles = []
    for component in _strong_components(graph):
        members = set(component)
        start = min(component, key=id_key)
        if len(component) == 1 and start not in graph[start]:
            continue
        walk, seen = [start], {start: 0}
        while True:
            step = min((d for d in graph[walk[-1]] if d in members), key=id_key)
            if step in seen:
                cycle = [*walk[seen[step] :], step]
                break
            seen[step] = len(walk)
            walk.append(step)
        cycles.append(cycle)
    return sorted(cycles, key=lambda c: id_key(c[0]))


def _strong_components(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion, so long chains cannot overflow the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for dep in edges:
                if dep not in graph:
                    continue
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(graph[dep])))
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components
