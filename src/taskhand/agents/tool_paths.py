"""Path confinement for the model's tools: a path resolves inside the worktree or is refused
(absolute, `..`, `.git` in any case, a symlink out, the read-only plan folder), files open only
when plain, and walks never leave the worktree. A refusal is a ToolError, the model's answer.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from taskhand.text import shorten

MAX_PATH_CHARS = 4096
# Never follow a final symlink, and never block on opening a FIFO.
OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ToolError(Exception):
    """A call the tool will not carry out; the message is the whole answer to the model."""


def refuse(reason: str) -> ToolError:
    return ToolError(f"refused: {reason}")


def resolve(root: Path, raw: str) -> Path:
    """The real path `raw` names inside the workspace, or a refusal saying why not.

    `~` is an ordinary character here: nothing is ever expanded.
    """
    shown = show(raw)
    if "\x00" in raw:
        raise refuse(f"path {shown} contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise refuse(f"the path is {len(raw)} characters long, over {MAX_PATH_CHARS}")
    if not raw:
        raise ToolError("the path is empty; name a file relative to the workspace root")
    pure = PurePosixPath(raw)
    if pure.is_absolute():
        # Even one inside the workspace: the model should not learn or rely on where it lives.
        raise refuse(f"path {shown} is absolute; use a path relative to the workspace root")
    if ".." in pure.parts:
        raise refuse(f"path {shown} leaves the workspace ('..' is not allowed)")
    if touches_git(pure.parts):
        raise refuse(f"path {shown} is inside .git, which the tools never touch")
    real = Path(os.path.realpath(root / pure))
    if not real.is_relative_to(root):
        raise refuse(f"path {shown} leads outside the workspace through a symlink")
    if touches_git(real.relative_to(root).parts):
        raise refuse(f"path {shown} leads into .git through a symlink")
    return real


def touches_git(parts: tuple[str, ...]) -> bool:
    # Any depth and any case: case-insensitive disks treat '.GIT' as the repository itself, and
    # some also drop trailing dots and spaces.
    return any(part.casefold().rstrip(". ") == ".git" for part in parts)


def writable(root: Path, raw: str, read_only: tuple[str, ...]) -> Path:
    """The file `raw` names inside the workspace, refused in a `read_only` path or when not a
    plain file."""
    real = resolve(root, raw)
    rel = real.relative_to(root).parts
    for entry in read_only:
        locked = tuple(p for p in PurePosixPath(entry).parts if p != ".")
        fold = [p.casefold() for p in rel[: len(locked)]]
        if fold == [p.casefold() for p in locked] or real.is_relative_to(
            os.path.realpath(root / entry)
        ):
            raise refuse(f"path {show(raw)} is in {entry!r}, which may be read but not written")
    if real.is_dir():
        raise ToolError(f"{show(raw)} is a folder; name a file")
    if real.exists() and not real.is_file():
        raise refuse(f"{show(raw)} is not a regular file (a device, FIFO or socket)")
    return real


def open_regular(real: Path, raw: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """An open descriptor on `real`, refused unless it is a plain file."""
    try:
        fd = os.open(real, flags | OPEN_FLAGS, mode)
    except FileNotFoundError:
        raise ToolError(f"no file at {show(raw)}; use glob to find files") from None
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{show(raw)} is a folder; use glob to list its files")
    raise refuse(f"{show(raw)} is not a regular file (a device, FIFO or socket)")


def check_pattern(pattern: str) -> None:
    # The walk cannot leave the workspace anyway; refusing says so instead of finding nothing.
    if not pattern.strip():
        raise ToolError("the pattern is empty; try **/*.py")
    if "\x00" in pattern or len(pattern) > MAX_PATH_CHARS:
        raise refuse("the pattern holds a NUL byte or is over 4096 characters")
    parts = PurePosixPath(pattern).parts
    if pattern.startswith("/") or ".." in parts:
        raise refuse(f"pattern {show(pattern)} leaves the workspace; patterns are relative")
    if touches_git(parts):
        raise refuse(f"pattern {show(pattern)} is inside .git, which the tools never touch")


def walk(root: Path, start: Path) -> Iterator[tuple[Path, str]]:
    """Files below `start` as (real path, workspace-relative path), never leaving the workspace.

    Symlinked folders are not entered, even ones pointing inside (loops, duplicates). Only
    plain files are listed; a symlinked one only when its target lies inside, outside .git.
    """
    for folder, folders, files in os.walk(start):
        folders[:] = sorted(
            d for d in folders if not touches_git((d,)) and not Path(folder, d).is_symlink()
        )
        for name in sorted(files):
            path = Path(folder, name)
            real = Path(os.path.realpath(path)) if path.is_symlink() else path
            if touches_git((name,)) or not real.is_relative_to(root):
                continue
            if not touches_git(real.relative_to(root).parts) and real.is_file():
                yield real, path.relative_to(root).as_posix()


def show(text: str, width: int = 80) -> str:
    """`text` quoted for a message, shortened so a huge argument stays one readable line."""
    return repr(shorten(text, width))


def store(real: Path, raw: str, data: bytes) -> None:
    """Write `data` to the resolved path `real` (shown as `raw`), never through a hard link."""
    fd = open_regular(real, raw, os.O_WRONLY | os.O_CREAT)
    try:
        # A second name for the file may live outside the workspace; writing it writes there.
        if os.fstat(fd).st_nlink > 1:
            raise refuse(f"{show(raw)} has other hard links, which may lead outside")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
