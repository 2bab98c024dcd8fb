"""The state store: round trips, numbering, the event log, durability and concurrency."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from taskhand.plan.model import Exchange, Status
from taskhand.state.events import EventKind
from taskhand.state.records import AttemptStatus, RunStatus, TaskState
from taskhand.state.store import Store
from taskhand.unit import Role, Usage
from tests import ROOT
from tests.state import TIMESTAMP, new_run, raw

SRC = ROOT / "src"


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(SRC)},
        check=False,
    )


# Opening


def test_open_creates_parent_folders_and_sets_durable_pragmas(store: Store, db_path: Path) -> None:
    assert db_path.is_file()
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    with raw(db_path) as other:  # WAL is a property of the file, seen by every connection
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_close_is_a_context_manager_exit(db_path: Path) -> None:
    with Store.open(db_path) as opened:
        new_run(opened)
    with pytest.raises(sqlite3.ProgrammingError):
        opened.runs()


# Runs


def test_create_run_round_trips(store: Store) -> None:
    run = new_run(store)
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", run.id)
    assert TIMESTAMP.match(run.created) and run.updated == run.created
    # The id's time is the creation time, so ids sort like creation times.
    assert run.id[:15] == run.created[:19].replace("-", "").replace(":", "").replace("T", "-")
    assert (run.plan_path, run.dialect, run.repo) == ("plans/a", "markdown", "/repo")
    assert (run.base_sha, run.run_branch, run.status, run.reason) == (
        "abc123",
        "taskhand/run",
        "running",
        None,
    )
    assert run.config == {"jobs": 2}
    assert store.get_run(run.id) == run
    assert store.get_run("20990101-000000-ffff") is None


def test_create_run_strips_secret_keys_from_config(store: Store, db_path: Path) -> None:
    config = {
        "jobs": 2,
        "OPENAI_API_KEY": "sk-1",
        "github_token": "ghp-2",
        "Client_Secret": "s3",
        "password": "p4",
        "agent": {"name": "claude", "apiKey": "k5", "args": [{"Token": "t6", "x": 1}]},
        "GH_PAT": "p7",
        "npm_auth": "a8",
        "script": "deploy --db postgres://app:S3cretPassw0rd@db/app",
    }
    run = store.create_run("p", "markdown", "/r", "sha", "b", config)
    expected = {
        "jobs": 2,
        "agent": {"name": "claude", "args": [{"x": 1}]},
        "script": "deploy --db postgres://app:[redacted]@db/app",  # the one rule: shapes too
    }
    assert run.config == expected
    with raw(db_path) as conn:
        stored = conn.execute("SELECT config FROM runs").fetchone()[0]
    assert json.loads(stored) == expected
    for secret in ("sk-1", "ghp-2", "s3", "p4", "k5", "t6", "p7", "a8", "S3cretPassw0rd"):
        assert secret not in stored
    assert "OPENAI_API_KEY" in config  # the caller's dict is left alone


def test_runs_newest_first_and_latest_by_plan(store: Store) -> None:
    first = new_run(store, "plans/a")
    time.sleep(0.002)
    second = new_run(store, "plans/b")
    time.sleep(0.002)
    third = new_run(store, "plans/a")
    assert [r.id for r in store.runs()] == [third.id, second.id, first.id]
    assert store.latest_run() == third
    assert store.latest_run("plans/b") == second
    assert store.latest_run("plans/a") == third
    assert store.latest_run("plans/none") is None


def test_run_status_and_branch_updates(store: Store) -> None:
    run = new_run(store)
    store.set_run_status(run.id, "failed", "gate broke")
    store.set_run_branch(run.id, "taskhand/other")
    changed = store.get_run(run.id)
    assert changed is not None
    assert (changed.status, changed.reason, changed.run_branch) == (
        "failed",
        "gate broke",
        "taskhand/other",
    )
    assert changed.updated >= run.updated
    store.set_run_status(run.id, RunStatus.COMPLETED)
    done = store.get_run(run.id)
    assert done is not None and (done.status, done.reason) == (RunStatus.COMPLETED, None)
    assert done.status is RunStatus.COMPLETED  # read back as the word's enum
    with pytest.raises(ValueError, match="'done' is not a valid RunStatus"):
        store.set_run_status(run.id, "done")  # not a word of the vocabulary
    with pytest.raises(KeyError):
        store.set_run_status("nope", RunStatus.COMPLETED)
    with pytest.raises(KeyError):
        store.set_run_branch("nope", "b")


def test_empty_store_has_no_runs(store: Store) -> None:
    assert store.runs() == []
    assert store.latest_run() is None


# Tasks


def test_set_task_upserts_and_orders_by_id(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-10", Status.OPEN)
    store.set_task(run.id, "T-2", "BUSY")
    store.set_task(run.id, "T-2", Status.WAIT, "which database?")
    states = store.task_states(run.id)
    assert list(states) == ["T-2", "T-10"]
    wait = states["T-2"]
    assert isinstance(wait, TaskState)
    assert (wait.run_id, wait.status, wait.reason) == (run.id, Status.WAIT, "which database?")
    assert TIMESTAMP.match(wait.updated)
    assert states["T-10"].status is Status.OPEN and states["T-10"].reason is None
    assert store.task_states(new_run(store).id) == {}


def test_set_task_refuses_unknown_status_and_run(store: Store) -> None:
    run = new_run(store)
    with pytest.raises(ValueError):
        store.set_task(run.id, "T-1", "MAYBE")
    with pytest.raises(sqlite3.IntegrityError):
        store.set_task("no-such-run", "T-1", "OPEN")
    assert store.task_states(run.id) == {}


def test_a_status_repeated_without_a_reason_keeps_its_reason(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", Status.FAIL, "the checks failed")
    store.set_task(run.id, "T-1", Status.FAIL)  # Complete repeats what Conclude said
    assert store.task_states(run.id)["T-1"].reason == "the checks failed"
    store.set_task(run.id, "T-1", Status.BUSY)
    assert store.task_states(run.id)["T-1"].reason is None


def test_a_reopened_task_counts_attempts_and_spend_from_the_reopen(store: Store) -> None:
    run = new_run(store)
    for n in (1, 2):
        attempt = store.start_attempt(run.id, "T-1", f"/wt/{n}", "b", "base")
        unit = store.start_unit(attempt.id, "implementer", "replay", None, "prompt")
        store.finish_unit(unit, "done", Usage(100, 10, cost=0.5), None)
        store.finish_attempt(attempt.id, "failed", "no")
    store.set_task(run.id, "T-1", Status.FAIL, "2 attempts failed")
    assert [a.number for a in store.counted_attempts(run.id, "T-1")] == [1, 2]
    store.reopen_task(run.id, "T-1", "taskhand reopen")
    state = store.task_states(run.id)["T-1"]
    assert (state.status, state.reason, state.counted_from) == (Status.OPEN, None, 2)
    assert store.counted_attempts(run.id, "T-1") == []
    assert store.counted_usage(run.id, "T-1") == Usage()
    third = store.start_attempt(run.id, "T-1", "/wt/3", "b", "base")
    assert [a.number for a in store.counted_attempts(run.id, "T-1")] == [third.number] == [3]
    assert len(store.attempts(run.id, "T-1")) == 3  # nothing is forgotten
    assert store.usage(run.id, "T-1").cost == 1.0
    [event] = [e for e in store.events(run.id) if e.kind == "task_reopened"]
    assert (event.task_id, event.data) == ("T-1", {"by": "taskhand reopen"})


def test_an_answer_closes_the_latest_question(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", Status.WAIT, "Which? (A) a", request="Which? (A) a")
    store.answer_task(run.id, "T-1", "a")
    store.set_task(run.id, "T-1", Status.WAIT, "And then?", request="And then?")
    assert store.requests(run.id) == {"T-1": [Exchange("Which? (A) a", "a"), Exchange("And then?")]}
    store.answer_task(run.id, "T-1", "stop")
    assert store.requests(run.id)["T-1"][-1] == Exchange("And then?", "stop")
    assert store.task_states(run.id)["T-1"].status is Status.OPEN
    assert store.requests(new_run(store).id) == {}


# Attempts


def test_attempts_are_numbered_per_run_and_task(store: Store) -> None:
    run, other = new_run(store), new_run(store)
    a1 = store.start_attempt(run.id, "T-1", "/wt/1", "th/T-1-1", "base1")
    b1 = store.start_attempt(run.id, "T-2", "/wt/2", "th/T-2-1", "base1")
    a2 = store.start_attempt(run.id, "T-1", "/wt/3", "th/T-1-2", "base2")
    c1 = store.start_attempt(other.id, "T-1", "/wt/4", "th/T-1-1", "base1")
    assert [a1.number, b1.number, a2.number, c1.number] == [1, 1, 2, 1]
    assert (a2.run_id, a2.task_id, a2.worktree, a2.branch, a2.base_sha) == (
        run.id,
        "T-1",
        "/wt/3",
        "th/T-1-2",
        "base2",
    )
    assert (a2.status, a2.candidate_sha, a2.reason, a2.ended) == ("running", None, None, None)
    assert TIMESTAMP.match(a2.started)
    assert [a.id for a in store.attempts(run.id)] == [a1.id, b1.id, a2.id]
    assert store.attempts(run.id, "T-1") == [a1, a2]
    assert store.attempts(other.id) == [c1]


def test_candidate_and_finish_attempt(store: Store) -> None:
    run = new_run(store)
    first = store.start_attempt(run.id, "T-1", "/wt", "b1", "base")
    second = store.start_attempt(run.id, "T-1", "/wt", "b2", "base")
    third = store.start_attempt(run.id, "T-2", "/wt", "b3", "base")
    store.set_candidate(first.id, "cafe01")
    store.finish_attempt(first.id, "failed", "tests failed")
    store.finish_attempt(second.id, "passed")
    done_first, done_second, running = store.attempts(run.id)
    assert (done_first.candidate_sha, done_first.status, done_first.reason) == (
        "cafe01",
        "failed",
        "tests failed",
    )
    assert done_first.ended is not None and TIMESTAMP.match(done_first.ended)
    assert (done_second.status, done_second.reason) == ("passed", None)
    assert store.open_attempts(run.id) == [running] == [third]
    store.finish_attempt(third.id, "interrupted", "crash")
    assert store.open_attempts(run.id) == []
    store.finish_attempt(second.id, "question", "which database?")  # the runner's own words
    assert store.attempts(run.id)[1].status is AttemptStatus.QUESTION
    with pytest.raises(ValueError):
        store.finish_attempt(first.id, "running")
    with pytest.raises(ValueError):
        store.finish_attempt(first.id, "")
    with pytest.raises(ValueError):
        store.finish_attempt(first.id, "accepted")  # a ledger outcome, not an attempt's end
    with pytest.raises(KeyError):
        store.finish_attempt(9999, "passed")
    with pytest.raises(KeyError):
        store.set_candidate(9999, "sha")


# Units and gates


def test_units_round_trip(store: Store) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-2", "/wt", "b", "base")
    unit_id = store.start_unit(attempt.id, "implementer", "claude", "opus", "héllo " * 200)
    open_id = store.start_unit(other.id, "evaluator", "codex", None, "x", lens="security")
    (started,) = store.units(run.id, "T-1")
    assert (started.id, started.attempt_id, started.run_id, started.task_id) == (
        unit_id,
        attempt.id,
        run.id,
        "T-1",
    )
    assert started.role is Role.IMPLEMENTER
    assert (started.role, started.agent, started.model, started.prompt_bytes) == (
        "implementer",
        "claude",
        "opus",
        1400,  # bytes, not characters: é takes two
    )
    assert started.prompt_tokens == 350 and started.lens == ""
    assert (started.ended, started.outcome, started.transcript) == (None, None, None)
    assert started.usage == Usage()
    store.record_transcript(unit_id, "/t/u1.jsonl")  # written as the unit goes
    working = store.units(run.id, "T-1")[0]
    assert (working.transcript, working.ended, working.outcome) == ("/t/u1.jsonl", None, None)

    store.finish_unit(unit_id, "done", Usage(100, 20, 50, 0.25, True), "/t/u1.jsonl")
    finished = store.units(run.id, "T-1")[0]
    assert finished.ended is not None and finished.ended >= finished.started
    assert (finished.outcome, finished.transcript) == ("done", "/t/u1.jsonl")
    assert (finished.tokens_in, finished.tokens_out, finished.tokens_cached) == (100, 20, 50)
    assert (finished.cost, finished.cost_estimated) == (0.25, True)
    assert finished.usage == Usage(100, 20, 50, 0.25, True)
    assert [u.id for u in store.units(run.id)] == [unit_id, open_id]
    assert store.units(run.id)[1].model is None
    assert (store.units(run.id)[1].lens, store.units(run.id)[1].prompt_tokens) == ("security", 1)
    with pytest.raises(KeyError):
        store.start_unit(9999, "implementer", "claude", None, "")
    with pytest.raises(ValueError):
        store.start_unit(attempt.id, "reviewer", "claude", None, "")  # not a Role
    with pytest.raises(KeyError):
        store.finish_unit(9999, "done", Usage(), None)


def test_gates_round_trip(store: Store) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    store.record_gate(attempt.id, "command", False, "exit 1", 1, 2.5, "FAILED test_x")
    store.record_gate(attempt.id, "whitespace", True, "clean")
    store.record_gate(other.id, "scope", True, "in scope")
    failed, clean = store.gates(attempt.id)
    assert (failed.attempt_id, failed.name, failed.ok, failed.detail) == (
        attempt.id,
        "command",
        False,
        "exit 1",
    )
    assert (failed.exit_code, failed.seconds, failed.output) == (1, 2.5, "FAILED test_x")
    assert (clean.name, clean.ok, clean.exit_code, clean.seconds, clean.output) == (
        "whitespace",
        True,
        None,
        None,
        "",
    )
    assert [g.name for g in store.gates(other.id)] == ["scope"]
    assert store.gates(9999) == []


# Events


def test_events_append_in_order_and_tail_after_an_id(store: Store) -> None:
    run, other = new_run(store), new_run(store)
    assert store.newest_event(run.id) == 0  # none yet
    first = store.event(run.id, EventKind.RUN_RESUMED, plan="plans/a")
    store.event(other.id, EventKind.RUN_RESUMED, plan="plans/b")
    second = store.event(run.id, EventKind.VIOLATION, "T-1", what=Path("/wt"))
    third = store.event(run.id, "gate", "T-1", name="command", ok=False, detail="é")
    assert first.id < second.id < third.id
    assert (second.run_id, second.kind, second.task_id) == (run.id, EventKind.VIOLATION, "T-1")
    assert second.data == {"what": "/wt"}  # a Path written as text
    assert TIMESTAMP.match(second.ts)
    assert first.task_id is None and first.data == {"plan": "plans/a"}
    assert third.kind is EventKind.GATE  # a kind's word is its enum
    assert store.events(run.id) == [first, second, third]
    assert store.events(run.id, after=first.id) == [second, third]
    assert store.events(run.id, after=third.id) == []
    assert store.events_of(run.id, EventKind.GATE) == [third]
    assert store.newest_event(run.id) == third.id  # where a tail of the log starts


def test_events_refuse_a_kind_or_a_field_the_catalogue_lacks(store: Store) -> None:
    run = new_run(store)
    with pytest.raises(ValueError, match=r"no event kind 'run\.started'"):
        store.event(run.id, "run.started", plan="p")
    with pytest.raises(ValueError, match=r"unknown \['id'\]"):
        store.event(run.id, EventKind.RUN_RESUMED, plan="p", id=5)  # export writes id and ts
    with pytest.raises(ValueError, match=r"missing \['plan'\]"):
        store.event(run.id, EventKind.RUN_RESUMED)
    with pytest.raises(ValueError, match=r"unknown \['sha1'\], missing \['sha'\]"):
        store.event(run.id, EventKind.INTEGRATED, sha1="abc")
    assert store.events(run.id) == []


def test_events_cannot_be_rewritten(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.event(run.id, EventKind.RUN_RESUMED, plan="p")
    with raw(db_path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE events SET kind = 'forged'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM events")
    assert [e.kind for e in store.events(run.id)] == [EventKind.RUN_RESUMED]


# Durability and concurrency


def test_committed_event_survives_sigkill(db_path: Path) -> None:
    code = f"""
