"""The built-in tools a model may call in our own loop, each confined to the attempt's worktree.

A path that leaves the worktree, reaches into `.git` or writes the read-only plan folder is
refused; every failure, a malformed call included, comes back as a ToolResult, never raised.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from taskhand.checks import run_check
from taskhand.model import Check
from taskhand.scope import matches
from taskhand.secrets import clean_env

MAX_PATH_CHARS = 4096
BINARY_PROBE_BYTES = 8 * 1024
DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_GLOB_FILES = 1000
# Bigger files are data or generated, not source worth a regex scan on every call.
MAX_GREP_FILE_BYTES = 4 * 1024 * 1024
# Never follow a final symlink, and never block on opening a FIFO.
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class ToolContext:
    """Where and how the tools act for one unit."""

    worktree: Path
    read_only: tuple[str, ...] = ()  # worktree-relative paths readable but never writable
    timeout_seconds: float = 120.0  # per bash call; a model may ask for less, never more
    output_limit: int = 16 * 1024  # bytes of tool output returned to the model
    env: Mapping[str, str] | None = None  # for bash, secret-named variables always removed
    writable: bool = True  # False for reviewing roles: write and edit refused


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str  # what the model sees; on failure one sentence saying what was wrong


class _ToolError(Exception):
    """A call the tool will not carry out; the message is the whole answer to the model."""


def _refuse(reason: str) -> _ToolError:
    return _ToolError(f"refused: {reason}")


def _schema(
    name: str, description: str, properties: dict[str, Any], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    required = [key for key in properties if key not in optional]
    # Closed objects, so a misspelt argument is reported rather than silently dropped.
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    parameters |= {"required": required, "additionalProperties": False}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _arg(kind: str, description: str, **rules: Any) -> dict[str, Any]:
    return {"type": kind, "description": description, **rules}


_PATH = "Path relative to the workspace root, e.g. src/app.py."

SCHEMAS: list[dict[str, Any]] = [
    _schema(
        "read",
        "Read a text file. Lines come back numbered; use offset and limit for long files.",
        {
            "path": _arg("string", _PATH),
            "offset": _arg("integer", "First line to return, counting from 1.", minimum=1),
            "limit": _arg("integer", f"Most lines (default {DEFAULT_READ_LINES}).", minimum=1),
        },
        optional=("offset", "limit"),
    ),
    _schema(
        "write",
        "Create or overwrite a file with the given content; missing folders are created.",
        {"path": _arg("string", _PATH), "content": _arg("string", "The whole new content.")},
    ),
    _schema(
        "edit",
        "Replace text in a file. `old` must match exactly once, whitespace and indentation "
        "included; read the file first.",
        {
            "path": _arg("string", _PATH),
            "old": _arg("string", "The exact text to replace."),
            "new": _arg("string", "The text to put in its place."),
        },
    ),
    _schema(
        "glob",
        "List files whose workspace-relative path matches a pattern: * and ? stay within one "
        "folder, ** spans folders (src/**/*.py); a pattern without wildcards names a file or "
        "a whole folder.",
        {"pattern": _arg("string", "For example **/*.py or tests/")},
    ),
    _schema(
        "grep",
        "Search file contents with a Python regular expression; prints path:line:text.",
        {
            "pattern": _arg("string", "A Python regular expression."),
            "path": _arg("string", "File or folder to search (default: the whole workspace)."),
            "glob": _arg("string", "Only files matching this; without a / it matches names."),
        },
        optional=("path", "glob"),
    ),
    _schema(
        "bash",
        "Run a bash command in the workspace root. stdout and stderr come back together with "
        "the exit code; stdin is empty; long output is cut in the middle.",
        {
            "command": _arg("string", "The command line to run."),
            "timeout": _arg("number", "Seconds before it is killed (capped).", exclusiveMinimum=0),
        },
        optional=("timeout",),
    ),
]

_PARAMETERS: dict[str, dict[str, Any]] = {
    s["function"]["name"]: s["function"]["parameters"] for s in SCHEMAS
}
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float)}
_NOUNS = {"string": "a string", "integer": "a whole number", "number": "a number"}


def execute(name: str, arguments: str | dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run tool `name` with `arguments` (a JSON object, as text or parsed) in `ctx`."""
    tool = _TOOLS.get(name)
    if tool is None:
        return ToolResult(False, f"unknown tool {_show(name)}; the tools are {', '.join(_TOOLS)}")
    root = Path(os.path.realpath(ctx.worktree))
    try:
        if not root.is_dir():
            raise _ToolError(f"the workspace {root} does not exist, so no tool can run")
        result = tool(_arguments(name, arguments), ctx, root)
    except _ToolError as exc:
        result = ToolResult(False, str(exc))
    except OSError as exc:
        result = ToolResult(False, f"{name} failed: {exc.strerror or exc}")
    return ToolResult(result.ok, _cap(result.output, ctx.output_limit))


