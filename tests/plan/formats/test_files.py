"""The one atomic write: a file replaced whole, keeping its mode."""

from __future__ import annotations

import os
from pathlib import Path

from taskhand.plan.formats.files import identity, write_atomic, written_by_us


def test_a_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "T-1.md"
    path.write_text("old\n")
    path.chmod(0o640)
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["T-1.md"]  # no temporary file left


def test_a_new_file_is_readable_unless_a_mode_is_given(tmp_path: Path) -> None:
    write_atomic(tmp_path / "plain", "x")
    write_atomic(tmp_path / "private", "x", mode=0o600)
    assert (tmp_path / "plain").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private").stat().st_mode & 0o777 == 0o600


def test_each_of_this_processs_writes_is_told_from_anyone_elses(tmp_path: Path) -> None:
    """A guard prints the plan folder, another job writes the same file twice, then the guard
    asks about what it saw: the earlier write is still ours; a write by anyone else is not."""
    path = tmp_path / "overview.md"
    write_atomic(path, "one\n")
    seen = identity(os.stat(path))
    write_atomic(path, "two\n")  # another job, before the guard asks
    assert written_by_us(path, seen)
    assert written_by_us(path, identity(os.stat(path)))
    path.write_text("an agent's\n")  # in place: same inode, a new change time
    assert not written_by_us(path, identity(os.stat(path)))
    theirs = tmp_path / "theirs.md"
    theirs.write_text("two\n")
    os.replace(theirs, path)  # replaced whole, as this process writes, but not by it
    assert not written_by_us(path, identity(os.stat(path)))
