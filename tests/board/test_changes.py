"""What the board keeps and when it looks again, against a real server and a real database: the
plan's answer is read again as soon as a task's file or the state database changes (a move
made outside the board, as the CLI makes it), pages asking at once share one read, and the event
stream hears a run whose database did not exist yet when the page opened it."""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from taskhand.board import changes
from taskhand.board.changes import Answer, Version
from taskhand.errors import UserError
from taskhand.run import moves
from taskhand.state.events import EventKind
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.board.test_app import READ, call, served, serving
from tests.pipeline.test_full import plan_repo, replay
from tests.runs import run_plan

__all__ = ["served"]


def test_the_plan_is_read_again_when_a_task_file_changes(served: tuple[int, Path]) -> None:
    port, repo = served
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["title"] == "Dark mode toggle"
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["title"] == "Dark mode toggle"
    task = repo / "plan" / "T-001-toggle.md"
    task.write_text(task.read_text().replace("title: Dark mode toggle", "title: Dark theme"))
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["title"] == "Dark theme"


def test_a_move_made_outside_the_board_shows_at_once(served: tuple[int, Path]) -> None:
    port, repo = served
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["lifecycle"] == "planned"
    moves.approve("T-001", repo / "plan", repo)  # as `taskhand approve` would, not the board
    shown = call(port, "GET", "/api/plan")[1]["tasks"][0]
    assert (shown["lifecycle"], shown["waiting"]) == ("ready", False)


def test_the_event_stream_hears_a_run_whose_database_came_after_it(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    assert not StateDir.for_repo(repo).database.exists()  # no run yet: no database
    with serving(repo) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/events", headers=READ)
        answer = conn.getresponse()
        assert answer.readline() == b"retry: 1000\n"  # the stream is open, looking
        run_plan(repo / "plan", repo, replay(tmp_path, "T-001", {}), settings={"pipeline": "full"})
        kinds = []
        try:
            while "run_finished" not in kinds:
                line = answer.readline()
                assert line, f"the stream ended after {kinds}"
                if line.startswith(b"data: ") and line != b"data: {}\n":  # not caught_up
                    kinds.append(json.loads(line[6:])["kind"])
        finally:
            conn.close()
    assert kinds[0] == "run_started" and "task_moved" in kinds


def test_the_change_counter_moves_only_when_another_connection_writes(tmp_path: Path) -> None:
    database = tmp_path / "state.db"
    version = Version(database)
    assert version.now() == 0 and not database.exists()  # looking creates nothing
    with Store.open(database) as store:
        run = store.create_run("plan", "markdown", str(tmp_path), "0" * 40, "taskhand/run", {})
        first = version.now()
        assert version.now() == first  # nothing written meanwhile
        store.event(run.id, EventKind.STEP, None, message="one")
        second = version.now()
        assert second != first
        store.events(run.id)  # a read is no change
        assert version.now() == second
    version.close()


def test_pages_asking_at_once_share_one_read_and_a_failed_read_is_not_kept(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / "overview.md").write_text("# Plan\n")
    reads: list[int] = []
    moving, broken = threading.Event(), threading.Event()

    def read() -> bytes:
        reads.append(1)
        if moving.is_set():  # as a run going does: every read finds something new
            (plan / "notes.md").write_text(f"read {len(reads)}\n")
        time.sleep(0.2)  # long enough for every page below to ask during it
        if broken.is_set():
            raise UserError("the plan is broken", fix="mend it")
        return b"read %d" % len(reads)

    answer = Answer(plan, tmp_path / "state.db", read)
    moving.set()
    together = threading.Barrier(8)  # every page asks at once, however slow threads are to start

    def ask(_: int) -> bytes:
        together.wait()
        return answer.body()

    with ThreadPoolExecutor(max_workers=8) as pool:
        bodies = list(pool.map(ask, range(8)))
    assert 2 <= len(reads) <= 3, len(reads)  # not one read per page: the waiting share one
    assert bodies.count(b"read %d" % len(reads)) >= 7
    moving.clear()
    answer.body()  # the last read moved a file: read again
    asked = len(reads)
    assert answer.body() == b"read %d" % asked and len(reads) == asked  # nothing moved since
    broken.set()
    (plan / "overview.md").write_text("# Plan, edited\n")
    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = [pool.submit(answer.body) for _ in range(4)]
        assert all(isinstance(f.exception(), UserError) for f in failures)
    broken.clear()
    assert answer.body() == b"read %d" % len(reads)  # read again: the failure was not kept


def test_the_plan_is_read_again_once_kept_long_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What neither the counter nor the files show (a program a check names installed) is seen
    after KEEP_SECONDS, counted from the read, not from a clock's round figure."""
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / "overview.md").write_text("# Plan\n")
    reads: list[int] = []

    def read() -> bytes:
        reads.append(1)
        return b"read %d" % len(reads)

    monkeypatch.setattr(changes, "KEEP_SECONDS", 0.5)
    answer = Answer(plan, tmp_path / "state.db", read)
    assert answer.body() == b"read 1"
    assert answer.body() == b"read 1"  # kept: nothing moved
    time.sleep(0.6)
    assert answer.body() == b"read 2"
