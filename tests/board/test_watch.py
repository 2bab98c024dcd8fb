"""The terminal board, live: while a run goes, it draws the working unit's badge, and the task
in its next column as the run's events arrive, and the merge queue while it has entries; Ctrl-C
ends it cleanly, in a real terminal too."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from taskhand.board.watch import watch
from taskhand.state.events import EventKind
from tests.pipeline.test_full import plan_repo, replay
from tests.runs import run_plan
from tests.views.test_board import placed, waiting_plan
from tests.views.test_queue import gate_on_top, plan_run, queue_repo

SECONDS = 60  # the most any wait here takes on a loaded machine


def terminal(width: int = 40) -> Console:
    """A console that takes itself for a terminal, keeping what it draws."""
    return Console(file=io.StringIO(), force_terminal=True, width=width, record=True)


def test_the_live_board_follows_a_run_as_its_events_arrive(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    # The writer takes a while, so that the board sees it working and its time tick.
    roles = {"writer": [{"actions": [{"sleep": 2}], "resolution": "# Spec"}]}
    script = replay(tmp_path, "T-001", roles)
    console = terminal()
    deadline = time.monotonic() + SECONDS
    first: list[str] = []
    drawn_first = threading.Event()

    def stop() -> bool:
        """Asked by the board before each poll: the run starts once the first frame is up;
        the board ends once a frame shows where the run left the task."""
        if not first:
            first.append(console.export_text(clear=False))
            drawn_first.set()
        done = "waits for approval" in console.export_text(clear=False)  # the run's end
        return done or time.monotonic() > deadline

    board = threading.Thread(
        target=watch,
        args=(repo / "plan", repo, console),
        kwargs={"poll": 0.05, "tick": 0.2, "stop": stop},
        daemon=True,
    )
    board.start()
    assert drawn_first.wait(SECONDS)
    assert placed(first[0]) == {"T-001": "ready"}  # no run yet: where the plan starts it
    summary, _ = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    assert summary.status == "waiting"
    board.join(SECONDS)
    assert not board.is_alive()
    drawn = console.export_text()
    badges = re.findall(r"> writer (\d+:\d\d)", drawn)
    assert len(set(badges)) >= 2, drawn  # the role, and its time ticking while it works
    last = drawn[drawn.rindex("Dark mode  1 task") :]  # the last frame
    assert placed(last) == {"T-001": "planned"}, last
    assert "waits for approval of the plan" in last.replace("│", "") and "> " not in last


def test_ctrl_c_ends_the_live_board_without_a_traceback(tmp_path: Path) -> None:
    repo = waiting_plan(tmp_path)
    console = terminal()

    def interrupt() -> bool:
        raise KeyboardInterrupt  # what Ctrl-C raises in the loop

    watch(repo / "plan", repo, console, poll=0.01, stop=interrupt)  # returns: no exception
    assert placed(console.export_text()) == {"T-002": "draft", "T-001": "planned"}


def test_a_plan_edited_into_something_invalid_shows_its_error_and_the_board_goes_on(
    tmp_path: Path,
) -> None:
    repo = waiting_plan(tmp_path)
    overview = repo / "plan" / "overview.md"
    kept = overview.read_text()
    console = terminal(width=200)
    deadline = time.monotonic() + SECONDS
    seen: list[str] = []
    mended_at = 0

    def stop() -> bool:
        """Break the plan, then mend it once the board said so; end once it shows it again."""
        nonlocal mended_at
        drawn = console.export_text(clear=False)
        if not seen:
            seen.append("broken")
            overview.unlink()
        elif seen == ["broken"] and "cannot read the plan now" in drawn:
            seen.append("mended")
            overview.write_text(kept)
            mended_at = len(drawn)
        elif seen == ["broken", "mended"] and "Ctrl-C ends" in drawn[mended_at:]:
            return True
        return time.monotonic() > deadline

    watch(repo / "plan", repo, console, poll=0.02, tick=0.05, reread=0.05, stop=stop)
    assert seen == ["broken", "mended"] and time.monotonic() < deadline
    drawn = console.export_text()
    broken = drawn[drawn.index("cannot read the plan now") :]
    assert "overview" in broken.splitlines()[0]  # what is wrong, as validate says it
    assert placed(drawn[drawn.rindex("Dark mode  2 tasks") :]) == {  # the last frame
        "T-002": "draft",
        "T-001": "planned",
    }


ALTERNATE_SCREEN = (b"\x1b[?1049h", b"\x1b[?1049l")  # taken, given back


@pytest.mark.parametrize("command", [["watch"], ["board", "--tui", "--screen"]])
def test_in_a_real_terminal_it_draws_live_and_ends_on_ctrl_c(
    tmp_path: Path, command: list[str]
) -> None:
    repo = waiting_plan(tmp_path)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-m", "taskhand", *command],  # the plan of the latest run
        cwd=repo,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(follower)
    shown = b""
    try:
        shown = _read_until(leader, b"planned (1)", shown)
        time.sleep(0.7)  # past a poll or two: it goes on watching
        assert child.poll() is None, shown.decode(errors="replace")
        child.send_signal(signal.SIGINT)
        assert child.wait(SECONDS) == 0
        shown = _read_until(leader, None, shown)
    finally:
        child.kill()
        os.close(leader)
    text = shown.decode(errors="replace")
    assert "draft (1)" in text and "waits for approval of the plan" in text
    assert "Traceback" not in text and "interrupted" not in text and "Aborted" not in text
    on_screen = [sequence in shown for sequence in ALTERNATE_SCREEN]
    assert on_screen == ([True, True] if "--screen" in command else [False, False])


def _read_until(fd: int, wanted: bytes | None, shown: bytes) -> bytes:
    """What the terminal showed, read until `wanted` appears (None: until the child is gone)."""
    deadline = time.monotonic() + SECONDS
    while wanted is None or wanted not in shown:
        assert time.monotonic() < deadline, shown.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            chunk = b""
        if not chunk:
            assert wanted is None, shown.decode(errors="replace")
            return shown
        shown += chunk
    return shown


def test_the_live_board_shows_the_merge_queue_while_it_has_entries(tmp_path: Path) -> None:
    repo = queue_repo(tmp_path)
    console = terminal(width=120)
    deadline = time.monotonic() + SECONDS
    steps: list[str] = []

    def last_frame() -> str:
        drawn = console.export_text(clear=False)
        return drawn[drawn.rindex("Feature  3 tasks") :] if "Feature  3 tasks" in drawn else ""

    with plan_run(repo) as run:

        def stop() -> bool:
            """The runner's queue, a step each time the board showed the last one."""
            shown = " ".join(last_frame().split())
            if not steps:
                steps.append("gating")
                gate_on_top(run)
            elif steps == ["gating"] and "T-002 gating on top of T-001 0:" in shown:
                steps.append("landed")
                run.log(EventKind.INTEGRATED, "T-001", sha="c3")
            elif steps == ["gating", "landed"] and "merge queue: T-002 gating on top" in shown:
                steps.append("over")
                run.log(EventKind.RUN_FINISHED, status="completed", message="done")
            elif steps[-1] == "over" and "merge queue" not in shown:
                return True
            return time.monotonic() > deadline

        watch(repo / "plan", repo, console, poll=0.02, tick=0.05, stop=stop)
    assert steps == ["gating", "landed", "over"] and time.monotonic() < deadline, last_frame()
    drawn = " ".join(console.export_text().split())
    gating = r"merge queue: T-001 gating 0:\d\d · T-002 gating on top of T-001 0:\d\d · T-003 waits"
    assert re.search(gating, drawn), drawn
    assert re.search(r"merge queue: T-002 gating on top of T-001 0:\d\d · T-003 waits", drawn)
