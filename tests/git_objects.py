"""What a repository's own object store holds, read by plain git and by listing its files: for
tests that say which objects reached the user's repository, and that none came twice."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

# Plain git, whatever the test process's environment says: the repository's own objects only.
_PLAIN = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=_PLAIN, check=False
    )


def held(repo: Path) -> set[str]:
    """Every object the repository holds itself, loose or packed (it has no alternates)."""
    listed = _git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    assert listed.returncode == 0, listed.stderr
    return set(listed.stdout.decode().split())


def copies(repo: Path) -> Counter[str]:
    """How many times each object is stored: once per loose file and once per pack."""
    objects = repo / ".git" / "objects"
    found: Counter[str] = Counter()
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        found.update(folder.name + name.name for name in folder.iterdir())
    for index in (objects / "pack").glob("*.idx"):
        shown = _git(repo, "show-index", stdin=index.read_bytes()).stdout.decode()
        found.update(line.split()[1] for line in shown.splitlines())
    return found


def broken(repo: Path) -> str:
    """What `git fsck` finds wrong with the repository alone (every ref's objects there), or
    "" when nothing."""
    checked = _git(repo, "fsck", "--connectivity-only", "--no-dangling", "--no-progress")
    return "" if checked.returncode == 0 else (checked.stdout + checked.stderr).decode()


def added(git_dir: Path, sha: str) -> set[str]:
    """The objects commit `sha` adds over its parents (itself, and the trees and blobs none of
    them holds), read through the git folder `git_dir` (a run's depot)."""
    listed = _git(git_dir, f"--git-dir={git_dir}", "rev-list", "--objects", f"{sha}^!")
    assert listed.returncode == 0, listed.stderr
    return {line.split()[0] for line in listed.stdout.decode().splitlines()}
