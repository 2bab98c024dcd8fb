"""The progress view: one line per event worth reading as it passes, from one table of kinds,
and the status line following the task, the stage and the attempt."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console

from taskhand.state.events import Event, EventKind
from taskhand.views.progress import LINES, JsonLines, Progress

CASE = {"resolution": "r", "criteria": [], "workarounds": [], "uncertainties": []}
REJECT = {"verdict": "reject", "category": "weak_test", "concern": "no assert"}
NO_FINDINGS = {"category": "", "concern": "", "evidence": [], "next_step": ""}
# A run's worth of events, each with the line a person watching reads (None: no line).
WATCHED: list[tuple[EventKind, str | None, dict[str, Any], str | None]] = [
    (EventKind.RUN_STARTED, None, {"plan": "p", "base": "abc", "branch": "b", "agent": "replay"},
     "run R-1 started"),
    (EventKind.RUN_RESUMED, None, {"plan": "p"}, "run R-1 resumed"),
    (EventKind.WARNING, None, {"message": "sandbox off"}, "warning: sandbox off"),
    (EventKind.STEP, None, {"message": "TaskTrack STEP: Screen"}, "TaskTrack STEP: Screen"),
    (EventKind.PLAN_CHANGED, None, {"message": "the plan's files changed"}, None),
    (EventKind.ATTEMPT_STARTED, "T-1", {"attempt": 2, "start": "abc"}, "  T-1: attempt 2"),
    (EventKind.UNIT_STARTED, "T-1", {"role": "implementer", "attempt": 2, "lens": ""}, None),
    (EventKind.UNIT_FINISHED, "T-1", {"role": "implementer", "case": "done", "seconds": 1.5,
     "tokens_in": 10, "tokens_out": 2, "cost": 0.0},
     "  T-1: agent finished (done) in 1.5s, 10 tokens in, 2 out"),
    (EventKind.GATE, "T-1", {"name": "command", "ok": False, "detail": "`false` exited 1\nmore"},
     "  T-1: gate command FAILED: `false` exited 1"),
    (EventKind.GATE, "T-1", {"name": "scope", "ok": True, "detail": "in scope"},
     "  T-1: gate scope passed: in scope"),
    (EventKind.UNIT_STARTED, "T-1", {"role": "evaluator", "attempt": 2, "lens": "security"}, None),
    (EventKind.VERDICT, "T-1", {"lens": "security", **REJECT, "evidence": [], "next_step": "x"},
     "  T-1: reviewer (security) rejected as weak_test: no assert"),
    (EventKind.VERDICT, "T-1", {"lens": "general", "verdict": "accept", **NO_FINDINGS},
     "  T-1: reviewer accepted"),
    (EventKind.REVIEWER_WRITE_VIOLATION, "T-1", {"lens": "tests", "changes": ["a.txt"]},
     "  T-1: the tests reviewer changed the candidate (reviewer_write_violation); its verdict"
     " does not count"),
    (EventKind.REVIEW_FAILED, "T-1", {"lens": "tests", "reason": "no verdict: error\nx"},
     "  T-1: no verdict: error"),
    (EventKind.ATTEMPT_FAILED, "T-1", {"reason": "checks failed\nsecond"},
     "  T-1: attempt not accepted: checks failed"),
    (EventKind.ATTEMPT_REJECTED, "T-1", {"reason": "rejected"},
     "  T-1: attempt rejected by the reviewer"),
    (EventKind.ATTEMPT_REQUEUED, "T-2",
     {"attempt": 1, "after": ["T-1"], "reason": "requeued after the landing of T-1 (A): x\ny"},
     "  T-2: attempt 1 requeued after the landing of T-1 (A): x"),
    (EventKind.ATTEMPT_PAUSED, "T-1", {"attempt": 2, "case": CASE}, None),
    (EventKind.ATTEMPT_RESUMED, "T-1", {"attempt": 2}, None),
    (EventKind.ATTEMPT_INTERRUPTED, "T-1", {"attempt": 3},
     "  T-1: attempt 3 was interrupted; it will be redone"),
    (EventKind.INTEGRATED, "T-1", {"sha": "0123456789abcdef"}, "  T-1: integrated as 0123456789ab"),
    (EventKind.TASK_CONCLUDED, "T-1", {"status": "DONE", "text": "did it"}, None),
    (EventKind.TASK_REOPENED, "T-1", {"by": "taskhand reopen"}, None),
    (EventKind.TASK_ANSWERED, "T-1", {"response": "yes"}, None),
    (EventKind.OUTSIDE_CHANGE, "T-1", {"during": "the worker's unit",
     "changes": [".git/config was modified", "x"]},
     "  T-1: outside the workspace during the worker's unit: .git/config was modified"
     " and 1 more"),
    (EventKind.VIOLATION, "T-1", {"what": "the run branch was moved"}, None),
    (EventKind.TASK_MOVED, "T-1", {"before": "implementing", "after": "review",
     "waiting": False, "by": "harness"}, None),
    (EventKind.TASK_MOVED, "T-1", {"before": "plan", "after": "planned", "waiting": True,
     "by": "harness"}, "  T-1: plan -> planned (waits for a person)"),
    (EventKind.QUESTION_ASKED, "T-1", {"number": 1, "text": "Where?", "options": ["Header",
     "Settings"], "stage": "spec"}, "  T-1: asks Q1: Where? ((a) Header, (b) Settings)"),
    (EventKind.DELIVERED, "T-1", {"url": "https://x/pull/3", "branch": "taskhand/T-1-a",
     "base": "main"}, "  T-1: pull request https://x/pull/3"),
    (EventKind.DELIVERED, None, {"url": "https://x/pull/4", "branch": "taskhand/run-1",
     "base": "main"}, "  the run: pull request https://x/pull/4"),
    (EventKind.REPLAYED, "T-1", {"attempt": 1, "onto": "0123456789abcdef", "sha": "f" * 40},
     "  T-1: replayed onto 0123456789ab (another task landed), checks again"),
    (EventKind.TASK_HELD, "T-2", {"behind": ["T-1"], "paths": ["src/**"]},
     "  T-2: waits for T-1: both may change src/**"),
    (EventKind.DISPOSED, "T-1", {"attempt": 2, "status": "integrated",
     "target_ref": "taskhand/run-1", "sha": "0123456789abcdef"}, None),
    (EventKind.WORKSPACE_PRUNED, "T-1", {"attempt": 2, "bytes": 1048576,
     "folders": ["node_modules"]},
     "  T-1: pruned node_modules from attempt 2 (1,048,576 bytes freed)"),
    (EventKind.WORKSPACE_PRUNED, "T-1", {"attempt": 3, "bytes": 10,
     "folders": ["a/.venv", "b/dist", "c/build", "d/__pycache__", "e/target"]},
     "  T-1: pruned a/.venv, b/dist, c/build and 2 more from attempt 3 (10 bytes freed)"),
    (EventKind.WORKSPACE_PRUNED, "T-1", {"attempt": 4, "bytes": 10,
     "folders": ["a\nT-2: integrated as 0123/node_modules"]},
     '  T-1: pruned "a\\nT-2: integrated as 0123/node_modules" from attempt 4 (10 bytes freed)'),
    (EventKind.QUEUED, "T-3", {"attempt": 1, "ahead": ["T-1", "T-2"]},
     "  T-3: joins the merge queue behind T-1, T-2"),
    (EventKind.GATING, "T-3", {"attempt": 1, "on": ["T-2"], "onto": "ab" * 20, "sha": "cd" * 20},
     "  T-3: checks on top of T-2 (the tree it would land as)"),
    (EventKind.GATED, "T-3", {"attempt": 1, "on": ["T-2"], "ok": False, "seconds": 2.0},
     "  T-3: checks failed on top of T-2"),
    (EventKind.GATED, "T-3", {"attempt": 1, "on": [], "ok": True, "seconds": 2.0}, None),
    (EventKind.RUN_INTERRUPTED, None, {"signal": "SIGINT"}, None),
    (EventKind.RUN_FINISHED, None, {"status": "completed", "message": "all done"}, None),
]  # fmt: skip


def events() -> list[Event]:
    return [Event(n, "R-1", "ts", k, t, d) for n, (k, t, d, _) in enumerate(WATCHED, start=1)]


def test_every_kind_of_event_is_decided_in_the_table() -> None:
    assert set(LINES) == set(EventKind)
    assert {kind for kind, *_ in WATCHED} == set(EventKind)  # and this test shows each


def test_each_event_shows_as_its_line() -> None:
    out = io.StringIO()
    progress = Progress(Console(file=out, width=500))
    for event in events():
        progress(event)
    expected = [line for *_, line in WATCHED if line is not None]
    assert out.getvalue().splitlines() == expected


def test_the_status_line_follows_the_task_the_stage_and_the_attempt() -> None:
    progress = Progress(Console(file=io.StringIO()))
    stages = []
    for event in events():
        progress.render(event)
        stages.append((progress.task, progress.stage, progress.attempt))
    assert stages[3] == (None, "Screen", 0)  # a step names the stage
    assert stages[5] == ("T-1", "Screen", 2)  # an attempt names the task
    assert stages[10] == ("T-1", "review (security)", 2)  # a reviewer's unit its lens


def test_json_lines_are_the_events_as_stored() -> None:
    out = io.StringIO()
    for event in events():
        JsonLines(out)(event)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["kind"] for line in lines] == [str(kind) for kind, *_ in WATCHED]
    assert lines[0] == {
        "id": 1,
        "ts": "ts",
        "kind": "run_started",
        "task_id": None,
        **WATCHED[0][2],
    }
