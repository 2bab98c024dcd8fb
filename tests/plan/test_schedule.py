"""Eligibility, selection and exit rules exactly as the TaskTrack spec states them."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan import schedule
from taskhand.plan.model import Dialect, Phase, Plan, Status, Task
from taskhand.plan.schedule import Exit


def plan_of(phases: list[list[str]], deps: dict[str, list[str]] | None = None) -> Plan:
    """A plan from phases of 'ID:STATUS' strings."""
    deps = deps or {}
    tasks, out = [], []
    for number, entries in enumerate(phases, start=1):
        phase = Phase(number, f"P{number}")
        for entry in entries:
            task_id, status = entry.split(":")
            tasks.append(
                Task(
                    task_id,
                    task_id,
                    phase=number,
                    status=Status(status),
                    dependencies=deps.get(task_id, []),
                )
            )
            phase.task_ids.append(task_id)
        out.append(phase)
    return Plan(Dialect.TASKTRACK, Path("."), "t", tasks, out, code="FOO")


def test_open_tasks_of_phase_one_are_eligible() -> None:
    plan = plan_of([["FOO-1:OPEN", "FOO-2:OPEN"], ["FOO-3:OPEN"]])
    assert schedule.eligible(plan) == ["FOO-1", "FOO-2"]
    assert schedule.active_phase(plan) == 1


def test_later_phase_waits_until_every_earlier_task_is_done() -> None:
    plan = plan_of([["FOO-1:DONE", "FOO-2:BUSY"], ["FOO-3:OPEN"]])
    assert schedule.eligible(plan) == []
    plan = plan_of([["FOO-1:DONE", "FOO-2:DONE"], ["FOO-3:OPEN"]])
    assert schedule.eligible(plan) == ["FOO-3"]
    assert schedule.active_phase(plan) == 2


def test_a_failed_task_blocks_every_later_phase() -> None:
    plan = plan_of([["FOO-1:FAIL", "FOO-2:DONE"], ["FOO-3:OPEN"]])
    assert schedule.active_phase(plan) is None
    assert schedule.eligible(plan) == []
    assert schedule.exit_condition(plan) is Exit.FAILED_TASKS


def test_failed_task_leaves_its_own_phase_running() -> None:
    plan = plan_of([["FOO-1:FAIL", "FOO-2:OPEN"], ["FOO-3:OPEN"]])
    assert schedule.eligible(plan) == ["FOO-2"]


def test_waiting_task_keeps_its_phase_active() -> None:
    plan = plan_of([["FOO-1:WAIT", "FOO-2:OPEN"], ["FOO-3:OPEN"]])
    assert schedule.active_phase(plan) == 1
    assert schedule.eligible(plan) == ["FOO-2"]


def test_dependencies_must_be_done() -> None:
    plan = plan_of([["FOO-1:OPEN", "FOO-2:OPEN", "FOO-3:OPEN"]], {"FOO-2": ["FOO-1"]})
    assert schedule.eligible(plan) == ["FOO-1", "FOO-3"]
    plan.tasks[0].status = Status.BUSY
    assert schedule.eligible(plan) == ["FOO-3"]
    plan.tasks[0].status = Status.DONE
    assert schedule.eligible(plan) == ["FOO-2", "FOO-3"]


def test_next_is_the_lowest_id_by_counter() -> None:
    plan = plan_of([["FOO-10:OPEN", "FOO-9:OPEN", "FOO-11:OPEN"]])
    assert schedule.eligible(plan) == ["FOO-9", "FOO-10", "FOO-11"]


def test_statuses_can_be_overlaid() -> None:
    plan = plan_of([["FOO-1:OPEN"], ["FOO-2:OPEN"]])
    assert schedule.eligible(plan, {"FOO-1": Status.DONE, "FOO-2": Status.OPEN}) == ["FOO-2"]


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ([["FOO-1:DONE"], ["FOO-2:DONE"]], Exit.PLAN_COMPLETED),
        ([["FOO-1:FAIL", "FOO-2:WAIT"]], Exit.FAILED_TASKS),
        ([["FOO-1:DONE", "FOO-2:WAIT"], ["FOO-3:OPEN"]], Exit.WAITING),
        ([["FOO-1:BUSY"], ["FOO-2:OPEN"]], Exit.NO_ELIGIBLE),
        ([["FOO-1:OPEN"]], None),
    ],
)
def test_exit_conditions_in_the_spec_order(phases: list[list[str]], expected: Exit | None) -> None:
    assert schedule.exit_condition(plan_of(phases)) is expected


def test_exit_messages_are_the_spec_text() -> None:
    assert [e.message for e in Exit] == [
        "TaskTrack EXIT: Plan Completed",
        "TaskTrack EXIT: Failed Tasks",
        "TaskTrack EXIT: Waiting for Human Feedback",
        "TaskTrack EXIT: No Eligible Tasks",
    ]


def test_no_eligible_when_dependencies_block_everything() -> None:
    plan = plan_of([["FOO-1:WAIT", "FOO-2:OPEN"]], {"FOO-2": ["FOO-1"]})
    assert schedule.exit_condition(plan) is Exit.WAITING
    plan = plan_of([["FOO-1:BUSY", "FOO-2:OPEN"]], {"FOO-2": ["FOO-1"]})
    assert schedule.exit_condition(plan) is Exit.NO_ELIGIBLE


def test_shape_treats_phases_as_barriers() -> None:
    plan = plan_of(
        [["FOO-1:OPEN", "FOO-2:OPEN", "FOO-3:OPEN"], ["FOO-4:OPEN", "FOO-5:OPEN"]],
        {"FOO-3": ["FOO-2"], "FOO-5": ["FOO-4"]},
    )
    shape = schedule.shape(plan)
    assert shape.critical_path == ["FOO-2", "FOO-3", "FOO-4", "FOO-5"]
    assert shape.width == 2
    remaining = schedule.shape(plan, {"FOO-1": Status.DONE, "FOO-2": Status.DONE}, remaining=True)
    assert remaining.critical_path == ["FOO-3", "FOO-4", "FOO-5"]
    assert remaining.width == 1


def test_width_counts_tasks_that_can_run_together() -> None:
    plan = plan_of([[f"FOO-{n}:OPEN" for n in range(1, 6)]], {"FOO-5": ["FOO-1", "FOO-2"]})
    shape = schedule.shape(plan)
    assert shape.width == 4
    assert shape.critical_path == ["FOO-1", "FOO-5"]


def test_cycles_are_found_as_closed_walks() -> None:
    plan = plan_of(
        [["FOO-1:OPEN", "FOO-2:OPEN", "FOO-3:OPEN", "FOO-4:OPEN"]],
        {"FOO-1": ["FOO-3"], "FOO-2": ["FOO-1"], "FOO-3": ["FOO-2"], "FOO-4": ["FOO-4"]},
    )
    assert schedule.find_cycles(plan.tasks) == [
        ["FOO-1", "FOO-3", "FOO-2", "FOO-1"],
        ["FOO-4", "FOO-4"],
    ]


def test_long_chains_do_not_overflow() -> None:
    n = 20_000
    plan = plan_of(
        [[f"FOO-{i}:OPEN" for i in range(1, n + 1)]],
        {f"FOO-{i}": [f"FOO-{i - 1}"] for i in range(2, n + 1)},
    )
    assert schedule.find_cycles(plan.tasks) == []
    assert len(schedule.shape(plan).critical_path) == n
