"""Branches: reading, creating, moving and deleting them, each move a compare and swap, and the
ref locks a killed git leaves behind. Every name is checked by git's own rule first, and a
branch is pointed at a commit only once the repository holds all of its objects (a candidate's
are in the run's depot until then: workspace/depot.py).
"""

from __future__ import annotations

import functools
import os
import re
import stat
from pathlib import Path

from taskhand.workspace import depot, git, worktrees


def current_branch(repo: Path) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    done = git.run(repo, "symbolic-ref", "--quiet", "HEAD", ok=(0, 1))
    if done.returncode != 0:
        return None
    return git.decode(done.stdout).strip().removeprefix("refs/heads/")


def _branch_ref(repo: Path, name: str) -> str:
    ref = f"refs/heads/{name}"
    if name.startswith("-") or not _valid_ref(repo, ref):
        raise git.error(f"invalid branch name {name!r}", "use letters, digits, '-', '_' and '/'")
    return ref


# Components of letters, digits, '-' and '_' between single slashes: valid by git's rule (no
# dots, so no '..', '.lock' or leading '.'; no special characters), and what the harness makes.
_PLAIN_REF = re.compile(r"refs/heads/[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*")


@functools.lru_cache(maxsize=1024)
def _valid_ref(repo: Path, ref: str) -> bool:
    """git's own rule for ref names, asked once per name that is not plainly valid."""
    if _PLAIN_REF.fullmatch(ref):
        return True
    return git.run(repo, "check-ref-format", ref, ok=(0, 1)).returncode == 0


def branch_sha(repo: Path, name: str) -> str | None:
    done = git.run(repo, "rev-parse", "--verify", "--quiet", _branch_ref(repo, name), ok=(0, 1))
    return git.decode(done.stdout).strip() if done.returncode == 0 else None


def branch_shas(repo: Path, names: list[str]) -> dict[str, str]:
    """The commit each of the branches `names` points at; a missing branch is left out.

    Read from their ref files when git keeps each of them in one (the run's branches, which
    git wrote: checked after every unit, so a process saved each time counts), else from one
    git process, which also knows packed and symbolic refs and other ref stores."""
    if not names:
        return {}
    refs = [_branch_ref(repo, name) for name in names]
    loose = _loose_refs(git.common_dir(repo), refs)
    if loose is not None:
        return {ref.removeprefix("refs/heads/"): sha for ref, sha in loose.items()}
    fmt = "--format=%(objectname) %(refname)"
    found: dict[str, str] = {}
    for line in git.decode(git.run(repo, "for-each-ref", fmt, *refs).stdout).splitlines():
        sha, _, ref = line.partition(" ")
        if ref in refs:  # a pattern also matches the refs below it: keep exact names only
            found[ref.removeprefix("refs/heads/")] = sha
    return found


# What git itself writes into a loose ref of a SHA-1 repository; anything else is left to git.
_OBJECT_NAME = re.compile(rb"([0-9a-f]{40})\n?")