def _arguments(name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked against the tool's own schema."""
    parsed: object = arguments
    if isinstance(arguments, str):
        try:
            # Some models send "" for a call without arguments.
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise _ToolError(
                f"the arguments for {name} are not valid JSON ({exc.msg} at character "
                f"{exc.pos}); send one JSON object"
            ) from None
    if not isinstance(parsed, dict):
        raise _ToolError(f"the arguments for {name} must be a JSON object, not {_kind(parsed)}")
    spec = _PARAMETERS[name]
    properties: dict[str, Any] = spec["properties"]
    # A null optional argument is the model saying "default"; take it so.
    given = {k: v for k, v in parsed.items() if v is not None or k in spec["required"]}
    for key in given:
        if key not in properties:
            raise _ToolError(
                f"{name} has no argument {_show(str(key))}; it takes {', '.join(properties)}"
            )
    for key in spec["required"]:
        if key not in given:
            raise _ToolError(f"{name} needs the argument {key!r}")
    for key, value in given.items():
        prop = properties[key]
        if isinstance(value, bool) or not isinstance(value, _TYPES[prop["type"]]):
            raise _ToolError(
                f"argument {key!r} of {name} must be {_NOUNS[prop['type']]}, not {_kind(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise _ToolError(f"argument {key!r} of {name} must be a finite number")
        if "minimum" in prop and value < prop["minimum"]:
            raise _ToolError(f"argument {key!r} of {name} must be at least {prop['minimum']}")
        if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
            raise _ToolError(f"argument {key!r} of {name} must be above {prop['exclusiveMinimum']}")
    return given


def _resolve(root: Path, raw: str) -> Path:
    """The real path `raw` names inside the workspace, or a refusal saying why not.

    `~` is an ordinary character here: nothing is ever expanded.
    """
    shown = _show(raw)
    if "\x00" in raw:
        raise _refuse(f"path {shown} contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise _refuse(f"the path is {len(raw)} characters long, over {MAX_PATH_CHARS}")
    if not raw:
        raise _ToolError("the path is empty; name a file relative to the workspace root")
    pure = PurePosixPath(raw)
    if pure.is_absolute():
        # Even one inside the workspace: the model should not learn or rely on where it lives.
        raise _refuse(f"path {shown} is absolute; use a path relative to the workspace root")
    if ".." in pure.parts:
        raise _refuse(f"path {shown} leaves the workspace ('..' is not allowed)")
    if _touches_git(pure.parts):
        raise _refuse(f"path {shown} is inside .git, which the tools never touch")
    real = Path(os.path.realpath(root / pure))
    if not real.is_relative_to(root):
        raise _refuse(f"path {shown} leads outside the workspace through a symlink")
    if _touches_git(real.relative_to(root).parts):
        raise _refuse(f"path {shown} leads into .git through a symlink")
    return real


def _touches_git(parts: tuple[str, ...]) -> bool:
    # Any depth and any case: case-insensitive disks treat '.GIT' as the repository itself, and
    # some also drop trailing dots and spaces.
    return any(part.casefold().rstrip(". ") == ".git" for part in parts)


def _writable(ctx: ToolContext, root: Path, raw: str) -> Path:
    if not ctx.writable:
        raise _refuse("this role is read-only, so write and edit are not available")
    real = _resolve(root, raw)
    rel = real.relative_to(root).parts
    for entry in ctx.read_only:
        locked = tuple(p for p in PurePosixPath(entry).parts if p != ".")
        fold = [p.casefold() for p in rel[: len(locked)]]
        if fold == [p.casefold() for p in locked] or real.is_relative_to(
            os.path.realpath(root / entry)
        ):
            raise _refuse(f"path {_show(raw)} is in {entry!r}, which may be read but not written")
    if real.is_dir():
        raise _ToolError(f"{_show(raw)} is a folder; name a file")
    if real.exists() and not real.is_file():
        raise _refuse(f"{_show(raw)} is not a regular file (a device, FIFO or socket)")
    return real


def _open_regular(real: Path, raw: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """An open descriptor on `real`, refused unless it is a plain file."""
    try:
        fd = os.open(real, flags | _OPEN_FLAGS, mode)
    except FileNotFoundError:
        raise _ToolError(f"no file at {_show(raw)}; use glob to find files") from None
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(info.st_mode):
        raise _ToolError(f"{_show(raw)} is a folder; use glob to list its files")
    raise _refuse(f"{_show(raw)} is not a regular file (a device, FIFO or socket)")


def _read(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    offset: int = args.get("offset", 1)
    limit: int = args.get("limit", DEFAULT_READ_LINES)
    real = _resolve(root, raw)
    budget = ctx.output_limit - 200  # room for the closing note
    lines: list[str] = []
    used = 0
    seen = 0
    with os.fdopen(_open_regular(real, raw), "rb") as file:
        if b"\x00" in file.read(BINARY_PROBE_BYTES):
            raise _refuse(f"{_show(raw)} looks binary (a NUL byte in its first 8 KB)")
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
        return ToolResult(True, f"{_show(raw)} is empty")
    return ToolResult(False, f"offset {offset} is past the end: {_show(raw)} has {seen} lines")


def _write(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    real = _writable(ctx, root, raw)
    data = _encode(args["content"], "content")
    real.parent.mkdir(parents=True, exist_ok=True)
    _store(real, raw, data)
    return ToolResult(True, f"wrote {len(data)} bytes to {_show(raw)}")


def _edit(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args["path"]
    old: str = args["old"]
    new: str = args["new"]
    real = _writable(ctx, root, raw)
    if not old:
        raise _ToolError("old is empty; give the exact text to replace, or use write")
    with os.fdopen(_open_regular(real, raw), "rb") as file:
        data = file.read()
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise _refuse(f"{_show(raw)} looks binary (a NUL byte in its first 8 KB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _ToolError(f"{_show(raw)} is not UTF-8 text; edit changes text only") from None
    count = _occurrences(text, old)
    if count != 1:
        hint = (
            "include more surrounding lines so it matches exactly once"
            if count
            else "it must match exactly, whitespace and indentation included; read the file first"
        )
        if not count and "\r\n" in text and "\r\n" not in old:
            hint += " (the file has CRLF line endings)"
        raise _ToolError(f"old text matches {count} times in {_show(raw)}; {hint}")
    _store(real, raw, _encode(text.replace(old, new, 1), "new"))
    return ToolResult(True, f"edited {_show(raw)}: replaced the one match")


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
        raise _ToolError(f"{argument} holds a lone surrogate, which UTF-8 cannot store") from None


def _store(real: Path, raw: str, data: bytes) -> None:
    fd = _open_regular(real, raw, os.O_WRONLY | os.O_CREAT)
    try:
        # A second name for the file may live outside the workspace; writing it writes there.
        if os.fstat(fd).st_nlink > 1:
            raise _refuse(f"{_show(raw)} has other hard links, which may lead outside")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _glob(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    pattern: str = args["pattern"]
    _check_pattern(pattern)
    found = [rel for _, rel in _walk(root, root) if matches(rel, pattern)]
    if not found:
        return ToolResult(True, f"no files match {_show(pattern)}")
    shown = found[:MAX_GLOB_FILES]
    more = len(found) - len(shown)
    note = [f"[{more} more files; narrow the pattern]"] if more else []
    return ToolResult(True, "\n".join(shown + note))


def _check_pattern(pattern: str) -> None:
    # The walk cannot leave the workspace anyway; refusing says so instead of finding nothing.
    if not pattern.strip():
        raise _ToolError("the pattern is empty; try **/*.py")
    if "\x00" in pattern or len(pattern) > MAX_PATH_CHARS:
        raise _refuse("the pattern holds a NUL byte or is over 4096 characters")
    parts = PurePosixPath(pattern).parts
    if pattern.startswith("/") or ".." in parts:
        raise _refuse(f"pattern {_show(pattern)} leaves the workspace; patterns are relative")
    if _touches_git(parts):
        raise _refuse(f"pattern {_show(pattern)} is inside .git, which the tools never touch")


def _walk(root: Path, start: Path) -> Iterator[tuple[Path, str]]:
    """Files below `start` as (real path, workspace-relative path), never leaving the workspace.

    Symlinked folders are not entered, even ones pointing inside (loops, duplicates). Only
    plain files are listed; a symlinked one only when its target lies inside, outside .git.
    """
    for folder, folders, files in os.walk(start):
        folders[:] = sorted(
            d for d in folders if not _touches_git((d,)) and not Path(folder, d).is_symlink()
        )
        for name in sorted(files):
            path = Path(folder, name)
            real = Path(os.path.realpath(path)) if path.is_symlink() else path
            if _touches_git((name,)) or not real.is_relative_to(root):
                continue
            if not _touches_git(real.relative_to(root).parts) and real.is_file():
                yield real, path.relative_to(root).as_posix()


def _grep(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    raw: str = args.get("path", ".")
    file_glob: str | None = args.get("glob")
    try:
        regex = re.compile(args["pattern"])
    except re.error as exc:
        raise _ToolError(f"the pattern is not a valid Python regular expression: {exc}") from None
    start = _resolve(root, raw)
    if start.is_dir():
        files: Iterator[tuple[Path, str]] = _walk(root, start)
    else:
        os.close(_open_regular(start, raw))  # a clear refusal for a FIFO, device or missing file
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
        return ToolResult(True, f"no matches for {_show(args['pattern'])} in {_show(raw)}")
    return ToolResult(True, "\n".join(hits))


def _text(real: Path) -> str:
    """A file's text for grep; "" for anything that is not a small plain text file."""
    try:
        info = real.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_GREP_FILE_BYTES:
            return ""
        fd = os.open(real, os.O_RDONLY | _OPEN_FLAGS)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ""
            data = file.read(MAX_GREP_FILE_BYTES)
    except OSError:
        return ""
    return "" if b"\x00" in data[:BINARY_PROBE_BYTES] else data.decode("utf-8", errors="replace")


def _bash(args: dict[str, Any], ctx: ToolContext, root: Path) -> ToolResult:
    """Run the command in its own process group with the workspace as its working folder.

    A shell cannot be confined: it may `cd ..` and write wherever the user can. What guards
    the repository is the harness: the scope gate on the attempt's diff for implementers, and
    for reviewing roles the check that the worktree is unchanged afterwards.
    """
    command: str = args["command"]
    if "\x00" in command:
        raise _ToolError("the command contains a NUL byte, which no shell can run")
    timeout = min(float(args.get("timeout", ctx.timeout_seconds)), ctx.timeout_seconds)
    check = Check(("bash", "-c", command), timeout_seconds=timeout)
    # Secret-named variables go even from an env the caller chose: secrets never travel.
    # Room for the cut marker and the closing note, so the output is not cut a second time.
    limit = max(0, ctx.output_limit - 160)
    result = run_check(check, root, clean_env(ctx.env), limit)
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


def _cap(text: str, limit: int) -> str:
    """`text` within `limit` bytes: its head and tail with a marker where it was cut."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= limit:
        return text
    room = max(0, limit - 40)  # the marker's own size
    head, tail = data[: room // 2], data[len(data) - (room - room // 2) :]
    cut = len(data) - len(head) - len(tail)
    return (
        head.decode("utf-8", errors="ignore")
        + f"\n[... {cut} bytes cut ...]\n"
        + tail.decode("utf-8", errors="ignore")
    )


def _show(text: str, width: int = 80) -> str:
    """`text` quoted for a message, shortened so a huge argument stays one readable line."""
    return repr(text if len(text) <= width else text[:width] + "...")


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true or false"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
