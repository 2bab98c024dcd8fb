"""Hostile and malformed plans: a clear one-line error and exit 1, never a traceback or a write.

Hand-written cases cover each kind of bad input named in the issue, in both dialects where
it applies; hypothesis then throws arbitrary bytes, mutated valid plans and random folders
at the same commands. Every run checks that nothing on disk changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskhand.run import preflight
from tests.conftest import RunCli
from tests.plans import md_plan, md_task, tt_plan, tt_task

MARKDOWN = "markdown"
TASKTRACK = "tasktrack"
DIALECTS = (MARKDOWN, TASKTRACK)

# The CLI's catch-all for an unexpected exception: a crash in disguise, never a clear error.
CRASH_MARK = "TASKHAND_DEBUG"
PROBLEM_RE = re.compile(
    r"^(?P<where>.+?)(?::(?P<line>\d+))?: (?P<severity>error|warning): "
    r"(?P<message>.+) \(fix: (?P<fix>.+)\)$"
)
SUMMARY_RE = re.compile(r"^.+: (?:invalid|valid .+) \(\d+ errors?, \d+ warnings?\)$")

State = dict[str, tuple[object, ...]]


# --- helpers ----------------------------------------------------------------------------


def write_files(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (folder / name).write_bytes(data)
    return folder


def _digest(path: Path) -> str | None:
    sha = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                sha.update(chunk)
    except OSError:
        return None
    return sha.hexdigest()


def snapshot(root: Path) -> State:
    """Every entry below `root` (links not followed): kind, bytes, mode and mtime_ns."""
    state: State = {}
    pending = [root]
    while pending:
        folder = pending.pop()
        info = folder.lstat()
        names = tuple(sorted(os.listdir(folder)))
        state[str(folder)] = ("dir", names, info.st_mode, info.st_mtime_ns)
        for name in names:
            path = folder / name
            info = path.lstat()
            if path.is_symlink():
                state[str(path)] = ("link", os.readlink(path), info.st_mtime_ns)
            elif path.is_dir():
                pending.append(path)
            elif path.is_file():
                digest = _digest(path)
                state[str(path)] = ("file", digest, info.st_size, info.st_mode, info.st_mtime_ns)
            else:
                state[str(path)] = ("other", info.st_mode, info.st_mtime_ns)
    return state


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """Parse JSON as RFC 8259 has it: NaN and Infinity are not JSON."""
    return json.loads(text, parse_constant=_reject_constant)


def output_lines(text: str) -> list[str]:
    assert "\r" not in text, repr(text)
    if not text:
        return []
    assert text.endswith("\n"), repr(text)
    return text[:-1].split("\n")


def problem_lines(text: str, summary: bool) -> list[re.Match[str]]:
    """Each line of `text` as one problem (`path:line: severity: message (fix: ...)`)."""
    lines = output_lines(text)
    if summary:
        assert lines, "no summary line"
        assert SUMMARY_RE.match(lines[-1]), f"not a summary line: {lines[-1]!r}"
        lines = lines[:-1]
    matches = []
    for line in lines:
        match = PROBLEM_RE.match(line)
        assert match, f"not a one-line problem: {line!r}\nin output:\n{text}"
        matches.append(match)
    return matches


def no_crash(result: Result, args: tuple[str, ...]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, f"{args}:\n{text}"
    assert CRASH_MARK not in text, f"{args} crashed:\n{text}"
    return text


def check_folder(run_cli: RunCli, folder: Path) -> None:
    """validate, validate --json, show and next agree, print well-formed output, write nothing.

    The snapshot covers the folder's parent too, where links out of the folder point.
    """
    before = snapshot(folder.parent)

    def run(*args: str) -> tuple[Result, str]:
        result = run_cli(*args)
        return result, no_crash(result, args)

    plan = str(folder)
    result, text = run("validate", plan)
    assert result.exit_code in (0, 1), text
    valid = result.exit_code == 0
    problems = problem_lines(result.stdout, summary=True)
    problem_lines(result.stderr, summary=False)

    result, text = run("validate", plan, "--json")
    assert result.exit_code == (0 if valid else 1), text
    report = strict_json(result.stdout)
    assert report["ok"] is valid, report
    assert len(report["problems"]) == len(problems), (report, problems)
    assert all(p["fix"] for p in report["problems"]), report
    # A plan whose only errors say it cannot run here (preflight) still shows.
    readable = not any(
        p["severity"] == "error" and p["rule"] not in preflight.RULES for p in report["problems"]
    )

    result, text = run("show", plan, "--json")
    if readable:
        assert result.exit_code == 0, text
        shown = strict_json(result.stdout)
        for task in shown["tasks"][:1]:
            one, one_text = run("show", plan, task["id"], "--json")
            assert one.exit_code == 0, one_text
            assert strict_json(one.stdout)["id"] == task["id"]
        result, text = run("show", plan)
        assert result.exit_code == 0, text
    else:
        assert result.exit_code == 1 and result.stdout == "", text
        refusal = strict_json(result.stderr)
        assert refusal["error"] and refusal["fix"] and refusal["problems"], refusal
        result, text = run("show", plan)
        assert result.exit_code == 1, text
        assert result.stdout == "", text
        assert problem_lines(result.stderr, summary=False), text

    result, text = run("next", plan, "--json" if readable else "--all")
    if readable:
        assert result.exit_code in (0, 3), text
        chosen = strict_json(result.stdout)
        assert (result.exit_code == 3) == (chosen["next"] is None), text
    else:
        assert result.exit_code == 1, text
        assert result.stdout == "", text
        assert problem_lines(result.stderr, summary=False), text

    assert snapshot(folder.parent) == before, "the plan folder changed"


# --- hand-written cases -----------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """What a rejected plan must produce: the target to pass, the path and line to name."""

    target: Path
    name: str  # the offending path as printed (relative to the working directory)
    lines: frozenset[int] | None = None  # acceptable line numbers; None: not checked
    words: tuple[str, ...] = ()  # fragments the problem's message must contain
    exact: bool = True  # False: `name` need only occur in the printed path


def plan_files(dialect: str) -> dict[str, str | bytes]:
    if dialect == MARKDOWN:
        return md_plan(("T-001", {}), ("T-002", {"depends": "T-001"}))
    return tt_plan([[("FOO-1", "DONE"), ("FOO-2", "OPEN")]], deps={"FOO-2": "FOO-1"})


def task_name(dialect: str) -> str:
    return "T-002-task.md" if dialect == MARKDOWN else "FOO-2.md"


def overview_name(dialect: str) -> str:
    return "overview.md" if dialect == MARKDOWN else "FOO-TaskTrack.md"


def file_name(dialect: str, which: str) -> str:
    return task_name(dialect) if which == "task" else overview_name(dialect)


def make_plan(tmp: Path, dialect: str, **replace: str | bytes) -> Path:
    """A valid plan in tmp/plan with some files replaced (keyword: 'task' or 'overview')."""
    files = plan_files(dialect)
    for which, content in replace.items():
        files[file_name(dialect, which)] = content
    return write_files(tmp / "plan", files)


def _junk() -> bytes:
    rng = random.Random(20260101)
    data = b"\x7fELF\x02\x01junk\n\x89PNG\r\n\x1a\n" + rng.randbytes(4096) + b"\x00\xff\xfe"
    assert b"\x00" in data
    return data


JUNK = _junk()


def latin1(text: str, old: str, new: str) -> tuple[bytes, int]:
    """`text` with `old` replaced by non-ASCII `new`, saved as latin-1; and that line."""
    changed = text.replace(old, new, 1)
    assert changed != text
    first = next(i for i, ch in enumerate(changed) if ord(ch) > 127)
    return changed.encode("latin-1"), changed.count("\n", 0, first) + 1


def binary_junk(tmp: Path, dialect: str, which: str) -> Expect:
    make_plan(tmp, dialect, **{which: JUNK})
    return Expect(tmp / "plan", f"plan/{file_name(dialect, which)}")


def huge_file(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    path = folder / file_name(dialect, which)
    with path.open("r+b") as handle:  # valid text, then a sparse 50 MB tail
        handle.truncate(50 * 1000 * 1000)
    return Expect(folder, f"plan/{path.name}", None, ("MB", "limit"))


def unterminated_frontmatter(tmp: Path, dialect: str, which: str) -> Expect:
    if dialect == MARKDOWN:
        text = "---\nid: T-002\ntitle: Task T-002\n\n## Description\nNo closing line.\n"
        make_plan(tmp, dialect, task=text)
        return Expect(tmp / "plan", "plan/T-002-task.md", frozenset({1}))
    # TaskTrack has no frontmatter: a task file cut off after its first field.
    make_plan(tmp, dialect, task="# FOO-2: Task FOO-2\n\n**Status**: OPEN\n")
    return Expect(tmp / "plan", "plan/FOO-2.md", frozenset({1, 3}))


def truncated_overview(tmp: Path, dialect: str, which: str) -> Expect:
    if dialect == MARKDOWN:  # an overview with nothing in it
        make_plan(tmp, dialect, overview="")
        return Expect(tmp / "plan", "plan/overview.md")
    text = str(plan_files(dialect)["FOO-TaskTrack.md"])
    make_plan(tmp, dialect, overview=text[: text.index("**Created**")])
    return Expect(tmp / "plan", "plan/FOO-TaskTrack.md", frozenset({1, 3}))


def duplicate_ids(tmp: Path, dialect: str, which: str) -> Expect:
    if dialect == MARKDOWN:
        files = plan_files(dialect)
        files["T-009-copy.md"] = md_task("T-001", "Same id again")
        write_files(tmp / "plan", files)
        return Expect(tmp / "plan", "plan/T-009-copy.md", frozenset({1, 2}), ("T-001",))
    overview = str(plan_files(dialect)["FOO-TaskTrack.md"])
    entry = "* [OPEN] FOO-2: Task FOO-2\n"
    doubled = overview.replace(entry, entry + entry)
    line = doubled.split("\n").index(entry.strip()) + 2
    make_plan(tmp, dialect, overview=doubled)
    return Expect(tmp / "plan", "plan/FOO-TaskTrack.md", frozenset({line}), ("FOO-2",))


def _link(folder: Path, name: str, target: str | Path) -> None:
    (folder / name).unlink(missing_ok=True)
    (folder / name).symlink_to(target)


def multiline_field(tmp: Path, dialect: str, which: str) -> Expect:
    """A TaskTrack field value that runs on over a second line."""
    make_plan(tmp, dialect, task=tt_task("FOO-2", "Task FOO-2", deps="FOO-1\nFOO-9"))
    return Expect(tmp / "plan", "plan/FOO-2.md", frozenset({7}))


def symlink_outside(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    name = file_name(dialect, which)
    (tmp / "outside.md").write_bytes((folder / name).read_bytes())  # valid, but elsewhere
    _link(folder, name, "../outside.md")
    return Expect(folder, f"plan/{name}", None, ("outside",))


def symlink_to_system_file(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    _link(folder, file_name(dialect, which), "/etc/passwd")
    return Expect(folder, f"plan/{file_name(dialect, which)}", None, ("outside",))


def symlink_chain_outside(tmp: Path, dialect: str, which: str) -> Expect:
    """A link to a link inside the folder that itself leads out."""
    folder = make_plan(tmp, dialect)
    name = file_name(dialect, which)
    (tmp / "outside.md").write_bytes((folder / name).read_bytes())
    (folder / "drafts").mkdir()
    _link(folder / "drafts", "hop.md", "../../outside.md")
    _link(folder, name, "drafts/hop.md")
    return Expect(folder, f"plan/{name}", None, ("outside",))


def symlink_loop(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    _link(folder, file_name(dialect, which), file_name(dialect, which))
    return Expect(folder, f"plan/{file_name(dialect, which)}")


def dangling_symlink(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    _link(folder, file_name(dialect, which), "drafts/gone.md")
    return Expect(folder, f"plan/{file_name(dialect, which)}")


def non_utf8(tmp: Path, dialect: str, which: str) -> Expect:
    text = str(plan_files(dialect)[file_name(dialect, which)])
    if which == "overview":
        old = "Ship it." if dialect == MARKDOWN else "Show the format."
        data, line = latin1(text, old, "Livrer le café, déjà.")
    else:
        old = "Do the thing." if dialect == MARKDOWN else "**Description**: Do"
        new = "Réécrire la chose." if dialect == MARKDOWN else "**Description**: Déjà, do"
        data, line = latin1(text, old, new)
    make_plan(tmp, dialect, **{which: data})
    return Expect(tmp / "plan", f"plan/{file_name(dialect, which)}", frozenset({line}))


def folder_named_like_file(tmp: Path, dialect: str, which: str) -> Expect:
    files = plan_files(dialect)
    if which == "overview":
        del files[overview_name(dialect)]
        name = overview_name(dialect)
    else:
        name = "T-003-x.md" if dialect == MARKDOWN else "FOO-3.md"
    folder = write_files(tmp / "plan", files)
    (folder / name).mkdir()
    (folder / name / "inner.md").write_text("# nested\n", encoding="utf-8")
    return Expect(folder, f"plan/{name}")


def fifo_named_like_file(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    name = file_name(dialect, which)
    (folder / name).unlink()
    os.mkfifo(folder / name)  # reading it would block forever
    return Expect(folder, f"plan/{name}")


def unreadable(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    (folder / file_name(dialect, which)).chmod(0)
    return Expect(folder, f"plan/{file_name(dialect, which)}")


def newline_in_name(tmp: Path, dialect: str, which: str) -> Expect:
    """A file name holding a line break must not split a problem over two lines."""
    files = plan_files(dialect)
    if dialect == MARKDOWN:
        files["T-003-a\nb.md"] = JUNK
        return Expect(write_files(tmp / "plan", files), "T-003-a", exact=False)
    files["FOO-TaskTrack.md\n-TaskTrack.md"] = JUNK  # a second overview
    return Expect(write_files(tmp / "plan", files), "FOO-TaskTrack.md", exact=False)


def non_utf8_name(tmp: Path, dialect: str, which: str) -> Expect:
    """A file name that is not UTF-8 must print without an encoding error."""
    folder = make_plan(tmp, dialect)
    name = b"T-003-caf\xe9.md" if dialect == MARKDOWN else b"F\xe9O-TaskTrack.md"
    (folder / os.fsdecode(name)).write_bytes(JUNK)
    return Expect(folder, "T-003-caf" if dialect == MARKDOWN else "TaskTrack.md", exact=False)


def empty_folder(tmp: Path, dialect: str, which: str) -> Expect:
    (tmp / "plan").mkdir()
    return Expect(tmp / "plan", "plan")


def missing_path(tmp: Path, dialect: str, which: str) -> Expect:
    make_plan(tmp, dialect)
    return Expect(tmp / "plan" / "missing", "plan/missing")


def overlong_path(tmp: Path, dialect: str, which: str) -> Expect:
    make_plan(tmp, dialect)
    name = "x" * 300  # longer than any file system allows for one name
    return Expect(tmp / "plan" / name, f"plan/{name}")


def file_not_overview(tmp: Path, dialect: str, which: str) -> Expect:
    folder = make_plan(tmp, dialect)
    return Expect(folder / task_name(dialect), f"plan/{task_name(dialect)}")


Builder = Callable[[Path, str, str], Expect]
NOT_ROOT = pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")


def _cases() -> Iterator[Any]:
    both = DIALECTS
    cases: list[tuple[Builder, tuple[str, ...], tuple[str, ...], Any]] = [
        (binary_junk, ("task", "overview"), both, ()),
        (huge_file, ("task", "overview"), both, ()),
        (unterminated_frontmatter, ("task",), both, ()),
        (truncated_overview, ("overview",), both, ()),
        (duplicate_ids, ("task",), both, ()),
        (multiline_field, ("task",), (TASKTRACK,), ()),
        (symlink_outside, ("task", "overview"), both, ()),
        (symlink_to_system_file, ("task",), both, ()),
        (symlink_chain_outside, ("task",), both, ()),
        (symlink_loop, ("task", "overview"), both, ()),
        (dangling_symlink, ("task",), both, ()),
        (non_utf8, ("task", "overview"), both, ()),
        (folder_named_like_file, ("task", "overview"), both, ()),
        (fifo_named_like_file, ("task", "overview"), both, ()),
        (unreadable, ("task", "overview"), both, NOT_ROOT),
        (newline_in_name, ("task",), both, ()),
        (non_utf8_name, ("task",), both, ()),
        (file_not_overview, ("-",), both, ()),
        (empty_folder, ("-",), (MARKDOWN,), ()),  # the same folder for either dialect
        (missing_path, ("-",), (MARKDOWN,), ()),
        (overlong_path, ("-",), (MARKDOWN,), ()),
    ]
    for builder, places, dialects, marks in cases:
        for which in places:
            for dialect in dialects:
                name = builder.__name__ + ("" if which == "-" else f"-{which}")
                if len(dialects) > 1:
                    name += f"-{dialect}"
                yield pytest.param(builder, dialect, which, id=name, marks=marks)


def rejection_commands(target: Path) -> list[tuple[str, ...]]:
    t = str(target)
    return [
        ("validate", t),
        ("validate", t, "--strict"),
        ("validate", t, "--json"),
        ("show", t),
        ("show", t, "--json"),
        ("show", t, "T-001"),
        ("next", t),
        ("next", t, "--all"),
        ("next", t, "--json"),
    ]


def _names_it(found: list[tuple[str, int | None, str]], expect: Expect) -> bool:
    return any(
        (where == expect.name if expect.exact else expect.name in where)
        and (expect.lines is None or line in expect.lines)
        and all(word in message for word in expect.words)
        for where, line, message in found
    )


def assert_rejected(run_cli: RunCli, tmp: Path, expect: Expect) -> None:
    before = snapshot(tmp)
    for args in rejection_commands(expect.target):
        result = run_cli(*args)
        text = no_crash(result, args)
        assert result.exit_code == 1, f"{args} exited {result.exit_code}:\n{text}"
        found: list[tuple[str, int | None, str]]
        if "--json" in args:
            # validate reports on stdout; show and next refuse with a JSON error on stderr.
            data = strict_json(result.stdout if args[0] == "validate" else result.stderr)
            if args[0] == "validate":
                assert data["ok"] is False, data
                assert data["errors"] >= 1, data
            else:
                assert result.stdout == "" and data["error"] and data["fix"], data
            errors = [p for p in data["problems"] if p["severity"] == "error"]
            assert all(p["fix"] for p in errors), errors
            found = [(p["path"], p["line"], p["message"]) for p in errors]
        else:
            assert "(fix: " in text, f"{args}:\n{text}"
            if args[0] == "validate":
                matches = problem_lines(result.stdout, summary=True)
                problem_lines(result.stderr, summary=False)
            else:
                assert result.stdout == "", f"{args} printed to stdout:\n{result.stdout}"
                matches = problem_lines(result.stderr, summary=False)
            errors_text = [m for m in matches if m["severity"] == "error"]
            found = [
                (m["where"], int(m["line"]) if m["line"] else None, m["message"])
                for m in errors_text
            ]
        assert _names_it(found, expect), f"{args} does not name {expect}:\n{text}"
    assert snapshot(tmp) == before, "the plan folder changed"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from tmp_path (so paths print as plan/...) with the CLI's crash catcher on."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKHAND_DEBUG", raising=False)
    return tmp_path


@pytest.mark.parametrize(("builder", "dialect", "which"), list(_cases()))
def test_hostile_plan_is_rejected_cleanly(
    builder: Builder, dialect: str, which: str, in_tmp: Path, run_cli: RunCli
) -> None:
    expect = builder(in_tmp, dialect, which)
    assert_rejected(run_cli, in_tmp, expect)


@pytest.mark.parametrize("which", ["task", "overview"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_huge_file_is_not_read_into_memory(
    dialect: str, which: str, in_tmp: Path, run_cli: RunCli
) -> None:
    expect = huge_file(in_tmp, dialect, which)
    tracemalloc.start()
    try:
        result = run_cli("validate", expect.target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 1, result.output
    named = [m for m in problem_lines(result.stdout, summary=True) if m["where"] == expect.name]
    assert any("MB" in m["message"] for m in named), result.output
    assert peak < 10 * 1000 * 1000, f"peak {peak / 1e6:.1f} MB while validating"


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_symlinks_inside_the_folder_are_fine(
    dialect: str, absolute: bool, in_tmp: Path, run_cli: RunCli
) -> None:
    folder = make_plan(in_tmp, dialect)
    (folder / "drafts").mkdir()
    for name in (task_name(dialect), overview_name(dialect)):
        (folder / name).rename(folder / "drafts" / f"{name}.txt")
        target = folder / "drafts" / f"{name}.txt" if absolute else Path("drafts", f"{name}.txt")
        _link(folder, name, target)
    (in_tmp / "alias").symlink_to("plan")  # the plan folder itself reached through a link
    before = snapshot(in_tmp)
    for plan in (folder, in_tmp / "alias"):
        for args in (("validate", str(plan)), ("show", str(plan)), ("next", str(plan))):
            result = run_cli(*args)
            text = no_crash(result, args)
            assert result.exit_code == 0, f"{args}:\n{text}"
    assert snapshot(in_tmp) == before


@pytest.mark.parametrize(
    ("dialect", "name", "content"),
    [
        pytest.param(
            MARKDOWN,
            "T-003-check.md",
            md_task(
                "T-003",
                "Check",
                body="## Description\nx\n\n## Acceptance criteria\n- `$ true` (exit --1) fails\n",
            ),
            id="criterion-exit-double-minus",
        ),
        pytest.param(
            MARKDOWN,
            "T-003-check.md",
            md_task(
                "T-003",
                "Check",
                body="## Description\nx\n\n## Acceptance criteria\n- `$ true` (exit ²) fails\n",
            ),
            id="criterion-exit-superscript",
        ),
        pytest.param(
            MARKDOWN, "T-003-big.md", md_task("T-" + "9" * 5000, "Big"), id="id-5000-digits"
        ),
        pytest.param(
            MARKDOWN, "T-003-big.md", md_task("T-003", "Big", phase="9" * 5000), id="phase-5000"
        ),
        pytest.param(
            MARKDOWN, "T-003-big.md", md_task("T-003", "Big", timeout="9" * 400), id="timeout-inf"
        ),
        pytest.param(
            TASKTRACK,
            "FOO-3.md",
            tt_task("FOO-3", "Task FOO-3", criteria="- `$ true` (exit --1) fails"),
            id="tt-criterion-exit-double-minus",
        ),
    ],
)
def test_absurd_values_do_not_crash(
    dialect: str, name: str, content: str, in_tmp: Path, run_cli: RunCli
) -> None:
    """Values that break int() or float(): a clean verdict either way, and strict JSON."""
    files = plan_files(dialect)
    files[name] = content
    if dialect == TASKTRACK:
        overview = str(files["FOO-TaskTrack.md"])
        files["FOO-TaskTrack.md"] = overview + "* [OPEN] FOO-3: Task FOO-3\n"
    folder = write_files(in_tmp / "plan", files)
    check_folder(run_cli, folder)


def test_huge_numbers_in_a_tasktrack_overview_do_not_crash(in_tmp: Path, run_cli: RunCli) -> None:
    files = plan_files(TASKTRACK)
    files["FOO-TaskTrack.md"] = (
        str(files["FOO-TaskTrack.md"])
        + f"\n## {'2' * 5000}: Far\n\n* [OPEN] FOO-{'3' * 5000}: Far away\n"
    )
    check_folder(run_cli, write_files(in_tmp / "plan", files))


# --- generated inputs -------------------------------------------------------------------


# A fixed seed keeps runs reproducible; the example count keeps the file near ten seconds.
GENERATED = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def debug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let an unexpected exception escape the CLI so hypothesis sees (and shrinks) it."""
    monkeypatch.setenv("TASKHAND_DEBUG", "1")


