"""The one process-group runner, as an agent's program uses it: stdin fed, stdout and stderr
kept apart and capped, and the whole group killed at the deadline (the merged-output path is
the checks', tested in tests/gates/test_checks.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from taskhand.host.process import Call, Capture, execute, run_group
from tests.gates.test_checks import gone, sleeper

PY = sys.executable


def test_stdin_reaches_the_program_and_the_two_outputs_stay_apart(tmp_path: Path) -> None:
    code = (
        "import sys; text = sys.stdin.read(); print(text.upper()); print('oops', file=sys.stderr)"
    )
    done = execute(Call([PY, "-c", code], stdin="hello"), tmp_path, {}, time.monotonic() + 30)
    assert (done.code, done.stdout, done.stderr, done.timed_out) == (0, "HELLO\n", "oops\n", False)


def test_a_program_that_cannot_start_is_an_error_not_an_exception(tmp_path: Path) -> None:
    done = execute(Call(["taskhand-no-such-agent"]), tmp_path, {}, time.monotonic() + 30)
    assert done.code is None and done.error.startswith("taskhand-no-such-agent could not start")
    with pytest.raises(OSError):
        run_group(
            ["taskhand-no-such-agent"], tmp_path, {}, time.monotonic() + 30, stdout=Capture(0, 0)
        )


def test_the_deadline_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    child = f"[sys.executable, '-c', {sleeper(pid_file)!r}]"
    code = f"import subprocess, sys, time; subprocess.Popen({child}); time.sleep(60)"
    start = time.monotonic()
    ran = run_group([PY, "-c", code], tmp_path, None, start + 1.5, stdout=Capture(1024, 0), grace=1)
    assert ran.timed_out and ran.code is not None and ran.code < 0
    assert time.monotonic() - start < 1.5 + 1 + 3
    assert gone(int(pid_file.read_text()))


def test_huge_output_keeps_its_head_and_tail_and_says_what_was_cut(tmp_path: Path) -> None:
    code = (
        "import sys; sys.stdout.write('first\\n' + 'a' * 100000 + '\\nlast\\n');"
        " sys.stderr.write('b' * 5000 + 'end')"
    )
    out, err = Capture(1000, head=100), Capture(100, head=0)
    ran = run_group([PY, "-c", code], tmp_path, None, time.monotonic() + 30, stdout=out, stderr=err)
    assert ran.stdout.startswith("first\n") and ran.stdout.endswith("\nlast\n")
    assert f"\n[... {100012 - 1000} bytes cut ...]\n" in ran.stdout
    assert ran.stderr == f"[... {5003 - 100} bytes cut ...]\n" + "b" * 97 + "end"
