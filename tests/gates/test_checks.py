"""Acceptance checks run as real subprocesses: exit codes, timeouts, process groups, output."""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from taskhand.gates.checks import CheckResult, run_check
from taskhand.plan.model import Check

PY = sys.executable


def python(code: str, timeout: float = 30.0, expected: int = 0) -> Check:
    return Check((PY, "-c", code), timeout_seconds=timeout, expected_exit_code=expected)


def script(folder: Path, name: str, body: str, executable: bool = True) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}", encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def sleeper(pid_file: Path, seconds: int = 30) -> str:
    """Python code for a process that records its pid (atomically) and then sleeps."""
    return (
        "import os, time\n"
        f"tmp = {str(pid_file)!r} + '.tmp'\n"
        "open(tmp, 'w').write(str(os.getpid()))\n"
        f"os.rename(tmp, {str(pid_file)!r})\n"
        f"time.sleep({seconds})\n"
    )


def wait_for_pid_file(pid_file: Path) -> str:
    """Shell lines that wait (bounded) until a grandchild has written its pid."""
    return f"for i in $(seq 100); do [ -f '{pid_file}' ] && break; sleep 0.05; done\n"


def gone(pid: int, within: float = 3.0) -> bool:
    """Whether `pid` died; a zombie counts, since init may be slow (or absent) to reap it."""
    deadline = time.monotonic() + within
    while True:
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        except FileNotFoundError:
            return True
        except OSError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        else:
            state = next(line for line in status.splitlines() if line.startswith("State:"))
            if "Z" in state.split()[1]:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_exit_zero_passes(tmp_path: Path) -> None:
    result = run_check(python("print('hello')"), tmp_path)
    assert result.ok
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.error == ""
    assert result.output == "hello\n"
    assert result.reason().endswith("exited 0 as expected")


def test_expected_nonzero_exit_passes(tmp_path: Path) -> None:
    result = run_check(python("raise SystemExit(3)", expected=3), tmp_path)
    assert result.ok
    assert result.exit_code == 3


def test_wrong_exit_code_fails_with_reason(tmp_path: Path) -> None:
    script(tmp_path, "fail.sh", "echo broken >&2\nexit 1\n")
    result = run_check(Check(("./fail.sh",)), tmp_path)
    assert not result.ok
    assert result.exit_code == 1
    assert result.output == "broken\n"
    assert result.reason() == "`./fail.sh` exited 1, expected 0"


def test_stdout_and_stderr_are_interleaved_in_order(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(3):\n print(i, flush=True); print('e', i, file=sys.stderr)"
    result = run_check(python(code), tmp_path)
    assert result.output == "0\ne 0\n1\ne 1\n2\ne 2\n"


def test_death_by_signal_is_reported(tmp_path: Path) -> None:
    result = run_check(python("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"), tmp_path)
    assert not result.ok
    assert result.exit_code == -9
    assert "was killed by SIGKILL, expected exit 0" in result.reason()


def test_timeout_kills_and_reports(tmp_path: Path) -> None:
    result = run_check(python("import time; time.sleep(60)", timeout=1), tmp_path)
    assert result.timed_out
    assert result.exit_code is None
    assert not result.ok
    assert 1 <= result.seconds < 1 + 3
    assert result.reason().endswith("timed out after 1s")


def test_timeout_sends_sigterm_first(tmp_path: Path) -> None:
    code = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        "    print('cleaned up', flush=True)\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "time.sleep(60)\n"
    )
    result = run_check(python(code, timeout=1), tmp_path)
    assert result.timed_out
    assert result.exit_code is None
    assert result.output == "cleaned up\n"
    # Well inside the 2 s grace: the group is not left to run it out.
    assert result.seconds < 1 + 1.5


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    result = run_check(python(code, timeout=0.5), tmp_path)
    assert result.timed_out
    assert result.output == "ready\n"
    # The 2 s grace after SIGTERM, and no more than a little beyond it.
    assert 2.4 <= result.seconds < 0.5 + 3


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {sleeper(pid_file)!r}])\n"
        f"while not os.path.exists({str(pid_file)!r}): time.sleep(0.02)\n"
        "time.sleep(60)\n"
    )
    result = run_check(python(code, timeout=1.5), tmp_path)
    assert result.timed_out
    assert gone(int(pid_file.read_text()))


