"""The TaskTrack publication a new plan gets: the one named, else one a TaskTrack plan of the
same repository holds; never one of taskhand's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan import publication
from taskhand.plan.model import Dialect
from taskhand.plan.publication import PublicationError
from tests.plans import tt_plan


def plant(folder: Path, files: dict[str, str | bytes]) -> None:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text if isinstance(text, str) else text.decode())


def test_a_publication_of_a_plan_in_the_repository_is_found_from_anywhere_in_it(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    plant(repo / "plans" / "old", tt_plan([[("FOO-1", "DONE")]]))
    (repo / "src" / "deep").mkdir(parents=True)
    found = publication.nearby(repo / "src" / "deep")
    assert found == repo / "plans" / "old" / "TaskTrack-v1.md"


def test_a_stray_file_named_like_a_publication_is_not_taken(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notes").mkdir()
    (repo / "notes" / "TaskTrack-v9.md").write_text("# not beside a plan\n")
    plant(repo / "node_modules" / "pkg", tt_plan([[("FOO-1", "OPEN")]]))  # never searched
    assert publication.nearby(repo) is None


def test_the_highest_revision_wins_and_a_named_one_is_checked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    plant(repo / "a", tt_plan([[("FOO-1", "OPEN")]]))
    newer = tt_plan([[("BAR-1", "OPEN")]], code="BAR", spec=False)
    newer["TaskTrack-v2.md"] = "# the second revision\n"
    plant(repo / "b", newer)
    assert publication.nearby(repo) == repo / "b" / "TaskTrack-v2.md"
    assert publication.checked(repo / "a" / "TaskTrack-v1.md", Dialect.TASKTRACK)
    with pytest.raises(PublicationError, match="applies to TaskTrack plans"):
        publication.checked(repo / "a" / "TaskTrack-v1.md", Dialect.MARKDOWN)
    with pytest.raises(PublicationError, match=r"named TaskTrack-<REVISION>\.md"):
        publication.checked(repo / "a" / "FOO-TaskTrack.md", Dialect.TASKTRACK)
