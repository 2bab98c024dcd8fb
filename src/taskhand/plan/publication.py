"""The TaskTrack specification publication a new TaskTrack plan folder must hold: the one a
person names (`--spec`), else one that a TaskTrack plan of the same repository already holds.

taskhand ships no publication of its own: the specification's text is its authors', so a
plan gets a copy that came with the person's plans, never one of ours.
"""

from __future__ import annotations

import os
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan.formats.tasktrack import OVERVIEW_SUFFIX, SPEC_RE
from taskhand.plan.model import Dialect

# Folders never searched for plans: tools' caches and dependencies, large and never plans.
_SKIPPED = {"node_modules", "venv", "__pycache__", "dist", "build", "target"}
_DEPTH = 4  # folders below the repository's top searched for plans


class PublicationError(UserError):
    """A `--spec` that cannot be the plan's publication: the message says why, and the fix."""


def checked(spec: Path | None, dialect: Dialect) -> Path | None:
    """`spec` when it can be copied into a plan of `dialect` as its publication."""
    if spec is None:
        return None
    if dialect is not Dialect.TASKTRACK:
        raise PublicationError(
            "--spec applies to TaskTrack plans", where=str(spec), fix="drop --spec"
        )
    if not spec.is_file():
        raise PublicationError("no such spec file", where=str(spec), fix="give its path")
    if not SPEC_RE.match(spec.name):
        raise PublicationError(
            "a spec publication is named TaskTrack-<REVISION>.md",
            where=str(spec),
            fix="rename it, or give the publication itself",
        )
    return spec


def nearby(start: Path) -> Path | None:
    """A publication held by a TaskTrack plan of the repository around `start` (its top
    found by the nearest `.git`), the highest revision by name; None when there is none."""
    top = _repository_top(start.resolve())
    found: list[Path] = []
    for folder, names, files in os.walk(top):
        depth = len(Path(folder).relative_to(top).parts)
        names[:] = [] if depth >= _DEPTH else [
            n for n in names if not n.startswith(".") and n not in _SKIPPED
        ]  # fmt: skip
        if any(f.endswith(OVERVIEW_SUFFIX) and not SPEC_RE.match(f) for f in files):
            found += [Path(folder) / f for f in files if SPEC_RE.match(f)]
    regular = [p for p in found if p.is_file() and not p.is_symlink()]
    return max(regular, key=lambda p: (p.name, str(p)), default=None)


def _repository_top(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start
