"""The ledger: written with the attempt's end, read back decoded, shown as it was stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from taskhand.state.ledger import CaseNote, CheckNote, Entry, LedgerOutcome, VerdictNote
from taskhand.state.records import AttemptStatus
from taskhand.state.store import Store
from taskhand.unit import CaseReport, Evidence, Verdict
from tests.state import new_run, raw

REJECT = Verdict(False, "weak_test", "It asserts nothing.", ["t.py:test_a"], "Assert the count.")
CASE = {
    "resolution": "Added count().",
    "criteria": [{"criterion": "count works", "evidence": "wc.py:count"}],
    "workarounds": ["pinned a version"],
    "uncertainties": [],
}
GATES = [
    {"name": "command", "ok": False, "detail": "`pytest` exited 1\nFAILED test_a"},
    {"name": "scope", "ok": True, "detail": "in scope"},
]


def test_an_entry_is_written_with_the_attempt_end_and_read_per_task(store: Store) -> None:
    run = new_run(store)
    first = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-2", "/wt", "b", "base")
    second = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    verdicts = [{"lens": "tests", **REJECT.as_json()}]
    entry = Entry("rejected", "rejected (tests)", "1 file (+3 -0): a.py", CASE, GATES, verdicts)
    store.finish_attempt(first.id, "rejected", "weak_test", entry)
    store.finish_attempt(other.id, "failed", "x", Entry("checks_failed", "exit 1"))
    store.finish_attempt(second.id, "passed", "ok", Entry("accepted", "accepted"))
    entries = store.ledger(run.id, "T-1")
    assert [(e.iteration, e.outcome, e.attempt_id) for e in entries] == [
        (1, LedgerOutcome.REJECTED, first.id),
        (2, LedgerOutcome.ACCEPTED, second.id),
    ]
    rejected = entries[0]
    assert rejected.verdicts == [
        VerdictNote("tests", "reject", "weak_test", "It asserts nothing.", ["t.py:test_a"],
                    "Assert the count.")
    ]  # fmt: skip
    assert rejected.rejections[0].next_step == "Assert the count."
    assert rejected.case == CaseNote(
        "Added count().",
        CaseReport([Evidence("count works", "wc.py:count")], ["pinned a version"], []),
    )
    assert rejected.failed_checks == [CheckNote("command", False, GATES[0]["detail"])]
    assert rejected.diff_summary == "1 file (+3 -0): a.py"
    assert entries[1].case is None and entries[1].verdicts == []  # no case was made
    assert [e.iteration for e in store.ledger(run.id, "T-1", last=1)] == [2]
    assert [e.outcome for e in store.ledger(run.id, "T-2")] == ["checks_failed"]
    assert store.attempts(run.id, "T-1")[0].status is AttemptStatus.REJECTED


def test_an_entry_shows_exactly_what_was_stored(store: Store, db_path: Path) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    verdicts = [{"lens": "general", **REJECT.as_json()}, {"lens": "security", "verdict": "accept",
                "category": "", "concern": "", "evidence": [], "next_step": ""}]  # fmt: skip
    entry = Entry("rejected", "no", "", CASE, GATES, verdicts)
    store.finish_attempt(attempt.id, "rejected", "no", entry)
    [read] = store.ledger(run.id, "T-1")
    with raw(db_path) as conn:
        stored = conn.execute("SELECT id, report, gates, verdicts, created FROM ledger").fetchone()
    assert read.as_json() == {
        "id": stored[0],
        "run_id": run.id,
        "task_id": "T-1",
        "attempt_id": attempt.id,
        "iteration": 1,
        "outcome": "rejected",
        "summary": "no",
        "diff_summary": "",
        "report": json.loads(stored[1]),
        "gates": json.loads(stored[2]),
        "verdicts": json.loads(stored[3]),
        "created": stored[4],
    }
    assert json.dumps(read.as_json()["verdicts"]) == stored[3]  # key order too


def test_an_entry_and_the_attempt_end_commit_together(store: Store, db_path: Path) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    store.finish_attempt(attempt.id, "failed", "x", Entry("checks_failed", "exit 1"))
    with pytest.raises(sqlite3.IntegrityError):  # one entry per attempt, never two
        store.finish_attempt(attempt.id, "failed", "y", Entry("checks_failed", "again"))
    assert store.attempts(run.id, "T-1")[0].reason == "x"  # the failed write changed nothing
    assert len(store.ledger(run.id, "T-1")) == 1
    with raw(db_path) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE ledger SET outcome = 'accepted'")


def test_an_outcome_outside_the_vocabulary_is_refused(store: Store) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    with pytest.raises(ValueError, match="'passed' is not a valid LedgerOutcome"):
        store.finish_attempt(attempt.id, "passed", "ok", Entry("passed", "ok"))
    assert store.attempts(run.id)[0].status is AttemptStatus.RUNNING  # nothing was written
    assert store.ledger(run.id, None) == []


def test_a_verdict_reads_the_same_in_an_attempts_reason_and_the_next_prompt() -> None:
    general = VerdictNote.from_json({"lens": "general", **REJECT.as_json()})
    security = VerdictNote.from_json({"lens": "security", **REJECT.as_json()})
    assert general.line() == "rejected as weak_test: It asserts nothing."
    assert security.line() == "rejected (security review) as weak_test: It asserts nothing."
    assert VerdictNote("tests", "accept").line() == "accepted (tests review)"
    assert general.details() == [("evidence", "t.py:test_a"), ("next step", "Assert the count.")]
    assert VerdictNote("general", "accept", concern="Fine.").details() == []
