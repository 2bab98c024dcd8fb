"""The built-in tools a model may call in our own loop (read, write, edit, glob, grep, bash),
and the dispatcher that runs one call in the attempt's worktree, confined by `tool_paths`.
Every failure, a malformed call included, comes back as a ToolResult, never raised.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.agents import browser as browsing
from taskhand.agents.browser import BrowserSession
from taskhand.agents.tool_paths import (
    OPEN_FLAGS,
    ToolError,
    check_pattern,
    open_regular,
    refuse,
    resolve,
    show,
    store,
    walk,
    writable,
)
from taskhand.agents.tool_schemas import DEFAULT_READ_LINES, check_arguments
from taskhand.gates.checks import run_check
from taskhand.gates.scope import matches
from taskhand.host.allowlist import child_env
from taskhand.host.sandbox import NONE
from taskhand.plan.model import Check
from taskhand.text import cap
from taskhand.unit import Sandbox

BINARY_PROBE_BYTES = 8 * 1024
MAX_LINE_CHARS = 2000
MAX_GLOB_FILES = 1000
# Bigger files are data or generated, not source worth a regex scan on every call.
MAX_GREP_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ToolContext:
    """Where and how the tools act for one unit."""

    worktree: Path
    read_only: tuple[str, ...] = ()  # worktree-relative paths readable but never writable
    timeout_seconds: float = 120.0  # per bash call; a model may ask for less, never more
    output_limit: int = 16 * 1024  # bytes of tool output returned to the model
    env: Mapping[str, str] | None = None  # bash's whole environment; None: the allow-list's
    writable: bool = True  # False for reviewing roles: write and edit refused
    sandbox: Sandbox = NONE  # what confines bash to the workspace
    browser: BrowserSession | None = None  # a designer's or qa's browser: the browser_* tools


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str  # what the model sees; on failure one sentence saying what was wrong


def execute(name: str, arguments: str | dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run tool `name` with `arguments` (a JSON object, as text or parsed) in `ctx`."""
    tool = _TOOLS.get(name)
    if ctx.browser is not None and name in browsing.TOOLS:
        tool = _browser(ctx.browser, browsing.TOOLS[name])
    if tool is None:
        offered = [*_TOOLS, *(browsing.TOOLS if ctx.browser is not None else ())]
        return ToolResult(False, f"unknown tool {show(name)}; the tools are {', '.join(offered)}")
    root = Path(os.path.realpath(ctx.worktree))
    try:
        if not root.is_dir():
            raise ToolError(f"the workspace {root} does not exist, so no tool can run")
        result = tool(check_arguments(name, arguments), ctx, root)
    except ToolError as exc:
        result = ToolResult(False, str(exc))
    except OSError as exc:
        result = ToolResult(False, f"{name} failed: {exc.strerror or exc}")
    return ToolResult(result.ok, cap(result.output, ctx.output_limit, ends=True))


def _browser(
    session: BrowserSession, call: Callable[[BrowserSession, dict[str, Any]], str]
) -> Callable[[dict[str, Any], ToolContext, Path], ToolResult]:
    return lambda args, ctx, root: ToolResult(True, call(session, args))


def _writable(ctx: ToolContext, root: Path, raw: str) -> Path:
    if not ctx.writable:
        raise refuse("this role is read-only, so write and edit are not available")
    return writable(root, raw, ctx.read_only)


