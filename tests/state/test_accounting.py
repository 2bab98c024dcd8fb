"""Accounting: what finished units consumed, and the per-task figures of `taskhand stats`."""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.plan.model import Status
from taskhand.state.store import Store
from taskhand.unit import Role, Usage
from tests.state import new_run, raw


def make_units(store: Store, db_path: Path) -> str:
    """A run with known usage and known unit times; T-3 has a unit still running."""
    run = new_run(store)
    store.set_task(run.id, "T-10", Status.OPEN)  # no units: counted as zero
    spans = [
        ("T-1", Usage(100, 10, 40, 0.5, False), "14:00:00.000", "14:00:30.500"),
        ("T-1", Usage(200, 20, 0, 0.25, False), "14:01:00.000", "14:02:00.000"),
        ("T-2", Usage(1000, 100, 500, 1.0, True, 200, 30), "14:03:00.000", "14:03:05.250"),
    ]
    for n, (task_id, usage, start, end) in enumerate(spans):
        attempt = store.start_attempt(run.id, task_id, "/wt", "b", "base")
        role = "evaluator" if n == 1 else "implementer"  # T-1's second unit reviews
        unit_id = store.start_unit(attempt.id, role, "claude", None, "prompt")
        store.finish_unit(unit_id, "done", usage, None)
        with raw(db_path) as conn:  # fix the clock so agent seconds are known
            conn.execute(
                "UPDATE units SET started = ?, ended = ? WHERE id = ?",
                (f"2026-12-02T{start}Z", f"2026-12-02T{end}Z", unit_id),
            )
    attempt = store.start_attempt(run.id, "T-3", "/wt", "b", "base")
    store.start_unit(attempt.id, "implementer", "claude", None, "prompt")
    return run.id


def test_usage_sums_finished_units(store: Store, db_path: Path) -> None:
    run_id = make_units(store, db_path)
    assert store.usage(run_id) == Usage(1300, 130, 540, 1.75, True, 200, 30)
    assert store.usage(run_id, "T-1") == Usage(300, 30, 40, 0.75, False)
    assert store.usage(run_id, "T-2") == Usage(1000, 100, 500, 1.0, True, 200, 30)
    assert store.usage(run_id, "T-3") == Usage()  # running units have used nothing yet
    assert store.usage(new_run(store).id) == Usage()


