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


# A child started with its output elsewhere (as claude's Bash tool starts a command) reopens its
# parent's stdout and stderr through /proc and writes a line of its own into them.
FORGER = """
import errno, os, sys
said = []
for fd in (1, 2):
    try:
        with open(f"/proc/{os.getppid()}/fd/{fd}", "w") as out:
            out.write("FORGED\\n")
        said.append("written")
    except OSError as exc:
        said.append(errno.errorcode[exc.errno])
open(sys.argv[1], "w").write(" ".join(said))
"""
PARENT = """
import subprocess, sys
subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, check=True)
print("the program's own line")
"""


@pytest.mark.parametrize("sealed", [True, False])
def test_a_process_the_program_starts_cannot_reopen_its_outputs(
    tmp_path: Path, sealed: bool
) -> None:
    said = tmp_path / "said"
    call = Call([PY, "-c", PARENT, FORGER, str(said)])
    done = execute(call, tmp_path, {}, time.monotonic() + 30, sealed=sealed)
    assert done.code == 0 and "the program's own line\n" in done.stdout, done.stderr
    if sealed:  # open() of a socket fails: only what the program itself wrote is read
        assert said.read_text() == "ENXIO ENXIO"
        assert (done.stdout, done.stderr) == ("the program's own line\n", "")
    else:  # the attack on a pipe: the forged line lands in what we read
        assert said.read_text() == "written written"
        assert "FORGED" in done.stdout and "FORGED" in done.stderr
