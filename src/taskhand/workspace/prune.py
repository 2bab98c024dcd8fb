"""Pruning an ended attempt's workspace: the rebuildable folders git ignores there
(node_modules, .venv, __pycache__, build outputs) and the files `[setup]` copied in go;
source, the result commit and anything tracked stay.

git lists what is ignored, run the harness's way (the run's depot as git dir, an index of
the harness's own holding the result's tree). Removal never follows a link: every folder
on the way is opened without following one, and a name that is a link is left alone.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.workspace import git, harness_git, removal
from taskhand.workspace.depot import Depot

# Folders a package manager or a build makes again from the source: what is safe to drop.
REBUILDABLE = frozenset(
    {
        *("node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox"),
        *("dist", "build", "target", "out", ".next", ".nuxt", ".svelte-kit", ".turbo"),
        *(".cache", ".parcel-cache", ".gradle", ".pytest_cache", ".mypy_cache", ".ruff_cache"),
    }
)
_GLOB = ("*", "?", "[")
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Pruned:
    """What pruning removed, relative to the workspace: folders, the `[setup]` copies taken
    out (deleted, or put back as the result has them), and the bytes freed."""

    folders: list[str] = field(default_factory=list)
    bytes: int = 0
    dropped: list[str] = field(default_factory=list)


def prune(
    depot: Depot,
    path: Path,
    index: Path,
    sha: str,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
) -> Pruned:
    """Remove the rebuildable folders that git ignores in the workspace at `path`, whose
    result is commit `sha` (read into `index`, which this overwrites), and take out the files
    `drop` names (copies `[setup]` made: a `.env` holds secrets, and the checkout keeps the
    original). A folder a pattern of `keep` reaches into (a task's declared paths, `dist/`)
    stays."""
    if path.is_symlink() or not path.is_dir():
        return Pruned()
    repo = depot.repo
    own, env = harness_git(depot, path, index)
    git.run(repo, "read-tree", git.resolve(repo, sha), env=env)
    dropped = _drop_copies(repo, path, own, env, drop)
    listing = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    ignored = git.fields(git.run(repo, *own, *listing, env=env).stdout)
    folders, freed = [], 0
    for entry in ignored:
        name = entry.rstrip("/")
        # A folder git ignores as a whole is listed with a slash; a link never is one.
        if not entry.endswith("/") or name.rsplit("/", 1)[-1] not in REBUILDABLE:
            continue
        if any(_reaches_into(pattern, name) for pattern in keep):
            continue
        removed = remove_inside(path, name)
        if removed is not None:
            folders.append(name)
            freed += removed
    return Pruned(folders, freed, dropped)


def _drop_copies(
    repo: Path, path: Path, own: tuple[str, ...], env: dict[str, str], copies: Sequence[str]
) -> list[str]:
    """Take out the copies `[setup]` made: deleted, or, for a file the result tracks, put
    back as the result has it (git writes it, never through a link); the ones taken out."""
    if not copies:
        return []
    literal = {**env, "GIT_LITERAL_PATHSPECS": "1"}
    listed = git.run(repo, *own, "ls-files", "-z", "--", *copies, env=literal).stdout
    tracked = set(git.fields(listed))
    taken = [name for name in copies if name not in tracked and unlink_inside(path, name)]
    if tracked:
        names = b"".join(os.fsencode(name) + b"\0" for name in sorted(tracked))
        checkout = ["checkout-index", "-f", "-z", "--stdin"]
        git.run(repo, *own, *checkout, stdin=names, env=env)
    return sorted([*taken, *tracked])


def _reaches_into(pattern: str, folder: str) -> bool:
    """Whether the pattern names `folder` or something in it by a literal path (`dist/`,
    `dist/**`); a pattern whose wildcards come first (`**/*.js`) names no folder."""
    literal: list[str] = []
    for segment in pattern.strip().split("/"):
        if segment in ("", ".") and not literal:
            continue  # a leading ./ or /
        if not segment or any(mark in segment for mark in _GLOB):
            break
        literal.append(segment)
    named = "/".join(literal)
    return bool(named) and (named == folder or named.startswith(folder + "/"))


@contextmanager
def _parent(root: Path, relative: str) -> Iterator[tuple[int, str]]:
    """The folder holding `relative` below `root`, opened on the way without following a
    link, and the last name; OSError when there is no such way (or `relative` is not plain)."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise OSError(f"not a plain relative path: {relative!r}")
    parent = os.open(root, _OPEN_DIR)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _OPEN_DIR, dir_fd=parent)
            os.close(parent)
            parent = inner
        yield parent, parts[-1]
    finally:
        os.close(parent)


def remove_inside(root: Path, relative: str) -> int | None:
    """Delete the folder `relative` below `root` and everything in it, opening each folder on
    the way without following a link; the bytes freed, or None when it was not a folder
    there (a link, a file, gone, or a way through a link)."""
    try:
        with _parent(root, relative) as (parent, name):
            if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
                return None
            # Each folder is opened and its entries removed relative to it: never through a
            # link, at any depth (workspace/removal.py).
            done = removal.Removed()
            removal.remove_entry(parent, name, done)
            return done.bytes
    except OSError:
        return None


def unlink_inside(root: Path, relative: str) -> bool:
    """Delete the file (or link: never what it points at) `relative` below `root`, reached
    without following a link; whether there was one to delete."""
    try:
        with _parent(root, relative) as (parent, name):
            if stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
                return False
            os.unlink(name, dir_fd=parent)
            return True
    except OSError:
        return False