def base_plans() -> list[dict[str, str | bytes]]:
    markdown = md_plan(
        ("T-001", {}),
        ("T-002", {"phase": "2"}),
        ("T-003", {"depends": "T-001", "kind": "ui", "timeout": "5m", "paths": "src/a.py"}),
    )
    markdown["T-004-check.md"] = md_task(
        "T-004",
        "Check",
        body="## Description\nRun it.\n\n## Acceptance criteria\n"
        "- `$ pytest -q` (exit 0, timeout 30s) passes\n- it reads well\n",
    )
    tasktrack = tt_plan(
        [[("FOO-1", "DONE"), ("FOO-2", "OPEN")], [("FOO-3", "WAIT"), ("FOO-4", "OPEN")]],
        deps={"FOO-2": "FOO-1"},
    )
    tasktrack["FOO-4.md"] = tt_task(
        "FOO-4", "Task FOO-4", criteria="- `$ make test` (timeout 1m) passes\n- it reads well"
    )
    finished = tt_plan([[("BAR-1", "DONE"), ("BAR-2", "FAIL")]], code="BAR")
    return [markdown, tasktrack, finished]


BASE_PLANS = base_plans()

TOKENS = [
    "\x00",
    "\r",
    "\r\n",
    "\n",
    "\u2028",
    "\x85",
    "\x0c",
    "\ufeff",
    "\U0001f600",
    "é",
    "\t",
    " ",
    ":",
    "#",
    "---",
    "**Status**:",
    "**Dependencies**: FOO-2",
    "**Resolution**:",
    "**Request**:",
    "## ",
    "## 2: Later",
    "## Acceptance criteria",
    "* [",
    "* [DONE] FOO-1: Task FOO-1",
    "- `$ ",
    "`",
    "(exit ",
    "id: T-001",
    "id:",
    "title:",
    "depends: T-002",
    "phase: 0",
    "FOO-1",
    "T-001",
]
FRAGMENT = st.one_of(
    st.sampled_from(TOKENS),
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map("".join),
    st.text(max_size=12),
)
FILE_NAMES = [
    "overview.md",
    "T-1.md",
    "T-001-a.md",
    "T-002-b.md",
    "FOO-TaskTrack.md",
    "FOO-1.md",
    "FOO-2.md",
    "FOO-0.md",
    "foo-TaskTrack.md",
    "TaskTrack-v1.md",
    "BAR-1.md",
    "BAR-TaskTrack.md",
]
SNIPPETS = [str(v) for plan in BASE_PLANS for v in plan.values()]


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    """`text` after a few random line and character edits."""
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "duplicate", "move", "insert-line", "insert", "cut"]))
        lines = text.split("\n")
        i = draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "move":
            lines.insert(draw(st.integers(0, len(lines) - 1)), lines.pop(i))
        elif op == "insert-line":
            lines.insert(i, draw(FRAGMENT))
        text = "\n".join(lines)
        if op in ("insert", "cut"):
            at = draw(st.integers(0, len(text)))
            cut = draw(st.integers(0, 3)) if op == "insert" else len(text)
            text = text[:at] + (draw(FRAGMENT) if op == "insert" else "") + text[at + cut :]
    return text


