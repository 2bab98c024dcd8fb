"""A unit's transcript written as it goes: the store has its path from the unit's start, each
message reaches the file redacted before the unit ends, the final file is the whole transcript,
and a file that cannot be written warns once and never fails the unit."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from taskhand.host.secrets import Redactor
from taskhand.pipeline.lifecycle import plan_key
from taskhand.pipeline.transcript import TranscriptFile
from taskhand.plan.model import Status
from taskhand.run import launch
from taskhand.run.preflight import load
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.pipeline.test_full import plan_repo, replay, roles_of
from tests.plans import md_task
from tests.runs import Recorder, attempt, make_repo, run_plan, script, write

SECRET = "sk-planted-live-key-0123456789"
SECONDS = 60  # the most a wait here takes on a loaded machine
DEV_FULL = Path("/dev/full")  # every write to it fails: a disk that is full


def watch_live(repo: Path, seen: dict[str, Any]) -> None:
    """Until T-001's first transcript holds two lines: those lines, and its unit's row, as
    they were then."""
    state = StateDir.for_repo(repo)
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        for path in state.root.glob("runs/*/transcripts/T-001-unit-*.jsonl"):
            lines = path.read_text().splitlines()
            if len(lines) >= 2:
                with Store.open(state.database) as store:
                    seen["units"] = store.units(path.parent.parent.name, "T-001")
                seen["path"], seen["lines"] = path, lines
                return
        time.sleep(0.05)


def test_a_working_units_transcript_is_on_disk_redacted_before_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", SECRET)
    body = f"## Description\nCall the service with key {SECRET}.\n\n## Acceptance criteria\n- ok\n"
    files = {
        "plan/overview.md": "# Feature\n\n## Goal\nShip it.\n",
        "plan/T-001-task.md": md_task("T-001", "Use the service", body),
    }
    repo = make_repo(tmp_path / "repo", files)
    # The command takes a while: the unit is still working when the file is read.
    slow = {"run": ["sh", "-c", f"sleep 3 # {SECRET}"]}
    replayed = script(tmp_path, {"T-001": [attempt(slow, write("done.txt", "done\n"))]})
    seen: dict[str, Any] = {}
    watcher = threading.Thread(target=watch_live, args=(repo, seen), daemon=True)
    watcher.start()
    summary, _ = run_plan(repo / "plan", repo, replayed)
    watcher.join(SECONDS)
    assert summary.status == "completed"
    assert "lines" in seen, "the transcript never showed while the unit worked"
    live = [json.loads(line) for line in seen["lines"]]
    assert [m["role"] for m in live] == ["user", "tool"]  # the command not yet done
    assert live[1]["action"] == "run"
    [working] = seen["units"]
    assert (working.role, working.ended, working.outcome) == ("implementer", None, None)
    assert working.transcript == str(seen["path"])  # recorded from the unit's start
    assert SECRET not in "\n".join(seen["lines"])
    assert "[redacted]" in live[0]["content"] and "[redacted]" in live[1]["target"]
    final = [json.loads(line) for line in seen["path"].read_text().splitlines()]
    assert final[:2] == live  # then the whole transcript, as the unit returned it
    assert [m["role"] for m in final[2:]] == ["tool_result", "tool", "assistant"]


def test_a_file_that_cannot_be_written_as_the_unit_goes_warns_once_and_the_unit_goes_on(
    tmp_path: Path,
) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    summary, _ = run_plan(
        repo / "plan", repo, replay(tmp_path, "T-001", {}), settings={"pipeline": "full"}
    )
    assert summary.status == "waiting"  # for the plan's approval, after units 1 to 3
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        next_unit = 1 + max(u.id for u in store.units(summary.run_id))
        store.set_life(plan_key(load(repo / "plan")), "T-001", Lifecycle.READY)
        store.set_task(summary.run_id, "T-001", Status.OPEN)
    # The next unit's file, as it goes, is a full disk; its final one a file of its own.
    planted = state.transcript(summary.run_id, "T-001", next_unit)
    planted.symlink_to(DEV_FULL)
    recorder = Recorder()
    summary = launch.resume(summary.run_id, recorder, repo)
    assert summary.status == "completed"
    assert roles_of(repo, summary.run_id, "T-001")[3:] == ["tester", "implementer", "qa", "judge"]
    [warning] = recorder.of("warning")
    assert f"unit {next_unit}'s transcript could not be written as it went" in str(
        warning.data["message"]
    )
    assert not planted.is_symlink()
    lines = [json.loads(line) for line in planted.read_text().splitlines()]
    assert (lines[0]["role"], lines[-1]["role"]) == ("user", "assistant")


def test_a_message_that_cannot_be_written_stops_the_live_file_not_the_caller(
    tmp_path: Path,
) -> None:
    path = tmp_path / "transcripts" / "T-001-unit-1.jsonl"
    transcript = TranscriptFile(path, Redactor({}, extra=[SECRET]))
    transcript.open()
    assert path.read_text() == ""  # there for a reader from the start
    transcript.add({"role": "user", "content": f"key {SECRET}"})
    transcript.add({"role": "tool", "content": object()})  # not JSON: the writing stops
    transcript.add({"role": "tool", "content": "later"})
    assert "TypeError" in transcript.failure
    assert path.read_text() == '{"role": "user", "content": "key [redacted]"}\n'
    transcript.finish([{"role": "user", "content": f"key {SECRET}"}, {"role": "assistant"}])
    assert path.read_text().splitlines() == [
        '{"role": "user", "content": "key [redacted]"}',
        '{"role": "assistant"}',
    ]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no part left behind


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full")
def test_a_full_disk_stops_the_live_file_once() -> None:
    transcript = TranscriptFile(DEV_FULL, Redactor({}))
    transcript.open()
    transcript.add({"role": "user", "content": "hello"})
    assert "No space left" in transcript.failure
    transcript.add({"role": "tool", "content": "later"})  # nothing more is tried
    transcript.close()
