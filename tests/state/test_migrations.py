"""Migrations: each applied once, in order, whole or not at all; and a database an earlier
version wrote opens and reads as it did."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from taskhand.state import migrations
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.state.store import Store
from taskhand.unit import Role, Usage
from tests.state import new_run, raw


def applied(db_path: Path) -> list[str]:
    with raw(db_path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]


def columns(db_path: Path, table: str) -> list[str]:
    with raw(db_path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_reopening_applies_nothing_twice(db_path: Path) -> None:
    with Store.open(db_path) as first:
        run = new_run(first)
    with Store.open(db_path) as second:
        assert second.get_run(run.id) == run
    assert applied(db_path) == [m.__name__ for m in migrations.MIGRATIONS]


def test_old_database_gets_only_missing_migrations(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations._m001_initial])
    with Store.open(db_path) as old:
        run = new_run(old)

    calls: list[str] = []

    def _m002_add_note(conn: sqlite3.Connection) -> None:
        calls.append("m002")
        conn.execute("ALTER TABLE runs ADD COLUMN note TEXT")

    def _m001_spy(conn: sqlite3.Connection) -> None:  # must never run: m001 is recorded
        calls.append("m001")

    _m001_spy.__name__ = "_m001_initial"
    monkeypatch.setattr(migrations, "MIGRATIONS", [_m001_spy, _m002_add_note])
    assert "note" not in columns(db_path, "runs")  # the new column exists only after the upgrade
    with Store.open(db_path) as upgraded:
        assert calls == ["m002"]
        assert [r.id for r in upgraded.runs()] == [run.id]  # old data kept
    with Store.open(db_path):
        assert calls == ["m002"]
    assert applied(db_path) == ["_m001_initial", "_m002_add_note"]
    assert "note" in columns(db_path, "runs")


def test_failed_migration_leaves_nothing_half_applied(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def _m002_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("bad migration")

    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations._m001_initial, _m002_broken])
    with pytest.raises(RuntimeError):
        Store.open(db_path)
    assert applied(db_path) == ["_m001_initial"]
    with raw(db_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables


# A database the previous schema (migrations 1 to 3) holds, written as that version wrote it.

REPORT = {
    "resolution": "Added count().",
    "criteria": [{"criterion": "count works", "evidence": "wc.py:count"}],
    "workarounds": [],
    "uncertainties": ["unicode"],
}
GATES = [
    {"name": "command", "ok": False, "detail": "`pytest` exited 1"},
    {"name": "scope", "ok": True, "detail": "in scope"},
]
VERDICTS = [
    {
        "lens": "tests",
        "verdict": "reject",
        "category": "weak_test",
        "concern": "The test asserts nothing.",
        "evidence": ["test_wc.py:test_count"],
        "next_step": "Assert the count.",
    }
]


def previous_database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run with two attempts at T-1, their units and one ledger entry, in the old schema."""
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:3])
        with Store.open(db_path) as old:
            run = new_run(old)
            first = old.start_attempt(run.id, "T-1", "/wt/1", "b", "base")
            second = old.start_attempt(run.id, "T-1", "/wt/2", "b", "base")
    with raw(db_path) as conn:
        for attempt, role, lens, size in (
            (first, "implementer", "", 1400),
            (second, "evaluator", "tests", 9),
        ):
            conn.execute(
                "INSERT INTO units (attempt_id, run_id, task_id, role, agent, model, started,"
                " ended, tokens_in, tokens_out, tokens_cached, cost, cost_estimated, outcome,"
                " transcript, prompt_bytes, prompt_tokens, lens) VALUES (?, ?, 'T-1', ?, 'claude',"
                " NULL, '2026-12-02T14:00:00.000Z', '2026-12-02T14:00:30.500Z', 100, 10, 40, 0.5,"
                " 0, 'done', '/t/u.jsonl', ?, ?, ?)",
                (attempt.id, run.id, role, size, (size + 3) // 4, lens),
            )
        conn.execute(
            "INSERT INTO ledger (run_id, task_id, attempt_id, iteration, outcome, summary,"
            " diff_summary, report, gates, verdicts, created) VALUES (?, 'T-1', ?, 1, 'rejected',"
            " 'rejected (tests)', '1 file (+3 -0): wc.py', ?, ?, ?, '2026-12-02T14:01:00.000Z')",
            (run.id, first.id, json.dumps(REPORT), json.dumps(GATES), json.dumps(VERDICTS)),
        )
        conn.execute("UPDATE attempts SET status = 'rejected' WHERE id = ?", (first.id,))
    return run.id


def test_a_database_of_the_previous_schema_opens_and_reads_as_before(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = previous_database(db_path, monkeypatch)
    assert "run_id" in columns(db_path, "units")
    with Store.open(db_path) as store:
        first, second = store.units(run_id)
        assert (first.run_id, first.task_id, first.role, first.lens) == (
            run_id,
            "T-1",
            Role.IMPLEMENTER,
            "",
        )
        assert (first.prompt_bytes, first.prompt_tokens) == (1400, 350)  # derived, as stored
        assert (second.role, second.lens, second.prompt_tokens) == (Role.EVALUATOR, "tests", 3)
        assert store.usage(run_id, "T-1") == Usage(200, 20, 80, 1.0, False)
        assert store.stats(run_id).total.reviews == 1
        [entry] = store.ledger(run_id, "T-1")
        assert (entry.run_id, entry.task_id, entry.iteration) == (run_id, "T-1", 1)
        assert entry.outcome is LedgerOutcome.REJECTED
        shown = entry.as_json()
        assert (shown["report"], shown["gates"], shown["verdicts"]) == (REPORT, GATES, VERDICTS)
        # And it goes on: new rows land in the new shape.
        third = store.start_attempt(run_id, "T-1", "/wt/3", "b", "base")
        store.finish_unit(
            store.start_unit(third.id, "implementer", "claude", None, "x"), "done", Usage(), None
        )
        store.finish_attempt(third.id, AttemptStatus.PASSED, "ok", Entry("accepted", "ok"))
        assert [e.iteration for e in store.ledger(run_id, "T-1")] == [1, 3]
        assert [u.attempt_id for u in store.units(run_id)][-1] == third.id
    assert applied(db_path)[-1] == migrations.MIGRATIONS[-1].__name__
    assert "run_id" not in columns(db_path, "units")
    assert "prompt_tokens" not in columns(db_path, "units")
    assert not {"run_id", "task_id", "iteration"} & set(columns(db_path, "ledger"))
    with raw(db_path) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE ledger SET outcome = 'accepted'")  # still append-only


def test_a_database_before_the_usage_parts_keeps_its_units_and_records_the_parts(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [m.__name__ for m in migrations.MIGRATIONS]
    before = migrations.MIGRATIONS[: names.index("_m008_usage_parts")]
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", before)
        with Store.open(db_path) as old:
            run = new_run(old)
            attempt = old.start_attempt(run.id, "T-1", "/wt/1", "b", "base")
            unit = old.start_unit(attempt.id, "implementer", "claude", "opus", "prompt")
    with raw(db_path) as conn:  # ended as that version ended it: no parts to write
        conn.execute(
            "UPDATE units SET ended = '2026-12-02T14:00:30.500Z', outcome = 'done',"
            " tokens_in = 900, tokens_out = 90, tokens_cached = 300, cost = 0.25 WHERE id = ?",
            (unit,),
        )
    assert "tokens_thinking" not in columns(db_path, "units")
    with Store.open(db_path) as store:
        [kept] = store.units(run.id)
        assert (kept.id, kept.agent, kept.model, kept.prompt_bytes) == (unit, "claude", "opus", 6)
        assert kept.usage == Usage(900, 90, 300, 0.25, False, 0, 0)
        later = store.start_attempt(run.id, "T-1", "/wt/2", "b", "base")
        added = store.start_unit(later.id, "implementer", "claude", "opus", "prompt")
        reported = Usage(1000, 100, 200, 0.5, False, tokens_cache_write=400, tokens_thinking=60)
        store.finish_unit(added, "done", reported, None)
        assert store.units(run.id)[-1].usage == reported
        assert store.usage(run.id, "T-1") == Usage(1900, 190, 500, 0.75, False, 400, 60)
        total = store.stats(run.id).total
        assert (total.tokens_cache_write, total.tokens_thinking) == (400, 60)
    assert {"tokens_cache_write", "tokens_thinking"} <= set(columns(db_path, "units"))
