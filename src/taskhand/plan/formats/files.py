"""Careful reading and atomic writing of plan files.

A plan folder may hold anything: binary junk, huge files, symlinks pointing elsewhere,
bytes that are not UTF-8. Reading turns each into a problem instead of a traceback.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from taskhand.plan.problems import Collector
from taskhand.text import utf16

MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Listing:
    """The entries of a plan folder by name, folders included (a reader reports them)."""

    root: Path
    names: list[str]


def list_folder(root: Path) -> Listing:
    names = sorted(entry.name for entry in os.scandir(root))
    return Listing(root, names)


def read_text(path: Path, root: Path, out: Collector) -> str | None:
    """Read a plan file as text the way Python's text mode would, or record why not."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            target = path.resolve()
            if not target.is_relative_to(root.resolve()):
                out.error(
                    None,
                    f"symlink points outside the plan folder (to {target})",
                    "replace the link with a copy of the file inside the plan folder",
                    "symlink-escape",
                )
                return None
            info = path.stat() if target.exists() else info
        if not stat.S_ISREG(info.st_mode):
            out.error(None, "not a regular file", "replace it with a Markdown file", "not-a-file")
            return None
        size = info.st_size
        if size > MAX_FILE_BYTES:
            out.error(
                None,
                f"file is {size / 1e6:.1f} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB "
                "limit for a plan file",
                "keep plan files to prose; move large material to a resource and link it",
                "too-large",
            )
            return None
        data = _read_bytes(path, size)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, on Python 3.11
        reason = getattr(exc, "strerror", None) or str(exc).split(":")[0]
        out.error(None, f"cannot be read: {reason}", "replace it with a readable file", "io")
        return None
    if utf16(data):
        out.error(
            None,
            "UTF-16 text; a plan file must be UTF-8",
            "save the file as UTF-8 (in most editors: Save with Encoding, UTF-8)",
            "encoding",
        )
        return None
    if b"\x00" in data:
        offset = data.index(b"\x00")
        out.error(
            data.count(b"\n", 0, offset) + 1,
            "binary content (a NUL byte); a plan file must be UTF-8 text",
            "replace the file with the Markdown text it should hold",
            "binary",
        )
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.error(
            data.count(b"\n", 0, exc.start) + 1,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            "save the file as UTF-8",
            "encoding",
        )
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_bytes(path: Path, size: int) -> bytes:
    """The file's bytes through its descriptor, to the end whatever `size` (its size a moment
    ago) says: a third of the system calls of `Path.read_bytes`, which 10,000 files notice."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(chunks)


def write_atomic(path: Path, text: str | bytes, mode: int | None = None) -> None:
    """Replace `path` whole, so a reader never sees half a file: write a temporary file in the
    same folder, then rename it over the target. The file keeps its mode (a new one: `mode`,
    else 0o644); with `mode`, it takes that one. Text is written as UTF-8, bytes as they are."""
    import tempfile  # here, not above: reading a plan (what most commands do) never writes

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with _written_lock:
        _temporaries.add(os.path.abspath(tmp))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(tmp, mode)
        # Replaced and remembered as one step: a guard asking meanwhile waits for both.
        with _written_lock:
            os.replace(tmp, path)
            _remember(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# What this process wrote with write_atomic, and the identities its writes left. A guard that
# watches the plan folder while agents work (in a run of several jobs, other tasks' statuses
# are written meanwhile) tells the harness's own writes from anyone else's by it. Every write's
# identity is kept, not the last alone: a job may write a file again between a guard's print
# and its question (each replacement is a new inode, so no one else's write can match).
_written: dict[str, set[str]] = {}
_temporaries: set[str] = set()  # the temporary files of those writes, seen for an instant
_written_lock = threading.RLock()


def identity(info: os.stat_result) -> str:
    """A file's stat identity and mode, as the guard's prints record it."""
    mode = stat.S_IMODE(info.st_mode)
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns} {mode:o}"


def _remember(path: Path) -> None:
    with _written_lock:
        _written.setdefault(os.path.abspath(path), set()).add(identity(os.stat(path)))


def written_by_us(path: Path, seen: str | None) -> bool:
    """Whether `seen` (an identity; None: gone) is what this process's last write of `path`
    left, or `path` is the temporary file of one of its writes."""
    key = os.path.abspath(path)
    with _written_lock:
        return key in _temporaries or (seen is not None and seen in _written.get(key, ()))
