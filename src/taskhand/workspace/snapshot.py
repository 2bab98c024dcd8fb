"""A snapshot of a checkout, for comparing before and after a worktree operation: its HEAD,
branch, index, stash and status, and the content (or stat identity) and mode of every file
outside .git.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from taskhand.plan.formats import files
from taskhand.text import printable

# git's helpers are called through the module, so a wrapper on git.run (the benchmark's
# counter of git processes) sees these calls too.
from taskhand.workspace import git, refs


def snapshot(repo: Path, content: bool = True) -> dict[str, object]:
    """Everything a worktree operation must leave alone in a checkout, for comparing.

    `content=False` records each file's inode, size and change times instead of hashing its
    bytes: the kernel moves a file's ctime on every write, so this catches any change to the
    file as surely, at the cost of a stat instead of a read (it matters on large trees).
    """
    head = git.run(repo, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1))
    # Status first: it may refresh the index's stat data, which must not read as a change.
    status = git.output(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    index = Path(git.output(repo, "rev-parse", "--git-path", "index"))
    index = index if index.is_absolute() else repo / index
    return {
        "head": git.decode(head.stdout).strip() or None,
        "branch": refs.current_branch(repo),
        "index": git.output(repo, "ls-files", "-s", "-z"),
        "index_hash": _file_digest(index) if index.exists() else None,
        "stash": git.output(repo, "stash", "list"),
        "status": status,
        "files": tree_digests(repo, content),
    }


def _file_digest(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def tree_digests(
    root: Path,
    content: bool = True,
    with_git: bool = False,
    skip: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    """Every entry under `root` (but .git, unless `with_git`; and but the names `skip` says):
    file content (or stat identity) and mode, link text, or 'dir'. Plain file reads only: no
    git runs, whatever a configuration under `root` says."""
    digests: dict[str, str] = {}
    if not os.path.isdir(root) or os.path.islink(root):
        return digests
    # Plain strings, not Path objects: a large project has tens of thousands of entries.
    start = len(str(root)) + 1
    folders = [str(root)]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:  # a folder made unreadable: its listing is what changed
            continue
        for entry in entries:
            name = entry.path[start:].replace(os.sep, "/")
            if (name == ".git" and not with_git) or (skip is not None and skip(name)):
                continue
            try:
                if entry.is_symlink():
                    digests[name] = f"link {os.readlink(entry.path)}"
                elif entry.is_dir():
                    digests[name] = "dir"
                    folders.append(entry.path)
                else:
                    info = entry.stat()
                    if content:
                        digest = _file_digest(Path(entry.path))
                        digests[name] = f"{digest} {info.st_mode & 0o7777:o}"
                    else:
                        digests[name] = files.identity(info)
            except OSError:
                digests[name] = "unreadable"
    return digests


def differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """What changed between two digests of a folder, one line each, sorted."""
    found = []
    for name in sorted(old.keys() | new.keys()):
        shown = printable(name, name=True)  # a line break in a name forges no line
        if name not in new:
            found.append(f"{shown} was deleted")
        elif name not in old:
            found.append(f"{shown} was added")
        elif old[name] != new[name]:
            found.append(f"{shown} was modified")
    return found