def _read(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    offset: int = args.get("offset", 1)
    limit: int = args.get("limit", DEFAULT_READ_LINES)
    real = resolve(root, raw)
    budget = ctx.output_limit - 200  # room for the closing note
    lines: list[str] = []
    used = 0
    seen = 0
    with os.fdopen(open_regular(real, raw), "rb") as file:
        if b"\x00" in file.read(BINARY_PROBE_BYTES):
            raise refuse(f"{show(raw)} looks binary (a NUL byte in its first 8 KB)")
        file.seek(0)
        for number, line in enumerate(file, 1):
            seen = number
            if number < offset:
                continue
            if len(lines) == limit or (lines and used + len(line) > budget):
                note = f"[more lines follow; read again with offset={number} to continue]"
                return ToolResult(True, "\n".join([*lines, note]))
            text = line.decode("utf-8", errors="replace").rstrip("\r\n")
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + f" [... line cut at {MAX_LINE_CHARS} characters]"
            lines.append(f"{number:6}\t{text}")
            used += len(lines[-1]) + 1
    if lines:
        return ToolResult(True, "\n".join(lines))
    if seen == 0:
        return ToolResult(True, f"{show(raw)} is empty")
    return ToolResult(False, f"offset {offset} is past the end: {show(raw)} has {seen} lines")


def _write(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    real = _writable(ctx, root, raw)
    data = _encode(args["content"], "content")
    real.parent.mkdir(parents=True, exist_ok=True)
    store(real, raw, data)
    return ToolResult(True, f"wrote {len(data)} bytes to {show(raw)}")


def _edit(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    old: str = args["old"]
    new: str = args["new"]
    real = _writable(ctx, root, raw)
    if not old:
        raise ToolError("old is empty; give the exact text to replace, or use write")
    with os.fdopen(open_regular(real, raw), "rb") as file:
        data = file.read()
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise refuse(f"{show(raw)} looks binary (a NUL byte in its first 8 KB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{show(raw)} is not UTF-8 text; edit changes text only") from None
    count = _occurrences(text, old)
    if count != 1:
        hint = (
            "include more surrounding lines so it matches exactly once"
            if count
            else "it must match exactly, whitespace and indentation included; read the file first"
        )
        if not count and "\r\n" in text and "\r\n" not in old:
            hint += " (the file has CRLF line endings)"
        raise ToolError(f"old text matches {count} times in {show(raw)}; {hint}")
    store(real, raw, _encode(text.replace(old, new, 1), "new"))
    return ToolResult(True, f"edited {show(raw)}: replaced the one match")


def _occurrences(text: str, old: str) -> int:
    # Overlapping matches count: in "aaa", old "aa" is ambiguous, not unique.
    count, start = 0, text.find(old)
    while start != -1:
        count, start = count + 1, text.find(old, start + 1)
    return count


def _encode(text: str, argument: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"{argument} holds a lone surrogate, which UTF-8 cannot store") from None


def _glob(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    pattern: str = args["pattern"]
    check_pattern(pattern)
    found = [rel for _, rel in walk(root, root) if matches(rel, pattern)]
    if not found:
        return ToolResult(True, f"no files match {show(pattern)}")
    shown = found[:MAX_GLOB_FILES]
    more = len(found) - len(shown)
    note = [f"[{more} more files; narrow the pattern]"] if more else []
    return ToolResult(True, "\n".join(shown + note))


def _grep(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args.get("path", ".")
    file_glob: str | None = args.get("glob")
    try:
        regex = re.compile(args["pattern"])
    except re.error as exc:
        raise ToolError(f"the pattern is not a valid Python regular expression: {exc}") from None
    start = resolve(root, raw)
    if start.is_dir():
        files: Iterator[tuple[Path, str]] = walk(root, start)
    else:
        os.close(open_regular(start, raw))  # a clear refusal for a FIFO, device or missing file
        files = iter([(start, start.relative_to(root).as_posix())])
    hits: list[str] = []
    used = 0
    budget = ctx.output_limit - 200
    for real, rel in files:
        if file_glob and not matches(rel if "/" in file_glob else real.name, file_glob):
            continue
        for number, line in enumerate(_text(real).splitlines(), 1):
            if not regex.search(line):
                continue
            hit = f"{rel}:{number}:{line[:MAX_LINE_CHARS]}"
            used += len(hit) + 1
            if used > budget:
                note = f"[stopped after {len(hits)} matches; narrow the pattern, path or glob]"
                return ToolResult(True, "\n".join([*hits, note]))
            hits.append(hit)
    if not hits:
        return ToolResult(True, f"no matches for {show(args['pattern'])} in {show(raw)}")
    return ToolResult(True, "\n".join(hits))


def _text(real: Path) -> str:
    """A file's text for grep; "" for anything that is not a small plain text file."""
    try:
        info = real.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_GREP_FILE_BYTES:
            return ""
        fd = os.open(real, os.O_RDONLY | OPEN_FLAGS)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ""
            data = file.read(MAX_GREP_FILE_BYTES)
    except OSError:
        return ""
    return "" if b"\x00" in data[:BINARY_PROBE_BYTES] else data.decode("utf-8", errors="replace")


def _bash(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    """Run the command in its own process group with the workspace as its working folder.

    Under the unit's sandbox the shell can write only the workspace. Without one it may `cd ..`
    and write wherever the user can; then the harness's backstop notices what it changed in
    the repository and the plan, and the reviewer check notices changes to the candidate.
    """
    command: str = args["command"]
    if "\x00" in command:
        raise ToolError("the command contains a NUL byte, which no shell can run")
    timeout = min(float(args.get("timeout", ctx.timeout_seconds)), ctx.timeout_seconds)
    check = Check(("bash", "-c", command), timeout_seconds=timeout)
    # Room for the cut marker and the closing note, so the output is not cut a second time.
    limit = max(0, ctx.output_limit - 160)
    env = child_env() if ctx.env is None else ctx.env
    result = run_check(check, root, env, limit, ctx.sandbox)
    if result.error:
        return ToolResult(False, f"bash could not run: {result.error}")
    if result.timed_out:
        note = f"[timed out after {timeout:g}s; the command and all it started were killed]"
        return ToolResult(False, _join(result.output, note))
    code = result.exit_code
    note = f"[exit code {code}]" if code is None or code >= 0 else f"[killed by signal {-code}]"
    return ToolResult(code == 0, _join(result.output, note))


def _join(output: str, note: str) -> str:
    return f"{output}{'' if not output or output.endswith(chr(10)) else chr(10)}{note}"


_TOOLS: dict[str, Callable[[dict[str, Any], ToolContext, Path], ToolResult]] = {
    "read": _read,
    "write": _write,
    "edit": _edit,
    "glob": _glob,
    "grep": _grep,
    "bash": _bash,
}