import os, signal
from pathlib import Path
from taskhand.state.store import Store
store = Store.open(Path({str(db_path)!r}))
run = store.create_run("p", "markdown", "/r", "sha", "b", {{}})
store.event(run.id, "step", message="about to die")
print(run.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    result = run_python(code)
    assert result.returncode == -9, result.stderr
    run_id = result.stdout.strip()
    with Store.open(db_path) as reopened:
        died = [(e.kind, e.data) for e in reopened.events(run_id)]
        assert died == [(EventKind.STEP, {"message": "about to die"})]
        run = reopened.get_run(run_id)
        assert run is not None and run.status is RunStatus.RUNNING


def test_an_event_only_telling_what_happened_leaves_state_writes_synced(store: Store) -> None:
    run = new_run(store)
    store.event(run.id, EventKind.STEP, message="TaskTrack STEP: Claim")  # without an fsync
    store.event(run.id, EventKind.INTEGRATED, "T-001", sha="abc")  # read by recovery: synced
    store.set_task(run.id, "T-001", Status.DONE)
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again
    assert [e.kind for e in store.events(run.id)] == [EventKind.STEP, EventKind.INTEGRATED]


def test_reader_is_not_blocked_by_an_open_write_transaction(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.event(run.id, EventKind.STEP, message="committed")
    with raw(db_path) as writer:
        # A tiny page cache makes a big write spill into the database file: without WAL that
        # takes an exclusive lock and the reader below would wait out busy_timeout.
        writer.execute("PRAGMA cache_size = 1")
        writer.execute("BEGIN IMMEDIATE")
        writer.executemany(
            "INSERT INTO events (run_id, ts, kind, data) VALUES (?, 'ts', 'step', ?)",
            [(run.id, json.dumps({"message": "x" * 2000})) for _ in range(200)],
        )
        started = time.monotonic()
        said = [e.data["message"] for e in store.events(run.id)]
        assert time.monotonic() - started < 1.0  # well under busy_timeout: it never waited
        assert said == ["committed"]
        writer.execute("COMMIT")
    assert [e.data["message"] for e in store.events(run.id)] == ["committed"] + ["x" * 2000] * 200


def test_writer_waits_for_another_writer_instead_of_failing(store: Store, db_path: Path) -> None:
    run = new_run(store)
    holding = threading.Event()

    def hold_write_lock() -> None:
        with raw(db_path) as writer:
            writer.execute("BEGIN IMMEDIATE")
            holding.set()
            time.sleep(0.5)
            writer.execute("COMMIT")

    thread = threading.Thread(target=hold_write_lock)
    thread.start()
    try:
        assert holding.wait(10)
        # Waits out the other writer under busy_timeout.
        store.event(run.id, EventKind.STEP, message="after the wait")
    finally:
        thread.join()
    assert [e.data for e in store.events(run.id)] == [{"message": "after the wait"}]


def test_two_processes_share_the_database(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", "BUSY")
    code = f"""
from pathlib import Path
from taskhand.state.store import Store
with Store.open(Path({str(db_path)!r})) as store:
    assert store.task_states({run.id!r})["T-1"].status == "BUSY"
    store.set_task({run.id!r}, "T-1", "DONE")
    for n in range(20):
        store.event({run.id!r}, "attempt_started", "T-1", attempt=n)
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert store.task_states(run.id)["T-1"].status is Status.DONE
    assert [e.data["attempt"] for e in store.events(run.id)] == list(range(20))
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    assert attempt.number == 1
