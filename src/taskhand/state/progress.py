"""The plan's progress channel: one line for each task's conclusion, appended by the harness
to a file in the state folder (never in a workspace), and the last lines later workers read.

A line is whole or absent: each append is one write of whole lines, then fsync; a reader skips
a last line without its newline, and the next append cuts it off first. Each line carries the
key of the conclusion it notes, so noting the same conclusion again (after a kill) adds nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from taskhand.plan.model import Status
from taskhand.text import shorten

TITLE_CHARS = 120
RESOLUTION_CHARS = 200
# The tail read first for a prompt's lines; a bigger one when it holds too few.
WINDOW_BYTES = 64 * 1024


class Outcome(StrEnum):
    """How a task ended, as its line says."""

    DONE = "done"
    FAILED = "failed"
    WAITING = "waiting"  # for a person's answer


OUTCOMES = {Status.DONE: Outcome.DONE, Status.FAIL: Outcome.FAILED, Status.WAIT: Outcome.WAITING}


@dataclass(frozen=True)
class Note:
    """One line of the channel. `key` names the conclusion (its run and event); the rest is
    what later workers may read."""

    key: str
    task_id: str
    outcome: Outcome
    title: str
    resolution: str

    def line(self) -> str:
        """The line as stored: tab-separated fields, each on one line, without the newline."""
        fields = [self.key, self.task_id, self.outcome.value, self.title, self.resolution]
        widths = [200, 200, 20, TITLE_CHARS, RESOLUTION_CHARS]
        return "\t".join(one_line(f, w) for f, w in zip(fields, widths, strict=True))

    @classmethod
    def parse(cls, line: str) -> Note | None:
        """The note a stored line holds, or None for a line this version cannot read."""
        parts = line.split("\t")
        if len(parts) != 5 or parts[2] not in Outcome.__members__.values():
            return None
        key, task_id, outcome, title, resolution = parts
        return cls(key, task_id, Outcome(outcome), title, resolution)


def one_line(text: str, width: int) -> str:
    """`text` with its whitespace (tabs and line breaks too) collapsed, cut to `width`."""
    return shorten(" ".join(text.split()), width)


def append(path: Path, notes: list[Note]) -> list[Note]:
    """Append each of `notes` whose key the channel lacks, in order; the ones appended.

    A torn last line (a kill mid-write) is cut off first: its note, if it is among `notes`,
    is then written whole.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        data = _read_all(fd)
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) < len(data):
            os.ftruncate(fd, len(whole))
        kept = _keys(whole)
        new = []
        for note in notes:
            if note.key not in kept:
                kept.add(note.key)
                new.append(note)
        if new:
            block = "".join(n.line() + "\n" for n in new).encode("utf-8", "replace")
            written = 0
            while written < len(block):  # one write for a regular file; the loop for the rest
                written += os.write(fd, block[written:])
            os.fsync(fd)
    finally:
        os.close(fd)
    if not existed:
        _sync_folder(path.parent)  # the file's name is durable too
    return new


def keys(path: Path) -> set[str]:
    """The keys of the conclusions the channel notes (whole lines only)."""
    if not path.is_file():
        return set()
    data = path.read_bytes()
    return _keys(data[: data.rfind(b"\n") + 1])


def recent(path: Path, count: int, leave_out: str = "") -> list[Note]:
    """The newest note of each of the last `count` tasks to end, oldest first, leaving out
    task `leave_out`'s own: a task's later line (done after waiting) replaces its earlier
    one. A torn last line is not read. Only the file's tail is read."""
    if count <= 0 or not path.is_file():
        return []
    window = max(WINDOW_BYTES, count * 1024)
    while True:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - window)
            handle.seek(start)
            data = handle.read()
        data = data[: data.rfind(b"\n") + 1]  # a torn last line is not a note
        lines = data.decode("utf-8", "replace").splitlines()
        if start > 0:
            lines = lines[1:]  # the first line may begin before the window
        newest: dict[str, Note] = {}
        for note in map(Note.parse, lines):
            if note is not None and note.task_id != leave_out:
                newest.pop(note.task_id, None)  # moved to the end: ordered by its newest line
                newest[note.task_id] = note
        if len(newest) >= count or start == 0:
            return list(newest.values())[-count:]
        window *= 4


def _keys(whole: bytes) -> set[str]:
    lines = whole.decode("utf-8", "replace").splitlines()
    return {n.key for n in map(Note.parse, lines) if n is not None}


def _read_all(fd: int) -> bytes:
    chunks = []
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