@st.composite
def mutated_plans(draw: st.DrawFn) -> dict[str, str | bytes]:
    files = dict(draw(st.sampled_from(BASE_PLANS)))
    names = sorted(files)
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)):
        files[name] = draw(mutated_text(str(files[name])))
    if draw(st.booleans()):
        del files[draw(st.sampled_from(names))]
    return files


CONTENTS: st.SearchStrategy[str | bytes] = st.one_of(
    st.sampled_from(SNIPPETS),
    st.sampled_from(SNIPPETS).flatmap(mutated_text),
    st.lists(FRAGMENT, max_size=6).map("\n".join),
    st.binary(max_size=40),
)


@st.composite
def random_folders(draw: st.DrawFn) -> dict[str, str | bytes | tuple[str, str]]:
    """File names from a small set, each a file, a folder or a link to another name."""
    entries: dict[str, str | bytes | tuple[str, str]] = {}
    for name in draw(st.lists(st.sampled_from(FILE_NAMES), max_size=6, unique=True)):
        kind = draw(st.sampled_from(["file", "file", "file", "file", "dir", "link"]))
        if kind == "file":
            entries[name] = draw(CONTENTS)
        else:
            entries[name] = (kind, draw(st.sampled_from([*FILE_NAMES, "../elsewhere.md"])))
    return entries


