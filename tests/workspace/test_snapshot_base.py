"""A snapshot of a dirty checkout: the working tree's bytes (staged, unstaged, untracked, not
ignored; links and executable bits as they are) in one commit on HEAD, the user's index,
files, stash, refs and configuration untouched; a state no commit can hold is refused whole."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from taskhand.workspace import snapshot_base
from taskhand.workspace.snapshot import snapshot
from tests.workspace.conftest import commit, run, write


def repository_state(repo: Path) -> dict[str, object]:
    """What --snapshot must leave as it was: the checkout (snapshot.py), every ref but the
    harness's own, and the configuration file's bytes."""
    refs = [
        line
        for line in run(repo, "for-each-ref", "--format=%(objectname) %(refname)").splitlines()
        if " refs/taskhand/" not in line
    ]
    config = hashlib.sha256((repo / ".git" / "config").read_bytes()).hexdigest()
    return {**snapshot(repo), "refs": refs, "config": config}


def dirty(repo: Path) -> None:
    """Staged, unstaged, staged-then-edited, untracked, ignored and deleted changes, a link
    and an executable bit."""
    write(repo, {"staged.txt": "staged\n", "both.txt": "first\n"})
    run(repo, "add", "staged.txt", "both.txt")
    write(repo, {"both.txt": "then edited\n", "README.md": "# edited, not staged\n"})
    write(repo, {"notes/untracked.txt": "untracked\n", "build/out.o": "ignored\n"})
    (repo / "src" / "app.py").unlink()
    os.symlink("README.md", repo / "link")
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)


def files_of(repo: Path, sha: str) -> dict[str, str]:
    listing = run(repo, "ls-tree", "-r", "--format=%(objectmode) %(path)", sha)
    return {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in listing.splitlines()}


def test_the_snapshot_holds_the_working_tree_and_touches_nothing(
    repo: Path, tmp_path: Path
) -> None:
    write(repo, {"stashed.txt": "stash me\n"})
    run(repo, "add", "stashed.txt")
    run(repo, "stash", "push", "-q", "-m", "kept", "--", "stashed.txt")
    dirty(repo)
    before = repository_state(repo)
    assert "kept" in str(before["stash"])
    sha = snapshot_base.take(repo, tmp_path / "state")
    assert repository_state(repo) == before
    assert run(repo, "rev-parse", f"{sha}^") == run(repo, "rev-parse", "HEAD")
    modes = files_of(repo, sha)
    assert modes == {
        ".gitignore": "100644",
        "README.md": "100644",
        "both.txt": "100644",
        "link": "120000",
        "notes/untracked.txt": "100644",
        "run.sh": "100755",
        "staged.txt": "100644",
    }
    assert run(repo, "show", f"{sha}:both.txt") == "then edited"  # the working tree's bytes
    assert run(repo, "show", f"{sha}:README.md") == "# edited, not staged"
    assert run(repo, "show", f"{sha}:link") == "README.md"
    assert list((tmp_path / "state").iterdir()) == []  # the temporary index is gone


def test_a_clean_checkout_is_its_head(repo: Path, tmp_path: Path) -> None:
    write(repo, {"build/out.o": "ignored only\n"})
    assert snapshot_base.take(repo, tmp_path) == run(repo, "rev-parse", "HEAD")


def test_the_ref_keeps_it_and_no_branch_shows_it(repo: Path, tmp_path: Path) -> None:
    dirty(repo)
    sha = snapshot_base.take(repo, tmp_path)
    snapshot_base.keep(repo, "r1", sha)
    snapshot_base.keep(repo, "r1", sha)  # again: nothing to do
    assert snapshot_base.kept(repo, "r1") == sha
    assert run(repo, "branch", "--list") == "* main"
    other = commit(repo, "later")
    with pytest.raises(snapshot_base.git.GitError, match="cannot keep the run's snapshot"):
        snapshot_base.keep(repo, "r1", other)


def test_unmerged_paths_are_refused_with_nothing_made(repo: Path, tmp_path: Path) -> None:
    run(repo, "checkout", "-q", "-b", "side")
    commit(repo, "side", {"README.md": "side\n"})
    run(repo, "checkout", "-q", "main")
    commit(repo, "main", {"README.md": "main\n"})
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "side"], capture_output=True)
    before = repository_state(repo)
    objects = run(repo, "count-objects", "-v")
    with pytest.raises(snapshot_base.SnapshotError, match=r"unmerged paths \(README.md\)") as no:
        snapshot_base.take(repo, tmp_path)
    assert "(fix: finish the merge" in str(no.value) and "\n" not in str(no.value)
    assert repository_state(repo) == before
    assert run(repo, "count-objects", "-v") == objects


def test_a_nested_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    run(nested, "init", "-q")
    commit(nested, "its own", {"x.txt": "x\n"})
    with pytest.raises(snapshot_base.SnapshotError, match="vendor/lib is a submodule"):
        snapshot_base.take(repo, tmp_path)


def test_a_changed_submodule_is_refused(repo: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    run(tmp_path, "init", "-q", "-b", "main", "library")
    commit(library, "lib", {"lib.txt": "v1\n"})
    run(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    commit(repo, "with a submodule")
    snapshot_base.take(repo, tmp_path)  # unchanged: fine
    write(repo / "lib", {"lib.txt": "v2, not committed there\n"})
    with pytest.raises(snapshot_base.SnapshotError, match="lib is a submodule"):
        snapshot_base.take(repo, tmp_path)