def test_leftover_background_process_is_killed_after_normal_exit(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    body = f"'{PY}' -c \"$1\" >/dev/null 2>&1 &\n" + wait_for_pid_file(pid_file) + "exit 0\n"
    run_sh = script(tmp_path, "run.sh", body)
    result = run_check(Check((str(run_sh), sleeper(pid_file))), tmp_path)
    assert result.ok
    assert result.seconds < 5
    assert gone(int(pid_file.read_text()))


def test_grandchild_holding_stdout_does_not_hang(tmp_path: Path) -> None:
    pid_file = tmp_path / "holder.pid"
    body = f"'{PY}' -c \"$1\" &\n" + wait_for_pid_file(pid_file) + "echo done\nsleep 0.2\n"
    run_sh = script(tmp_path, "run.sh", body)
    result = run_check(Check((str(run_sh), sleeper(pid_file)), timeout_seconds=30), tmp_path)
    assert result.ok
    assert not result.timed_out
    assert result.seconds < 5
    assert result.output == "done\n"
    assert gone(int(pid_file.read_text()))


def test_exit_is_noticed_without_pidfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Kernels before 5.3 and macOS have no pidfd; the fallback polls for the exit instead. The
    # script goes quiet before it exits, so no output arrives to wake the wait by luck.
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    pid_file = tmp_path / "holder.pid"
    body = f"'{PY}' -c \"$1\" &\n" + wait_for_pid_file(pid_file) + "echo done\nsleep 0.2\n"
    run_sh = script(tmp_path, "run.sh", body)
    held = run_check(Check((str(run_sh), sleeper(pid_file)), timeout_seconds=30), tmp_path)
    assert held.ok
    assert held.seconds < 5
    assert gone(int(pid_file.read_text()))
    slow = run_check(python("import time; time.sleep(60)", timeout=0.5), tmp_path)
    assert slow.timed_out
    assert slow.seconds < 0.5 + 3


def test_huge_output_keeps_head_and_tail_in_bounded_memory(tmp_path: Path) -> None:
    limit = 64 * 1024
    code = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "out.write(b'first line\\n')\n"
        "block = b'x' * 1023 + b'\\n'\n"
        "for _ in range(20 * 1024): out.write(block)\n"
        "out.write(b'last line\\n')\n"
    )
    total = len(b"first line\n") + 20 * 1024 * 1024 + len(b"last line\n")
    tracemalloc.start()
    try:
        result = run_check(python(code), tmp_path, output_limit=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok
    assert len(result.output) <= limit + 200
    assert result.output.startswith("first line\n")
    assert result.output.endswith("\nlast line\n")
    assert f"\n[... {total - limit} bytes cut ...]\n" in result.output
    assert peak < 2 * 1024 * 1024


def test_output_exactly_at_the_limit_is_not_cut(tmp_path: Path) -> None:
    at_limit = run_check(python("print('a' * 99)"), tmp_path, output_limit=100)
    assert at_limit.output == "a" * 99 + "\n"
    over = run_check(python("print('a' * 100)"), tmp_path, output_limit=100)
    assert over.output == "a" * 50 + "\n[... 1 bytes cut ...]\n" + "a" * 49 + "\n"


def test_non_utf8_output_is_replaced(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe done\\n')"
    result = run_check(python(code), tmp_path)
    assert result.ok
    assert result.output == "ok \ufffd\ufffd done\n"


def test_stdin_is_dev_null_not_ours(tmp_path: Path) -> None:
    # Our own stdin becomes a pipe nobody writes to: a child that inherited it would block.
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    try:
        os.dup2(read_end, 0)
        result = run_check(python("import sys; print(repr(sys.stdin.read()))", timeout=3), tmp_path)
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert not result.timed_out
    assert result.output == "''\n"


def test_missing_program_is_a_clean_error(tmp_path: Path) -> None:
    result = run_check(Check(("taskhand-no-such-program", "-q")), tmp_path)
    assert not result.ok
    assert result.exit_code is None
    assert not result.timed_out
    assert result.error == (
        "program not found: taskhand-no-such-program (fix: install it or correct the command)"
    )
    assert result.reason() == (
        "`taskhand-no-such-program -q` could not run: program not found: taskhand-no-such-program"
        " (fix: install it or correct the command)"
    )


def test_non_executable_file_is_a_clean_error(tmp_path: Path) -> None:
    script(tmp_path, "run.sh", "exit 0\n", executable=False)
    result = run_check(Check(("./run.sh",)), tmp_path)
    assert not result.ok
    assert result.exit_code is None
    assert result.error == "permission denied: ./run.sh (fix: chmod +x ./run.sh)"


def test_script_without_interpreter_line_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "bare.sh"
    path.write_text("exit 0\n", encoding="utf-8")
    path.chmod(0o755)
    result = run_check(Check(("./bare.sh",)), tmp_path)
    assert not result.ok
    assert result.error.startswith("not an executable format: ./bare.sh (fix: ")


def test_missing_working_directory_is_a_clean_error(tmp_path: Path) -> None:
    result = run_check(python("pass"), tmp_path / "absent")
    assert not result.ok
    assert result.error.startswith("working directory not found: ")


def test_empty_command_is_a_clean_error(tmp_path: Path) -> None:
    result = run_check(Check(()), tmp_path)
    assert not result.ok
    assert result.error.startswith("empty command")


def test_relative_program_resolves_against_cwd(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script(work, "where.sh", "pwd -P\n")
    result = run_check(Check(("./where.sh",)), work)
    assert result.ok
    assert result.output == f"{work.resolve()}\n"


def test_env_replaces_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKHAND_CHECKS_PROBE", "leaked")
    code = "import os; print(os.environ.get('TASKHAND_CHECKS_PROBE'), os.environ.get('ONLY'))"
    replaced = run_check(python(code), tmp_path, env={"ONLY": "given"})
    assert replaced.output == "None given\n"
    inherited = run_check(python(code), tmp_path)
    assert inherited.output == "leaked None\n"


def test_result_is_plain_data() -> None:
    result = CheckResult(("make", "test"), 0, 2, False, 0.5, "boom\n")
    assert not result.ok
    assert result.reason() == "`make test` exited 2, expected 0"
    timed = CheckResult(("sleep", "60"), 0, None, True, 4.01, "", timeout_seconds=2)
    assert timed.reason() == "`sleep 60` timed out after 2s"