def build_folder(root: Path, entries: dict[str, str | bytes | tuple[str, str]]) -> Path:
    folder = root / "plan"
    folder.mkdir()
    (root / "elsewhere.md").write_text(SNIPPETS[0], encoding="utf-8")
    for name, content in entries.items():
        if isinstance(content, tuple):
            kind, target = content
            if kind == "dir":
                (folder / name).mkdir()
            else:
                (folder / name).symlink_to(target)
        else:
            write_files(folder, {name: content})
    return folder


@pytest.mark.parametrize("plan_index", range(len(BASE_PLANS)))
def test_base_plans_are_valid(plan_index: int, tmp_path: Path, run_cli: RunCli) -> None:
    """The mutations below start from plans that really are valid."""
    folder = write_files(tmp_path / "plan", BASE_PLANS[plan_index])
    result = run_cli("validate", folder, "--strict")
    assert result.exit_code == 0, result.output


@pytest.mark.usefixtures("debug")
@GENERATED
@given(
    dialect=st.sampled_from(DIALECTS),
    which=st.sampled_from(["task", "overview"]),
    data=st.binary(max_size=300),
)
def test_arbitrary_bytes_as_a_plan_file(
    dialect: str, which: str, data: bytes, run_cli: RunCli
) -> None:
    files = plan_files(dialect)
    files[file_name(dialect, which)] = data
    with tempfile.TemporaryDirectory() as tmp:
        check_folder(run_cli, write_files(Path(tmp, "plan"), files))


@pytest.mark.usefixtures("debug")
@GENERATED
@given(files=mutated_plans())
def test_mutated_valid_plans(files: dict[str, str | bytes], run_cli: RunCli) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_folder(run_cli, write_files(Path(tmp, "plan"), files))


@pytest.mark.usefixtures("debug")
@GENERATED
@given(entries=random_folders())
def test_random_folder_contents(
    entries: dict[str, str | bytes | tuple[str, str]], run_cli: RunCli
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_folder(run_cli, build_folder(Path(tmp), entries))
