"""The output sanitizer: no escape sequence, control character or bidi override that a plan,
an agent or a file name holds reaches the terminal; `--json` carries them escaped.

The rule itself first, then every command that prints such text: in-process, and once in a
subprocess under a pseudo-terminal, where click and rich take their terminal paths.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from taskhand.terminal import dumps, printable, rich_text
from tests.conftest import RunCli, WritePlan
from tests.plans import md_task
from tests.runs import attempt, make_repo, script, write

# What must never reach a terminal: C0 but newline and tab, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

OSC52 = "\x1b]52;c;aGk=\x07"  # write "hi" to the clipboard
OSC0 = "\x1b]0;pwned\x1b\\"  # set the window title
CSI = "\x1b[2J\x1b[31m"  # clear the screen, then red
C1 = "\x9b2J\x9d0;eight-bit title\x07"
MARKUP = "[red]red[/red] [link=https://evil.example]link[/link]"
EVIL = f"{OSC52}{OSC0}{CSI}{C1}{MARKUP}\u202e"
EVIL_NAME = EVIL.replace("/", "")  # as a file name


def assert_clean(text: str) -> None:
    found = sorted(set(UNSAFE.findall(text)))
    assert not found, f"{found} reached the terminal in:\n{text!r}"


# --- the rule ---------------------------------------------------------------------------

SEQUENCES = {
    "csi": "\x1b[2J",
    "csi-private": "\x1b[?1049h",
    "csi-intermediate": "\x1b[1 q",
    "sgr": "\x1b[38;5;196m",
    "osc-bel": "\x1b]52;c;aGk=\x07",
    "osc-st": "\x1b]0;title\x1b\\",
    "osc-8bit-st": "\x1b]8;;https://evil.example\x9c",
    "dcs": "\x1bPq#0;2;0;0;0#0~~\x1b\\",
    "sos": "\x1bXhidden\x1b\\",
    "pm": "\x1b^hidden\x1b\\",
    "apc": "\x1b_Gf=100;payload\x1b\\",
    "two-char": "\x1b7",
    "reset": "\x1bc",
    "charset": "\x1b(0",
    "8bit-csi": "\x9b2J",
    "8bit-osc": "\x9d52;c;aGk=\x07",
    "8bit-osc-st": "\x9d0;title\x9c",
    "8bit-dcs": "\x90q#0~~\x9c",
    "8bit-apc": "\x9fpayload\x1b\\",
}


@pytest.mark.parametrize("sequence", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_each_escape_sequence_is_removed_whole(sequence: str) -> None:
    assert printable(f"before{sequence}after") == "beforeafter"
    assert printable(f"one\n{sequence}two", lines=True) == "one\ntwo"


@pytest.mark.parametrize("code", [*range(0x00, 0x20), *range(0x7F, 0xA0)])
def test_every_other_control_character_is_dropped(code: int) -> None:
    char = chr(code)
    if char in "\n\t":
        assert printable(f"a{char}b", lines=True) == f"a{char}b"
        assert printable(f"a{char}b") == ("a\\nb" if char == "\n" else "a\\tb")
    else:
        # A newline after it: nothing can read it as the start of a sequence.
        assert printable(f"a{char}\nb", lines=True) == "a\nb"


def test_carriage_return_and_backspace_cannot_overwrite_a_line() -> None:
    assert printable("rm -rf ~\rls -l   ", lines=True) == "rm -rf ~ls -l   "
    assert printable("safe\b\b\b\bevil") == "safeevil"


def test_bidi_overrides_and_isolates_are_dropped() -> None:
    trojan = "access = 'user\u202e \u2066// admin\u2069 \u2066'"
    assert printable(trojan) == "access = 'user // admin '"
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert printable(f"a{chr(code)}b") == "ab"


def test_ordinary_unicode_is_kept() -> None:
    text = "naïve café, 日本語, עברית, العربية, Ελληνικά, 🎉, 👩‍💻, e\u0301, [brackets] ~ ^ _"
    assert printable(text) == text
    assert printable(f"{text}\n\t{text}", lines=True) == f"{text}\n\t{text}"


def test_undecodable_bytes_of_a_file_name_are_shown() -> None:
    name = os.fsdecode(b"caf\xe9-\x9b2J.md")
    assert printable(name) == "caf\\xe9-\\x9b2J.md"


def test_an_unterminated_sequence_loses_its_introducer_not_the_text() -> None:
    assert printable("\x1b]0;no terminator, still shown") == "0;no terminator, still shown"
    assert printable("\x1b[12;34") == "12;34"
    assert printable("trailing\x1b") == "trailing"


def test_a_sequence_split_across_prints_stays_harmless() -> None:
    whole = f"x{OSC52}{CSI}{C1}y"
    for cut in range(len(whole) + 1):
        assert_clean(printable(whole[:cut]) + printable(whole[cut:]))


def test_removing_one_sequence_does_not_make_another() -> None:
    for text in ["\x1b\x1b[31m]0;x\x07", "\x1b\x00[2J", "\x1b\u202e]0;x\x07", "\x9b\x1b[2J"]:
        shown = printable(text)
        assert_clean(shown)
        assert printable(shown) == shown


PIECES = ["\x1b", "\x9b", "\x9d", "\x9c", "\x07", "\\", "[", "]", "P", ";", "m", "\n", "\udc9b"]
HOSTILE = st.text(
    st.sampled_from(PIECES) | st.characters(),
    max_size=60,
)


@given(HOSTILE)
def test_nothing_unsafe_survives_any_text(text: str) -> None:
    for lines in (False, True):
        shown = printable(text, lines=lines)
        assert_clean(shown)
        assert printable(shown, lines=lines) == shown
        shown.encode("utf-8")  # no lone surrogate left to fail the terminal's encoder
    assert "\n" not in printable(text)


class _Hang(Exception):
    pass


def _hang(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def test_very_long_input_does_not_backtrack() -> None:
    """Inputs that make a careless pattern quadratic. The alarm only stops a hang: each case
    is a fraction of a second linear, and would take hours quadratic."""
    n = 200_000
    cases = {
        "\x1b]" * n: "",
        "\x1b]" + "a" * n: "a" * n,
        "\x1b[" + "1;" * n: "1;" * n,
        "\x1b[1" * n: "1" * n,
        "\x9d" * n + "a": "a",
        "\x1bP" + "\x1b" * n: "",
        ("\x1b]0;" + "x" * 100 + "\x1b ") * 2000: ("0;" + "x" * 100 + " ") * 2000,
    }
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(120)
    try:
        for text, shown in cases.items():
            assert printable(text) == shown
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_rich_shows_markup_literally() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=200)
    console.print(rich_text(EVIL))
    assert out.getvalue() == f"{MARKUP}\n"


def test_json_escapes_controls_and_keeps_the_text() -> None:
    data = {"title": EVIL, "text": "日本語 \u2028\x7f"}
    text = dumps(data, indent=2)
    assert_clean(text)
    assert "日本語" in text and "\\u009b" in text and "\\u202e" in text
    assert json.loads(text) == data


def test_json_shows_undecodable_bytes_as_printable_does() -> None:
    text = dumps([os.fsdecode(b"caf\xe9.md")])
    text.encode("utf-8")  # valid Unicode: strict parsers refuse lone surrogates
    assert json.loads(text) == ["caf\\xe9.md"]


# --- every command ----------------------------------------------------------------------

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
        f"{plan}/T-002-task.md": md_task("T-002", f"Reviewed {EVIL}", body),
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
                attempt(write(f"file-{EVIL_NAME}.txt", f"{EVIL}\n"), review=reject),
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
    assert f"T-002 attempt 2: accepted: Resolved {MARKUP}" in ledger.stdout
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
    src = str(Path(__file__).resolve().parents[1] / "src")
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
