"""What the commands print: plan, agent, check and file-name text holding escape sequences,
C1 controls, bidi overrides and rich markup reaches stdout and stderr clean, and `--json`
holds it escaped. In-process with click's runner, and once in a subprocess under a
pseudo-terminal, where click does not strip styles and rich draws its status line.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests import ROOT
from tests.conftest import RunCli, WritePlan
from tests.plans import md_task
from tests.runs import attempt, make_repo, script, write
from tests.views.test_terminal import CSI, EVIL, EVIL_NAME, MARKUP, OSC52, assert_clean

# Prints hostile output on both streams and fails, so the gate and the ledger quote it.
EVIL_CHECK = (
    "import sys\n"
    f"print({'check output ' + EVIL!r})\n"
    f"print({'on stderr ' + OSC52!r}, file=sys.stderr)\n"
    "sys.exit(1)\n"
)


def hostile_repo(tmp_path: Path) -> Path:
    """A repository whose plan holds escape sequences and markup everywhere it has text."""
    body = (
        f"## Description\nDo it. {EVIL}\nSecond line {CSI}.\n\n"
        f"## Acceptance criteria\n- it works {EVIL}\n"
    )
    failing = body + "- `$ python3 evil.py` (exit 0) passes\n"
    plan = f"plan-{EVIL_NAME}"
    files = {
        f"{plan}/overview.md": f"# Feature {EVIL}\n\n## Goal\nShip it. {EVIL}\n",
        f"{plan}/T-001-{EVIL_NAME}.md": md_task("T-001", f"Checked {EVIL}", failing),
        # a second attempt after the one whose file name is refused
        f"{plan}/T-002-task.md": md_task("T-002", f"Reviewed {EVIL}", body, max_attempts="2"),
        f"{plan}/T-003-task.md": md_task("T-003", f"Asked {EVIL}", body),
        "evil.py": EVIL_CHECK,
    }
    return make_repo(tmp_path / "repo", files)


def plan_of(repo: Path) -> Path:
    [plan] = repo.glob("plan-*")
    return plan


def hostile_script(tmp_path: Path) -> Path:
    reject = {
        "verdict": "reject",
        "category": "weak_test",
        "concern": f"Concern {EVIL}\nT-002 attempt 9: accepted: forged",
        "evidence": [f"a.py:{EVIL}"],
        "next_step": f"Next {EVIL}",
    }
    return script(
        tmp_path,
        {
            "T-001": [attempt(write("t1.txt", "1\n"), resolution=f"Resolved {EVIL}")],
            "T-002": [
                attempt(write(f"file-{EVIL_NAME}.txt", f"{EVIL}\n")),  # refused: its name
                attempt(write("file.txt", f"{EVIL}\n"), review=reject),
                attempt(write("t2.txt", "2\n"), resolution=f"Resolved {EVIL}"),
            ],
            "T-003": [
                attempt(outcome="question", question=f"Which? {EVIL}", options=[f"this {EVIL}"])
            ],
        },
    )


def strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


def escaped_json(text: str) -> Any:
    """Parsed JSON whose text is clean while its strings still hold the sequences."""
    assert_clean(text)
    data = json.loads(text)
    assert any("\x1b]52;" in s for s in strings(data)), text
    return data


def test_problems_quoting_the_plan_are_printed_clean(
    write_plan: WritePlan, run_cli: RunCli
) -> None:
    broken = write_plan(
        {
            "overview.md": "# Feature\n\n## Goal\nShip it.\n",
            "T-001-task.md": md_task("T-001", "Task", depends=f"T-404 {EVIL}"),
            f"T-002-{EVIL_NAME}.md": f"no frontmatter {EVIL}\n",
        }
    )
    for args in [("validate", broken), ("show", broken), ("next", broken)]:
        result = run_cli(*args)
        assert result.exit_code == 1, result.output
        assert_clean(result.stdout + result.stderr)
        assert f"T-002-{MARKUP.replace('/', '')}.md:1: error: missing frontmatter" in (
            result.stdout + result.stderr
        )
    problems = escaped_json(run_cli("validate", broken, "--json").stdout)["problems"]
    assert any(p["path"].endswith(f"T-002-{EVIL_NAME}.md") for p in problems), problems


def test_plan_text_is_printed_clean(tmp_path: Path, run_cli: RunCli) -> None:
    plan = plan_of(hostile_repo(tmp_path))
    for args, code in [
        (("validate", plan), 0),
        (("show", plan), 0),
        (("show", plan, "T-001"), 0),
        (("next", plan), 0),
        (("next", plan, "--all"), 0),
        (("show", plan, "T-404"), 1),
        (("init", tmp_path / f"new-{EVIL_NAME}"), 0),
        (("validate", tmp_path / f"missing-{EVIL_NAME}"), 1),
    ]:
        result = run_cli(*args)
        assert result.exit_code == code, result.output
        assert_clean(result.stdout + result.stderr)
    shown = run_cli("show", plan, "T-001").stdout
    assert f"T-001: Checked {MARKUP}\n" in shown
    assert f"Do it. {MARKUP}\nSecond line .\n" in shown
    for args in [
        ("validate", plan, "--json"),
        ("show", plan, "--json"),
        ("show", plan, "T-001", "--json"),
    ]:
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
        escaped_json(result.stdout)
    task = json.loads(run_cli("show", plan, "T-001", "--json").stdout)
    assert task["title"] == f"Checked {EVIL}" and EVIL_NAME in task["file"]
    chosen = run_cli("next", plan, "--json")
    assert_clean(chosen.stdout)
    assert json.loads(chosen.stdout)["next"] == "T-001"


def test_run_and_its_records_are_printed_clean(tmp_path: Path, run_cli: RunCli) -> None:
    repo = hostile_repo(tmp_path)
    replay = hostile_script(tmp_path)
    run = run_cli("run", plan_of(repo), "--script", replay, "--max-attempts", "1")
    assert run.exit_code == 1, run.output  # T-001 failed its check; T-003 waits
    assert_clean(run.stdout + run.stderr)
    assert f"reviewer rejected as weak_test: Concern {MARKUP}\\nT-002 attempt 9" in run.stdout
    assert "T-001: gate command FAILED: `python3 evil.py` exited 1" in run.stdout

    ledger = run_cli("ledger", "--repo", repo)
    assert_clean(ledger.stdout + ledger.stderr)
    assert f"  general review: reject as weak_test: Concern {MARKUP}\n" in ledger.stdout
    assert "\n    T-002 attempt 9: accepted: forged\n" in ledger.stdout  # indented, not a line
    assert f"check output {MARKUP}" in ledger.stdout
    assert f"T-002 attempt 3: accepted: Resolved {MARKUP}" in ledger.stdout
    refused = "T-002 attempt 1: unit_failed: the workspace's files were not taken: \"file-\\x1b]52;"
    assert refused in ledger.stdout
    for args in [("runs",), ("stats",), ("clean", "--dry-run")]:
        result = run_cli(*args, "--repo", repo)
        assert result.exit_code == 0, result.output
        assert_clean(result.stdout + result.stderr)
    for args in [("stats", EVIL, "--repo", repo), ("ledger", "--run", EVIL, "--repo", repo)]:
        result = run_cli(*args)
        assert result.exit_code == 1 and "no run " in result.stderr, result.output
        assert_clean(result.stdout + result.stderr)
    assert f"plan-{MARKUP.replace('/', '')}" in run_cli("runs", "--repo", repo).stdout

    for args in [("ledger",), ("runs",), ("stats",)]:
        result = run_cli(*args, "--repo", repo, "--json")
        assert_clean(result.stdout)
        json.loads(result.stdout)
    entries = escaped_json(run_cli("ledger", "--repo", repo, "--json").stdout)["entries"]
    assert any(v["next_step"] == f"Next {EVIL}" for e in entries for v in e["verdicts"])
    again = run_cli("run", plan_of(repo), "--script", replay, "--new", "--json")
    assert_clean(again.stdout)
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert any("\x1b]52;" in s for e in events for s in strings(e)), again.stdout


def _on_a_terminal(args: list[str], cwd: Path) -> str:
    """`taskhand ARGS` with stdin, stdout and stderr on a pseudo-terminal; what it showed."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "40"}
    env.pop("NO_COLOR", None)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "taskhand", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every holder of the terminal has closed it
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
        process.wait()
    return b"".join(chunks).decode("utf-8")  # strict: a raw 8-bit control byte fails here


def test_on_a_terminal_nothing_hostile_gets_through(tmp_path: Path) -> None:
    """Under a pty click does not strip styles and rich draws its status line, with escape
    sequences of its own; none of the plan's or the agent's may be among them."""
    repo = hostile_repo(tmp_path)
    replay = hostile_script(tmp_path)
    plan = str(plan_of(repo))
    shown = ""
    for args in [
        ["run", plan, "--script", str(replay), "--max-attempts", "1"],
        ["show", plan],
        ["show", plan, "T-001"],
        ["ledger"],
        ["runs"],
        ["stats"],
    ]:
        output = _on_a_terminal(args, repo)
        assert output.strip(), args
        shown += output
    assert "\x1b[31m" not in shown, shown  # the plan's red; rich draws nothing in red here
    # What rich draws: styles, hiding the cursor, clearing and climbing status lines.
    left = re.sub(r"\x1b\[(?:\?25[lh]|\d*[AK]|[\d;]*m)", "", shown)
    assert "\x1b" not in left, left
    assert_clean(left.replace("\r", ""))
    assert MARKUP in shown and "Concern [red]red[/red]" in shown
