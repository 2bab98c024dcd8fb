"""The model's tools on a real worktree: confinement first, then each tool's ordinary work."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.tool_schemas import SCHEMAS
from taskhand.agents.tools import (
    MAX_GLOB_FILES,
    ToolContext,
    ToolResult,
    execute,
)
from tests.gates.test_checks import gone

SENTINEL = "TOP SECRET sentinel\n"
APP = "def main():\n    return 1\n\n\ndef helper():\n    return main() + 1\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A worktree `box/ws` beside a folder `box/outside`, with every trap the tools must avoid."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    outside = tmp_path / "box" / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.txt").write_text(SENTINEL, encoding="utf-8")
    ws = tmp_path / "box" / "ws"
    files = {
        "src/app.py": APP,
        "src/util.py": "import os\n",
        "README.md": "# demo\nmain entry\n",
        "plan/tasks.md": "# tasks\n",
        ".git/config": "[core]\n\tbare = false\n",
        "sub/.git/config": "[core]\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text, encoding="utf-8")
    (ws / "out_link").symlink_to("../outside", target_is_directory=True)
    (ws / "out_file").symlink_to("../outside/secret.txt")
    (ws / "dangling").symlink_to("../outside/new.txt")
    (ws / "git_link").symlink_to(".git", target_is_directory=True)
    (ws / "in_link.py").symlink_to("src/app.py")
    os.mkfifo(ws / "fifo")
    return ws


@pytest.fixture
def ctx(box: Path) -> ToolContext:
    return ToolContext(worktree=box, read_only=("plan",), timeout_seconds=10.0)


def outside_snapshot(ws: Path) -> dict[str, bytes | None]:
    """Every path under the temp folder except the worktree, with file contents."""
    top = ws.parent.parent
    seen: dict[str, bytes | None] = {}
    for folder, folders, files in os.walk(top):
        folders[:] = [d for d in folders if Path(folder, d) != ws]
        for name in folders + files:
            path = Path(folder, name)
            seen[str(path.relative_to(top))] = path.read_bytes() if path.is_file() else None
    return seen


def run(ctx: ToolContext, name: str, **arguments: Any) -> ToolResult:
    return execute(name, arguments, ctx)


# Each: a tool and its arguments; "{outside}" and "{ws}" stand for the absolute folders.
ESCAPES: list[tuple[str, dict[str, Any]]] = [
    ("read", {"path": "../outside/secret.txt"}),
    ("read", {"path": "src/../../outside/secret.txt"}),
    ("read", {"path": "{outside}/secret.txt"}),
    ("read", {"path": "{ws}/src/app.py"}),
    ("read", {"path": "/dev/zero"}),
    ("read", {"path": "out_link/secret.txt"}),
    ("read", {"path": "out_file"}),
    ("read", {"path": "dangling"}),
    ("read", {"path": ".git/config"}),
    ("read", {"path": ".GIT/config"}),
    ("read", {"path": "sub/.git/config"}),
    ("read", {"path": ".git"}),
    ("read", {"path": "git_link/config"}),
    ("read", {"path": "src/app.py\x00.txt"}),
    ("read", {"path": "a/" * 2100 + "x"}),
    ("read", {"path": "fifo"}),
    ("write", {"path": "../outside/new.txt", "content": "x"}),
    ("write", {"path": "sub/../../outside/new.txt", "content": "x"}),
    ("write", {"path": "{outside}/new.txt", "content": "x"}),
    ("write", {"path": "out_link/new.txt", "content": "x"}),
    ("write", {"path": "out_file", "content": "overwritten"}),
    ("write", {"path": "dangling", "content": "x"}),
    ("write", {"path": "plan/tasks.md", "content": "x"}),
    ("write", {"path": "plan/new.md", "content": "x"}),
    ("write", {"path": "./plan/sub/new.md", "content": "x"}),
    ("write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
    ("write", {"path": "git_link/hooks/post-checkout", "content": "#!/bin/sh\n"}),
    ("write", {"path": "fifo", "content": "x"}),
    ("edit", {"path": "out_file", "old": "TOP", "new": "OPEN"}),
    ("edit", {"path": "../outside/secret.txt", "old": "TOP", "new": "OPEN"}),
    ("edit", {"path": ".git/config", "old": "false", "new": "true"}),
    ("edit", {"path": "plan/tasks.md", "old": "tasks", "new": "done"}),
    ("glob", {"pattern": "../*"}),
    ("glob", {"pattern": "../outside/**"}),
    ("glob", {"pattern": "/etc/*"}),
    ("glob", {"pattern": ".git/**"}),
    ("glob", {"pattern": "**/.Git/*"}),
    ("grep", {"pattern": "TOP", "path": ".."}),
    ("grep", {"pattern": "TOP", "path": "{outside}"}),
    ("grep", {"pattern": "TOP", "path": "out_link"}),
    ("grep", {"pattern": "TOP", "path": "out_file"}),
    ("grep", {"pattern": "core", "path": ".git"}),
    ("grep", {"pattern": "core", "path": "git_link"}),
    ("grep", {"pattern": "x", "path": "fifo"}),
]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    ESCAPES,
    ids=[f"{tool}-{i}" for i, (tool, _) in enumerate(ESCAPES)],
)
def test_escape_attempts_are_refused(
    box: Path, ctx: ToolContext, tool: str, arguments: dict[str, Any]
) -> None:
    outside = box.parent / "outside"
    filled = {
        k: v.replace("{outside}", str(outside)).replace("{ws}", str(box))
        if isinstance(v, str)
        else v
        for k, v in arguments.items()
    }
    before = outside_snapshot(box)
    plan_before = (box / "plan/tasks.md").read_bytes()
    git_before = (box / ".git/config").read_bytes()
    started = time.monotonic()
    result = execute(tool, filled, ctx)
    assert time.monotonic() - started < 5  # a FIFO must never make a tool wait
    assert not result.ok
    assert result.output.startswith("refused: "), result.output
    assert "\n" not in result.output  # one sentence
    assert SENTINEL.strip() not in result.output
    assert outside_snapshot(box) == before
    assert (box / "plan/tasks.md").read_bytes() == plan_before
    assert (box / ".git/config").read_bytes() == git_before
    assert not (box / ".git/hooks").exists()


def test_refusals_say_why(box: Path, ctx: ToolContext) -> None:
    assert run(ctx, "read", path="../x").output == (
        "refused: path '../x' leaves the workspace ('..' is not allowed)"
    )
    absolute = run(ctx, "read", path=str(box / "README.md")).output
    assert "is absolute; use a path relative to the workspace root" in absolute
    assert "through a symlink" in run(ctx, "read", path="out_file").output
    assert "inside .git" in run(ctx, "read", path=".Git/HEAD").output
    assert "may be read but not written" in run(ctx, "write", path="plan/x", content="").output
    assert "not a regular file" in run(ctx, "read", path="fifo").output


def test_glob_and_grep_stay_inside_through_symlinked_folders(box: Path, ctx: ToolContext) -> None:
    listed = run(ctx, "glob", pattern="**").output.splitlines()
    assert listed == sorted(listed)
    assert "src/app.py" in listed
    assert "in_link.py" in listed  # a symlink to a file inside is fine
    assert "plan/tasks.md" in listed  # readable, only not writable
    for path in listed:
        assert not path.startswith(("out_link", "out_file", "dangling", "git_link", "fifo"))
        assert ".git" not in path.split("/")
    everywhere = run(ctx, "grep", pattern="TOP SECRET|bare = false")
    assert everywhere.ok
    assert everywhere.output.startswith("no matches")


def test_tilde_is_a_plain_folder_name(box: Path, ctx: ToolContext, tmp_path: Path) -> None:
    result = run(ctx, "write", path="~/notes.txt", content="kept here\n")
    assert result.ok, result.output
    assert (box / "~" / "notes.txt").read_text(encoding="utf-8") == "kept here\n"
    assert list((tmp_path / "home").iterdir()) == []
    assert "kept here" in run(ctx, "read", path="~/notes.txt").output


def test_read_only_role_may_read_and_run_but_not_write(box: Path, ctx: ToolContext) -> None:
    reviewer = replace(ctx, writable=False)
    for name, arguments in [
        ("write", {"path": "new.txt", "content": "x"}),
        ("edit", {"path": "README.md", "old": "demo", "new": "x"}),
    ]:
        result = execute(name, arguments, reviewer)
        assert not result.ok
        assert (
            result.output == "refused: this role is read-only, so write and edit are not available"
        )
    assert not (box / "new.txt").exists()
    assert (box / "README.md").read_text(encoding="utf-8").startswith("# demo")
    assert run(reviewer, "read", path="README.md").ok
    assert run(reviewer, "bash", command="true").ok


def test_read_returns_numbered_lines(ctx: ToolContext) -> None:
    result = run(ctx, "read", path="src/app.py")
    assert result.ok
    assert result.output.splitlines()[:2] == ["     1\tdef main():", "     2\t    return 1"]
    assert len(result.output.splitlines()) == 6


def test_read_offset_and_limit(ctx: ToolContext) -> None:
    result = run(ctx, "read", path="src/app.py", offset=5, limit=1)
    assert result.output == (
        "     5\tdef helper():\n[more lines follow; read again with offset=6 to continue]"
    )
    assert run(ctx, "read", path="src/app.py", offset=6).output == "     6\t    return main() + 1"
    past = run(ctx, "read", path="src/app.py", offset=40)
    assert not past.ok
    assert past.output == "offset 40 is past the end: 'src/app.py' has 6 lines"


def test_read_follows_a_symlink_that_stays_inside(ctx: ToolContext) -> None:
    assert "def main" in run(ctx, "read", path="in_link.py").output


def test_read_refuses_binary_and_reports_missing_empty_and_folders(
    box: Path, ctx: ToolContext
) -> None:
    (box / "image.bin").write_bytes(b"PNG\x00\x01\x02" * 10)
    (box / "empty.txt").write_text("", encoding="utf-8")
    binary = run(ctx, "read", path="image.bin")
    assert not binary.ok
    assert binary.output == "refused: 'image.bin' looks binary (a NUL byte in its first 8 KB)"
    missing = run(ctx, "read", path="nope.py")
    assert not missing.ok
    assert missing.output == "no file at 'nope.py'; use glob to find files"
    assert run(ctx, "read", path="empty.txt").output == "'empty.txt' is empty"
    folder = run(ctx, "read", path="src")
    assert not folder.ok
    assert folder.output == "'src' is a folder; use glob to list its files"


def test_read_caps_output_and_long_lines(box: Path, ctx: ToolContext) -> None:
    (box / "big.txt").write_text("".join(f"line {i} {'x' * 60}\n" for i in range(5000)))
    (box / "wide.txt").write_text("y" * 10_000 + "\n")
    small = replace(ctx, output_limit=4096)
    result = run(small, "read", path="big.txt")
    assert result.ok
    assert len(result.output.encode()) <= 4096
    assert result.output.endswith("to continue]")
    wide = run(ctx, "read", path="wide.txt").output
    assert wide.endswith("[... line cut at 2000 characters]")
    assert len(wide) < 2100


def test_write_creates_folders_and_overwrites(box: Path, ctx: ToolContext) -> None:
    result = run(ctx, "write", path="docs/deep/notes.md", content="héllo\n")
    assert result.ok
    assert result.output == "wrote 7 bytes to 'docs/deep/notes.md'"
    assert (box / "docs/deep/notes.md").read_text(encoding="utf-8") == "héllo\n"
    assert run(ctx, "write", path="docs/deep/notes.md", content="short").ok
    assert (box / "docs/deep/notes.md").read_text(encoding="utf-8") == "short"


def test_write_through_a_symlink_inside_writes_its_target(box: Path, ctx: ToolContext) -> None:
    assert run(ctx, "write", path="in_link.py", content="x = 1\n").ok
    assert (box / "src/app.py").read_text(encoding="utf-8") == "x = 1\n"
    assert (box / "in_link.py").is_symlink()


def test_write_refuses_folders_and_hard_links(box: Path, ctx: ToolContext) -> None:
    assert run(ctx, "write", path="src", content="x").output == "'src' is a folder; name a file"
    os.link(box / "README.md", box / "second_name.md")
    linked = run(ctx, "write", path="second_name.md", content="x")
    assert not linked.ok
    assert "hard links" in linked.output
    assert (box / "README.md").read_text(encoding="utf-8").startswith("# demo")


def test_edit_replaces_exactly_one_match(box: Path, ctx: ToolContext) -> None:
    result = run(ctx, "edit", path="src/app.py", old="def helper():", new="def assist():")
    assert result.ok, result.output
    assert "def assist():\n    return main() + 1" in (box / "src/app.py").read_text()


def test_edit_refuses_missing_and_repeated_text(box: Path, ctx: ToolContext) -> None:
    missing = run(ctx, "edit", path="src/app.py", old="def absent():", new="x")
    assert not missing.ok
    assert missing.output.startswith("old text matches 0 times in 'src/app.py'; it must match")
    repeated = run(ctx, "edit", path="src/app.py", old="return", new="yield")
    assert not repeated.ok
    assert repeated.output == (
        "old text matches 2 times in 'src/app.py'; "
        "include more surrounding lines so it matches exactly once"
    )
    (box / "aaa.txt").write_text("aaa", encoding="utf-8")
    assert "matches 2 times" in run(ctx, "edit", path="aaa.txt", old="aa", new="b").output
    assert "old is empty" in run(ctx, "edit", path="src/app.py", old="", new="x").output
    assert (box / "src/app.py").read_text(encoding="utf-8") == APP


def test_edit_hints_at_crlf_line_endings(box: Path, ctx: ToolContext) -> None:
    (box / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    result = run(ctx, "edit", path="win.txt", old="one\ntwo", new="x")
    assert "(the file has CRLF line endings)" in result.output


def test_edit_of_a_missing_file_says_so(ctx: ToolContext) -> None:
    result = run(ctx, "edit", path="nope.py", old="a", new="b")
    assert result.output == "no file at 'nope.py'; use glob to find files"


def test_glob_matches_patterns(ctx: ToolContext) -> None:
    assert run(ctx, "glob", pattern="**/*.py").output.splitlines() == [
        "in_link.py",
        "src/app.py",
        "src/util.py",
    ]
    assert run(ctx, "glob", pattern="src").output.splitlines() == ["src/app.py", "src/util.py"]
    assert run(ctx, "glob", pattern="*.md").output == "README.md"
    assert run(ctx, "glob", pattern="**/*.rs").output == "no files match '**/*.rs'"
    empty = run(ctx, "glob", pattern=" ")
    assert not empty.ok


def test_glob_caps_the_listing(box: Path, ctx: ToolContext) -> None:
    many = box / "many"
    many.mkdir()
    for i in range(MAX_GLOB_FILES + 5):
        (many / f"f{i:05}.txt").touch()
    result = run(replace(ctx, output_limit=10**6), "glob", pattern="many/*.txt")
    lines = result.output.splitlines()
    assert len(lines) == MAX_GLOB_FILES + 1
    assert lines[-1] == "[5 more files; narrow the pattern]"


def test_grep_finds_lines_with_paths_and_numbers(ctx: ToolContext) -> None:
    result = run(ctx, "grep", pattern=r"return \w+\(")
    assert result.ok
    assert result.output.splitlines() == [
        "in_link.py:6:    return main() + 1",
        "src/app.py:6:    return main() + 1",
    ]


def test_grep_narrows_by_path_and_glob(ctx: ToolContext) -> None:
    assert run(ctx, "grep", pattern="main", path="README.md").output == "README.md:2:main entry"
    by_name = run(ctx, "grep", pattern="main|import", glob="*.py", path="src")
    assert by_name.output.splitlines() == [
        "src/app.py:1:def main():",
        "src/app.py:6:    return main() + 1",
        "src/util.py:1:import os",
    ]
    by_path = run(ctx, "grep", pattern="import", glob="src/*.py")
    assert by_path.output == "src/util.py:1:import os"


def test_grep_skips_binary_files_and_rejects_bad_regex(box: Path, ctx: ToolContext) -> None:
    (box / "blob.bin").write_bytes(b"\x00needle")
    assert run(ctx, "grep", pattern="needle").output.startswith("no matches")
    bad = run(ctx, "grep", pattern="(unclosed")
    assert not bad.ok
    assert bad.output.startswith("the pattern is not a valid Python regular expression")


def test_grep_caps_output(box: Path, ctx: ToolContext) -> None:
    (box / "hay.txt").write_text("needle here\n" * 5000, encoding="utf-8")
    result = run(replace(ctx, output_limit=2048), "grep", pattern="needle")
    assert result.ok
    assert len(result.output.encode()) <= 2048
    assert result.output.endswith("narrow the pattern, path or glob]")


def test_bash_runs_in_the_worktree_with_empty_stdin(box: Path, ctx: ToolContext) -> None:
    result = run(ctx, "bash", command="pwd; cat; echo done")
    assert result.ok
    assert result.output == f"{box.resolve()}\ndone\n[exit code 0]"


def test_bash_reports_a_failing_exit_code(ctx: ToolContext) -> None:
    result = run(ctx, "bash", command="echo oops >&2; exit 3")
    assert not result.ok
    assert result.output == "oops\n[exit code 3]"


def test_bash_timeout_kills_the_process_group(box: Path, ctx: ToolContext) -> None:
    pid_file = box.parent / "sleeper.pid"
    started = time.monotonic()
    result = run(ctx, "bash", command=f"sleep 60 & echo $! > '{pid_file}'; wait", timeout=1)
    assert time.monotonic() - started < 6
    assert not result.ok
    assert result.output.endswith(
        "[timed out after 1s; the command and all it started were killed]"
    )
    assert gone(int(pid_file.read_text()))


def test_bash_timeout_is_capped_by_the_context(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = run(replace(ctx, timeout_seconds=0.5), "bash", command="sleep 30", timeout=300)
    assert "timed out after 0.5s" in result.output
    assert time.monotonic() - started < 5


def test_bash_environment_is_the_allow_list(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    monkeypatch.setenv("TASKHAND_VISIBLE", "not named, so not given")
    monkeypatch.setenv("LANG", "C.UTF-8")
    result = run(ctx, "bash", command='echo "[$OPENAI_API_KEY] [$TASKHAND_VISIBLE] [$LANG]"')
    assert result.output == "[] [] [C.UTF-8]\n[exit code 0]"
    assert "sk-test-123456" not in run(ctx, "bash", command="env").output


def test_bash_uses_the_given_environment_as_built(ctx: ToolContext) -> None:
    # The agent builds it (the allow-list and the plan's names); bash takes it whole.
    env = {"PATH": os.environ["PATH"], "GREETING": "hi", "DATABASE_URL": "postgres://h/db"}
    result = run(replace(ctx, env=env), "bash", command='echo "$GREETING [$DATABASE_URL]"')
    assert result.output == "hi [postgres://h/db]\n[exit code 0]"


def test_bash_caps_output_head_and_tail(ctx: ToolContext) -> None:
    command = "echo first; head -c 200000 /dev/zero | tr '\\0' a; echo; echo last"
    result = run(replace(ctx, output_limit=4096), "bash", command=command)
    assert result.ok
    assert result.output.startswith("first\n")
    assert result.output.endswith("last\n[exit code 0]")
    assert result.output.count("bytes cut") == 1  # cut once, with the true count
    assert len(result.output.encode()) <= 4096


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read", '{"path": "README.md"', "the arguments for read are not valid JSON"),
        ("read", "{path: README.md}", "the arguments for read are not valid JSON"),
        ("read", "[1, 2]", "the arguments for read must be a JSON object, not an array"),
        ("read", '"README.md"', "the arguments for read must be a JSON object, not a string"),
        ("read", "", "read needs the argument 'path'"),
        ("read", {}, "read needs the argument 'path'"),
        ("read", {"path": 3}, "argument 'path' of read must be a string, not a number"),
        ("read", {"path": None}, "argument 'path' of read must be a string, not null"),
        ("read", {"path": "a", "offset": "2"}, "argument 'offset' of read must be a whole number"),
        ("read", {"path": "a", "offset": True}, "must be a whole number, not true or false"),
        ("read", {"path": "a", "offset": 1.5}, "must be a whole number, not a number"),
        ("read", {"path": "a", "offset": 0}, "argument 'offset' of read must be at least 1"),
        ("read", {"path": "a", "lines": 2}, "read has no argument 'lines'; it takes path, offset"),
        ("write", {"path": "a"}, "write needs the argument 'content'"),
        ("edit", {"path": "a", "old": ["x"], "new": "y"}, "must be a string, not an array"),
        ("glob", {"pattern": {"a": 1}}, "must be a string, not an object"),
        ("bash", {"command": "true", "timeout": -1}, "'timeout' of bash must be above 0"),
        ("bash", '{"command": "true", "timeout": NaN}', "must be a finite number"),
        ("bash", {"command": "echo \x00"}, "the command contains a NUL byte"),
    ],
)
def test_malformed_arguments_are_answered_not_raised(
    ctx: ToolContext, name: str, arguments: str | dict[str, Any], message: str
) -> None:
    result = execute(name, arguments, ctx)
    assert not result.ok
    assert message in result.output, result.output


def test_arguments_may_come_as_json_text_with_null_optionals(ctx: ToolContext) -> None:
    text = json.dumps({"path": "src/app.py", "offset": None, "limit": 1})
    result = execute("read", text, ctx)
    assert result.ok
    assert result.output.startswith("     1\tdef main():")


def test_unknown_tool_lists_the_real_ones(ctx: ToolContext) -> None:
    result = execute("delete", {"path": "README.md"}, ctx)
    assert not result.ok
    assert result.output == (
        "unknown tool 'delete'; the tools are read, write, edit, glob, grep, bash"
    )


def test_missing_workspace_is_reported(tmp_path: Path) -> None:
    result = execute("read", {"path": "a"}, ToolContext(worktree=tmp_path / "gone"))
    assert not result.ok
    assert "does not exist" in result.output


def test_schemas_describe_every_tool_as_openai_functions() -> None:
    names = [schema["function"]["name"] for schema in SCHEMAS]
    assert names == ["read", "write", "edit", "glob", "grep", "bash"]
    required = {s["function"]["name"]: s["function"]["parameters"]["required"] for s in SCHEMAS}
    assert required == {
        "read": ["path"],
        "write": ["path", "content"],
        "edit": ["path", "old", "new"],
        "glob": ["pattern"],
        "grep": ["pattern"],
        "bash": ["command"],
    }
    for schema in SCHEMAS:
        assert schema["type"] == "function"
        assert schema["function"]["description"]
        parameters = schema["function"]["parameters"]
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        for prop in parameters["properties"].values():
            assert prop["type"] in {"string", "integer", "number"}
            assert prop["description"]
    json.dumps(SCHEMAS)  # plain JSON, ready to send
