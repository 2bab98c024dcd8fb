"""The one atomic write: a file replaced whole, keeping its mode."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.formats.files import write_atomic


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