def test_stats_per_task_and_total(store: Store, db_path: Path) -> None:
    stats = store.stats(make_units(store, db_path))
    assert stats.as_json() == {
        "tasks": [
            {
                "task_id": "T-1",
                "units": 2,
                "reviews": 1,
                "prompt_bytes": 12,
                "seconds": 90.5,
                "tokens_in": 300,
                "tokens_out": 30,
                "tokens_cached": 40,
                "cost": 0.75,
                "estimated": False,
                "title": "",
                "roles": {"implementer": 1, "evaluator": 1},
                "pr": None,
                "status": "",
                "tokens_cache_write": 0,
                "tokens_thinking": 0,
                "kind": "",
                "happened": "",
            },
            {
                "task_id": "T-2",
                "units": 1,
                "reviews": 0,
                "prompt_bytes": 6,
                "seconds": 5.25,
                "tokens_in": 1000,
                "tokens_out": 100,
                "tokens_cached": 500,
                "cost": 1.0,
                "estimated": True,
                "title": "",
                "roles": {"implementer": 1},
                "pr": None,
                "status": "",
                "tokens_cache_write": 200,
                "tokens_thinking": 30,
                "kind": "",
                "happened": "",
            },
            {
                "task_id": "T-3",
                "units": 1,
                "reviews": 0,
                "prompt_bytes": 6,
                "seconds": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "tokens_cached": 0,
                "cost": 0.0,
                "estimated": False,
                "title": "",
                "roles": {"implementer": 1},
                "pr": None,
                "status": "",
                "tokens_cache_write": 0,
                "tokens_thinking": 0,
                "kind": "",
                "happened": "",
            },
            {
                "task_id": "T-10",
                "units": 0,
                "reviews": 0,
                "prompt_bytes": 0,
                "seconds": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "tokens_cached": 0,
                "cost": 0.0,
                "estimated": False,
                "title": "",
                "roles": {},
                "pr": None,
                "status": "",
                "tokens_cache_write": 0,
                "tokens_thinking": 0,
                "kind": "",
                "happened": "",
            },
        ],
        "total": {
            "task_id": "TOTAL",
            "units": 4,
            "reviews": 1,
            "prompt_bytes": 24,
            "seconds": 95.75,
            "tokens_in": 1300,
            "tokens_out": 130,
            "tokens_cached": 540,
            "cost": 1.75,
            "estimated": True,
            "title": "",
            "roles": {"implementer": 3, "evaluator": 1},
            "pr": None,
            "status": "",
            "tokens_cache_write": 200,
            "tokens_thinking": 30,
            "kind": "",
            "happened": "",
        },
        "agents": [
            {
                "agent": "claude",
                "model": None,
                "units": 4,
                "usage": {
                    "tokens_in": 1300,
                    "tokens_out": 130,
                    "tokens_cached": 540,
                    "cost": 1.75,
                    "estimated": True,
                    "tokens_cache_write": 200,
                    "tokens_thinking": 30,
                },
            }
        ],
    }
    assert [t.task_id for t in stats.tasks] == ["T-1", "T-2", "T-3", "T-10"]
    assert stats.total.seconds == 95.75
    assert json.loads(json.dumps(stats.as_json())) == stats.as_json()


def test_stats_count_units_by_role_in_the_order_a_task_meets_them(store: Store) -> None:
    """The full pipeline's roles, as the default's: counted per task and in total; qa and the
    judge count as reviews, as reviewers do."""
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    roles = [Role.JUDGE, Role.IMPLEMENTER, Role.PLANNER, Role.WRITER, Role.QA, Role.PLANNER]
    for role in roles:
        unit_id = store.start_unit(attempt.id, role, "claude", None, "prompt")
        store.finish_unit(unit_id, "done", Usage(10, 1), None)
    figures = store.stats(run.id)
    [task] = figures.tasks
    expected = {"writer": 1, "planner": 2, "implementer": 1, "qa": 1, "judge": 1}
    assert task.roles == expected
    assert list(task.roles) == list(expected)  # the pipeline's order, not the units'
    assert (task.units, task.reviews, task.tokens_in) == (6, 2, 60)
    assert figures.total.roles == expected
    assert figures.as_json()["tasks"][0]["roles"] == expected


def test_stats_per_agent_and_model_as_each_reported(store: Store) -> None:
    """A run whose worker and reviewers ran on different agents: each keeps its own figures,
    the dollars it reported apart from the estimated ones."""
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    units = [
        ("implementer", "claude", "opus", Usage(5000, 300, 3000, 0.25, False, 1500, 40)),
        ("evaluator", "codex", "gpt-5", Usage(2000, 100, 900, 0.01, True, 0, 64)),
        ("implementer", "claude", "opus", Usage(1000, 50, 0, 0.05, False, 800, 0)),
        ("evaluator", "codex", None, Usage(10, 1)),
    ]
    for role, agent, model, usage in units:
        unit_id = store.start_unit(attempt.id, role, agent, model, "prompt")
        store.finish_unit(unit_id, "done", usage, None)
    agents = store.stats(run.id).agents
    assert [(a.agent, a.model, a.units) for a in agents] == [
        ("claude", "opus", 2),
        ("codex", "gpt-5", 1),
        ("codex", None, 1),
    ]
    assert agents[0].usage == Usage(6000, 350, 3000, 0.30, False, 2300, 40)
    assert agents[1].usage == Usage(2000, 100, 900, 0.01, True, 0, 64)
