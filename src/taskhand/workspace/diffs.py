"""What one commit changes against another, read with git plumbing: the changed paths with
renames, `git diff --check` whitespace problems, and the targets of changed symlinks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

from taskhand.text import printable

# git's helpers are called through the module, so a wrapper on git.run (the benchmark's
# counter of git processes) sees these calls too.
from taskhand.workspace import git


@dataclass(frozen=True)
class Change:
    status: str  # one of A, M, D, R, T, C
    path: str
    old_path: str | None = None


@dataclass(frozen=True)
class _Entry:
    change: Change
    mode: str  # the new mode, 000000 for a deleted path
    blob: str  # the new blob
    added: int | None = None  # None for a binary file
    deleted: int | None = None


def changed_paths(repo: Path, base: str, head: str) -> list[Change]:
    """What `head` changes relative to `base`, renames detected."""
    return [entry.change for entry in _entries(repo, base, head)]


def _entries(repo: Path, base: str, head: str) -> tuple[_Entry, ...]:
    return _diff(repo, git.resolve(repo, base), git.resolve(repo, head))


@functools.lru_cache(maxsize=32)  # commits never change: the gate and the review share one
def _diff(repo: Path, older: str, newer: str) -> tuple[_Entry, ...]:
    """Every changed path with its new mode, blob and line counts, from one git process."""
    # diff-tree is the plumbing twin of `git diff base head`: it ignores the user's diff
    # settings (relative paths, colour, external tools) that could change the output.
    diff = ["diff-tree", "-r", "-z", "-M", "--raw", "--numstat"]
    fields = git.fields(git.run(repo, *diff, older, newer).stdout)
    raw: list[_Entry] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):  # --raw first: ":modes shas status"
        _, mode, _, blob, status = fields[i][1:].split(" ")
        if status[0] in "RC":
            raw.append(_Entry(Change(status[0], fields[i + 2], fields[i + 1]), mode, blob))
            i += 3
        else:
            raw.append(_Entry(Change(status[0], fields[i + 1]), mode, blob))
            i += 2
    found: list[_Entry] = []
    for entry in raw:  # then --numstat, one record per path in the same order
        added, deleted, path = fields[i].split("\t", 2)
        i += 3 if not path else 1  # a rename: the old and the new name follow as fields
        found.append(replace(entry, added=_lines(added), deleted=_lines(deleted)))
    return tuple(found)


def whitespace_errors(repo: Path, base: str, head: str) -> str:
    """`git diff --check` from `base` to `head`: the problems found, or "" when clean."""
    check = ["diff", "--check", "--no-color", "--no-ext-diff"]
    done = git.run(repo, *check, git.resolve(repo, base), git.resolve(repo, head), ok=(0, 2))
    return printable(git.decode(done.stdout), lines=True)  # git prints names unquoted here


def symlinks(repo: Path, base: str, head: str) -> dict[str, str]:
    """For each path `head` adds or changes as a symlink: the text of its target."""
    blobs = {e.change.path: e.blob for e in _entries(repo, base, head) if e.mode == "120000"}
    return _texts(repo, blobs)


@dataclass(frozen=True)
class Layout:
    """A commit's tree as a checkout lays it out: its folders (a submodule's too), its files,
    and its symlinks with the text of their targets. A path in none of them is not there."""

    folders: frozenset[str]
    files: frozenset[str]
    links: dict[str, str]


def layout(repo: Path, head: str) -> Layout:
    """The layout of commit `head`'s whole tree (where its symlinks lead is judged in it)."""
    listed = ["ls-tree", "-r", "-t", "-z", "--full-tree", git.resolve(repo, head)]
    folders, files, blobs = set(), set(), {}
    for entry in git.fields(git.run(repo, *listed).stdout):
        meta, _, path = entry.partition("\t")
        mode, _, blob = meta.split(" ")
        if mode in ("040000", "160000"):
            folders.add(path)
        elif mode == "120000":
            blobs[path] = blob
        else:
            files.add(path)
    return Layout(frozenset(folders), frozenset(files), _texts(repo, blobs))


def _texts(repo: Path, blobs: dict[str, str]) -> dict[str, str]:
    """The content of each blob as text, by path, from one git process."""
    order = sorted(blobs)
    request = "".join(f"{blobs[path]}\n" for path in order).encode()
    rest = git.run(repo, "cat-file", "--batch", stdin=request).stdout if order else b""
    texts: dict[str, str] = {}
    for path in order:
        header, _, rest = rest.partition(b"\n")
        size = int(header.split(b" ")[2])
        texts[path] = git.decode(rest[:size])
        rest = rest[size + 1 :]
    return texts


@dataclass(frozen=True)
class Counted:
    """One changed path and its added and deleted lines (None for binary files)."""

    path: str
    added: int | None
    deleted: int | None


def counts(repo: Path, base: str, head: str) -> list[Counted]:
    """Lines added and deleted per changed path, renames shown under the new name."""
    return [Counted(e.change.path, e.added, e.deleted) for e in _entries(repo, base, head)]


def _lines(count: str) -> int | None:
    return None if count == "-" else int(count)  # git writes - for a binary file


def summary(repo: Path, base: str, head: str, names: int = 8) -> str:
    """One line: how many files changed, lines added and deleted, and the first names."""
    changed = counts(repo, base, head)
    if not changed:
        return "no changes"
    added = sum(c.added or 0 for c in changed)
    deleted = sum(c.deleted or 0 for c in changed)
    shown = ", ".join(printable(c.path, name=True) for c in changed[:names])
    more = f" and {len(changed) - names} more" if len(changed) > names else ""
    files = "1 file" if len(changed) == 1 else f"{len(changed)} files"
    return f"{files} changed (+{added} -{deleted}): {shown}{more}"


def patch(repo: Path, base: str, head: str) -> str:
    """The unified diff from `base` to `head`, as a reviewer reads it."""
    diff = ["diff-tree", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv"]
    raw = git.run(repo, *diff, git.resolve(repo, base), git.resolve(repo, head)).stdout
    return raw.decode("utf-8", "replace")  # prompt text: undecodable bytes become U+FFFD
