"""A run's depot: a git folder of the harness's own, beside the user's repository, that keeps
what attempts produce and checks commits out byte for byte.

Objects. The blobs, trees and commits of every candidate (and of every replay onto a newer
base) are written into the depot's objects, never into the user's repository: a rejected
candidate leaves nothing in the user's `.git`. The depot reaches the user's objects through
its alternates, and every git call the harness makes in the user's checkout reads the
depot's objects too (`git.read_also`), so a candidate reads the same wherever it is asked
for. A commit's objects are copied into the user's repository (`publish`) just before a ref
there points at it (refs.py does it before every move): a candidate as it lands on the run
branch, a task's branch, what delivery pushes.

Checkouts. The depot's info/attributes, which outranks every .gitattributes (and the user's
own info/attributes is not read at all), unsets every attribute that rewrites content on its
way in or out: text and eol conversion (`crlf` too), `working-tree-encoding`, `ident`,
filters, `export-subst`. A workspace written or collected through the depot holds exactly
its commit's bytes, with the committed modes and symlinks: what a worker wrote is what is
committed, and what the gate and the reviewers run is the tree that lands.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# git's helpers are called through the module, so a wrapper on git.run (the benchmark's
# counter of git processes) sees these calls too.
from taskhand.workspace import git

NEUTRAL = "* -text -crlf -eol -filter -ident -working-tree-encoding -export-subst\n"
# Settings a global configuration could give that would change what a checkout writes: links
# as plain files, modes ignored, names folded. On the command line, they beat every file.
_CHECKOUT = (
    "core.symlinks=true",
    "core.fileMode=true",
    "core.ignoreCase=false",
    "core.precomposeUnicode=false",
    "core.autocrlf=false",
    "core.bare=false",
)
_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n"
UNPACK_LIMIT = 100  # fewer objects than this are copied loose, as `git fetch` does


@dataclass(frozen=True)
class Depot:
    """The depot at `path` of the user's checkout `repo`."""

    repo: Path
    path: Path

    @classmethod
    def open(cls, repo: Path, path: Path) -> Depot:
        """The depot at `path` for `repo`, made if missing, its settings as they must be,
        and read from now on by every git call in `repo`."""
        (path / "objects" / "pack").mkdir(parents=True, exist_ok=True)
        (path / "refs").mkdir(exist_ok=True)
        depot = cls(repo, path)
        depot.check()
        _write(path / "HEAD", b"ref: refs/heads/depot\n")  # unborn: a depot has no branch
        # What the user's repository leaves out of commits, it leaves out of candidates.
        exclude = git.common_dir(repo) / "info" / "exclude"
        _write(path / "info" / "exclude", exclude.read_bytes() if exclude.is_file() else b"")
        git.read_also(repo, depot.objects)
        return depot

    @property
    def objects(self) -> Path:
        return self.path / "objects"

    def check(self) -> None:
        """Put back the depot's own settings, should anything have changed them (an agent
        run without a sandbox could): the neutral attributes, the configuration, the way to
        the user's objects. Cheap: three small files read."""
        user = (git.common_dir(self.repo) / "objects").resolve()
        _write(self.path / "info" / "attributes", NEUTRAL.encode())
        _write(self.path / "config", _CONFIG.encode())
        _write(self.objects / "info" / "alternates", os.fsencode(f"{user}\n"))

    def args(self) -> tuple[str, ...]:
        """The git options that read and write through the depot."""
        return (f"--git-dir={self.path.resolve()}", *(a for s in _CHECKOUT for a in ("-c", s)))


def read_runs(repo: Path, depots: Iterable[Path]) -> None:
    """Let git calls in `repo` read the objects of the depots at `depots` (those there): for
    readers of a run's candidates outside the run (the board, `task show`)."""
    git.read_also(repo, *(d / "objects" for d in depots if (d / "objects").is_dir()))


# Commits whose objects the user's repository holds (by repository and sha): objects never
# leave a repository while a ref holds them, so one copy each is enough.
_PUBLISHED: set[tuple[str, str]] = set()


def publish(repo: Path, sha: str) -> None:
    """Copy into the user's repository the objects of commit `sha` that its parents do not
    hold, from the depots its git calls read, before a ref there points at `sha`. Its parents
    are there already: a candidate is built on a commit the run integrated (or its base).

    A copy a kill cut short is finished by the next call, and nothing is stored twice: few
    objects are written loose, each only if absent; many go as one pack, which git shows
    only once whole (so the commit there means all of it is)."""
    if (str(repo), sha) in _PUBLISHED or not git.reads_also(repo):
        return
    wanted = f"{sha}^!\n".encode()  # the commit, and what its parents do not hold
    packed = git.run(repo, "pack-objects", "-q", "--revs", "--stdout", stdin=wanted).stdout
    if int.from_bytes(packed[8:12], "big") < UNPACK_LIMIT:  # the pack header's object count
        git.run(repo, "unpack-objects", "-q", stdin=packed, env=git.alone())
    elif git.run(repo, "cat-file", "-e", sha, ok=(0, 1), env=git.alone()).returncode != 0:
        git.run(repo, "index-pack", "--stdin", stdin=packed, env=git.alone())
    _PUBLISHED.add((str(repo), sha))


def _write(path: Path, content: bytes) -> None:
    """`content` at `path`, written only when it holds something else."""
    try:
        if path.read_bytes() == content:
            return
    except OSError:
        path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # a link an agent left is replaced, never written through
    path.write_bytes(content)