def _loose_refs(common: Path, refs: list[str]) -> dict[str, str] | None:
    """Each ref's commit as its own file under `common` says, where git reads it from that
    file: a regular file holding just an object name, in a repository without a reftable;
    a ref with no such file is what packed-refs says, or missing (a task's branch before its
    work lands). None when any of them is not such a file (a symbolic ref, a link, a SHA-256
    name, a packed-refs file git did not write): git knows those."""
    if (common / "reftable").exists():
        return None
    found: dict[str, str] = {}
    folder = str(common)  # plain strings: a run reads every branch it made after every unit
    packed: dict[str, str] | None = None
    for ref in refs:
        try:
            fd = os.open(os.path.join(folder, ref), os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            try:
                packed = _packed_refs(folder) if packed is None else packed
            except OSError:
                return None
            if ref in packed:
                found[ref] = packed[ref]
            continue
        except OSError:  # a link, or unreadable: git knows
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            named = _OBJECT_NAME.fullmatch(handle.read(42))
        if named is None:
            return None
        found[ref] = named.group(1).decode()
    return found


def _packed_refs(folder: str) -> dict[str, str]:
    """The refs the repository's packed-refs file names, with their commits; {} when there
    is none. A line git would not write there raises OSError, so the caller asks git."""
    try:
        with open(os.path.join(folder, "packed-refs"), "rb") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return {}
    found = {}
    for line in lines:
        if line.startswith((b"#", b"^")):  # the header, and a peeled tag's object
            continue
        sha, _, ref = line.partition(b" ")
        if _OBJECT_NAME.fullmatch(sha) is None or not ref.startswith(b"refs/"):
            raise OSError("a packed-refs line git would not write")
        found[os.fsdecode(ref)] = sha.decode()
    return found


def create_branch(repo: Path, name: str, sha: str) -> None:
    """Create branch `name` at `sha`; nothing to do when it is already there."""
    full = git.resolve(repo, sha)
    existing = create_branch_if_absent(repo, name, full)
    if existing is not None and existing != full:
        raise git.error(
            f"branch {name!r} already exists at {str(existing)[:12]}, not {full[:12]}",
            "delete that branch or choose another name",
        )


def create_branch_if_absent(repo: Path, name: str, sha: str) -> str | None:
    """Create branch `name` at `sha` unless a branch of that name exists: None when it was
    created, else the commit it is at (which may be `sha`)."""
    ref, full = _branch_ref(repo, name), git.resolve(repo, sha)
    depot.publish(repo, full)
    # An empty old value makes the creation fail if the branch exists: when it does not, one
    # process is all it takes.
    done = git.run(repo, "update-ref", ref, full, "", ok=(0, 128))
    if done.returncode == 0:
        return None
    existing = branch_sha(repo, name)
    if existing is None:  # refused for another reason
        raise git.error(
            f"cannot create branch {name!r} in {repo}: {git.reason(done.stderr)}",
            "run the same git command in that folder to see the full error",
        )
    return existing


def move_branch(repo: Path, name: str, new: str, old: str) -> None:
    """Point branch `name` at `new`, only if it still points at `old`."""
    ref, full_new, full_old = (
        _branch_ref(repo, name),
        git.resolve(repo, new),
        git.resolve(repo, old),
    )
    depot.publish(repo, full_new)
    if git.run(repo, "update-ref", ref, full_new, full_old, ok=(0, 128)).returncode == 0:
        return
    now = branch_sha(repo, name)
    if now is None:
        raise git.error(f"branch {name!r} does not exist", "create it first")
    raise git.error(
        f"branch {name!r} is at {now[:12]}, not {full_old[:12]}",
        "it moved meanwhile; read it again and retry",
    )


def delete_branch(repo: Path, name: str, expected: str = "") -> None:
    """Delete branch `name` if it exists (only while it holds `expected`, when given); refuse
    while a worktree has it checked out."""
    ref = _branch_ref(repo, name)
    for tree in worktrees.listed(repo):
        if tree.branch == name:
            raise git.error(
                f"branch {name!r} is checked out in {tree.path}", "remove that worktree first"
            )
    old = [expected] if expected else []
    if git.run(repo, "update-ref", "-d", ref, *old, ok=(0, 128)).returncode != 0:
        raise git.error(f"branch {name!r} moved meanwhile", "run the command again")


def clear_ref_locks(repo: Path, branches: list[str]) -> list[str]:
    """Remove the `.lock` files a killed git left on these branches' refs; the names removed.

    Only for branches the caller owns exclusively (the runner holds the plan's lock): a lock
    file there can only be left over from a git process that died mid-update.
    """
    folder = git.common_dir(repo)
    removed = []
    for branch in branches:
        stale = folder / "refs" / "heads" / f"{branch}.lock"
        if branch and stale.is_file():
            stale.unlink(missing_ok=True)
            removed.append(branch)
    return removed
