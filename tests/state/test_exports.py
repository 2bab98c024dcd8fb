"""Exports: the run's log as events.jsonl and its statuses as Tilth's task-status.json."""

from __future__ import annotations

from pathlib import Path

from taskhand.state.events import EventKind
from taskhand.state.store import Store
from tests.state import new_run


def test_export_events_writes_exact_jsonl(store: Store, tmp_path: Path) -> None:
    run, other = new_run(store), new_run(store)
    first = store.event(run.id, EventKind.RUN_RESUMED, plan="plans/a")
    store.event(other.id, EventKind.STEP, message="noise")
    second = store.event(run.id, EventKind.ATTEMPT_PAUSED, "T-1", attempt=1, case={"a": [1, None]})
    third = store.event(run.id, EventKind.TASK_ANSWERED, "T-1", response="ünïcode\x1b[2J")
    out = tmp_path / "exports" / "events.jsonl"
    out.parent.mkdir()
    out.write_text("stale\n", encoding="utf-8")
    store.export_events(run.id, out)
    assert out.read_text(encoding="utf-8") == (
        f'{{"id": {first.id}, "ts": "{first.ts}", "kind": "run_resumed", "task_id": null,'
        ' "plan": "plans/a"}\n'
        f'{{"id": {second.id}, "ts": "{second.ts}", "kind": "attempt_paused", "task_id": "T-1",'
        ' "attempt": 1, "case": {"a": [1, null]}}\n'
        f'{{"id": {third.id}, "ts": "{third.ts}", "kind": "task_answered", "task_id": "T-1",'
        ' "response": "ünïcode\\u001b[2J"}\n'
    )
    assert sorted(p.name for p in out.parent.iterdir()) == ["events.jsonl"]  # no temp left


def test_export_events_of_an_empty_run_is_an_empty_file(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "new" / "events.jsonl"
    store.export_events(new_run(store).id, out)
    assert out.read_bytes() == b""


def test_export_task_status_is_a_tilth_flat_map(store: Store, tmp_path: Path) -> None:
    run = new_run(store)
    for task_id, status in [
        ("T-10", "DONE"),
        ("T-2", "FAIL"),
        ("T-1", "DONE"),
        ("T-3", "OPEN"),
        ("T-4", "BUSY"),
        ("T-5", "WAIT"),
    ]:
        store.set_task(run.id, task_id, status)
    out = tmp_path / "exports" / "task-status.json"
    store.export_task_status(run.id, out)
    assert out.read_text(encoding="utf-8") == (
        '{\n  "T-1": "done",\n  "T-2": "failed",\n  "T-5": "waiting",\n  "T-10": "done"\n}\n'
    )
    assert [p.name for p in out.parent.iterdir()] == ["task-status.json"]  # no temp left
    assert out.stat().st_mode & 0o777 == 0o600  # the state is its owner's alone
