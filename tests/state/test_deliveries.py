"""The deliveries' rows: one per pull request of a run, each step's state kept, the address
kept once known."""

from __future__ import annotations

from taskhand.state.deliveries import RUN
from taskhand.state.records import DeliveryState
from taskhand.state.store import Store
from tests.state import TIMESTAMP, new_run


def test_a_delivery_row_follows_its_steps_and_keeps_its_address(store: Store) -> None:
    run = new_run(store)
    assert store.delivery(run.id, "T-1") is None
    for state in (DeliveryState.PENDING, DeliveryState.PUSHED):
        store.record_delivery(run.id, "T-1", "taskhand/T-1-a", "main", state)
    opened = store.record_delivery(
        run.id, "T-1", "taskhand/T-1-a", "main", DeliveryState.OPENED, pr_url="https://x/pull/1"
    )
    assert (opened.state, opened.pr_url, opened.reason) == (
        DeliveryState.OPENED,
        "https://x/pull/1",
        "",
    )
    assert TIMESTAMP.match(opened.updated)
    failed = store.record_delivery(
        run.id, "T-1", "taskhand/T-1-a", "main", DeliveryState.FAILED, reason="gh pr view failed"
    )
    assert (failed.pr_url, failed.reason) == ("https://x/pull/1", "gh pr view failed")
    store.record_delivery(run.id, RUN, "taskhand/run-1", "main", DeliveryState.PENDING)
    assert [(d.task_id, d.state) for d in store.deliveries(run.id)] == [
        ("T-1", DeliveryState.FAILED),
        ("", DeliveryState.PENDING),
    ]
    assert store.deliveries(new_run(store).id) == []
