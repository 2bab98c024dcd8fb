"""What a unit's processes could change to take over the run a nudge resumes: the files an
agent program reads as configuration when it starts again, in its private home and in the
worktree (a reviewer's copy is its own to change). Codex reads `config.toml` (its model
provider, a base URL) and `.env`; gemini its `.env` files, settings and extensions; opencode
its global config and plugins (code it runs in its own process, which could print events of its
own). They are seen before the first run and again before the nudge: a unit whose processes
changed one is not resumed. Claude reads no settings file a unit can write at all (claude.py).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

WORKTREE = "worktree"  # where the unit works, beside the variables of the program's home
# Per program: the variable naming a folder of its home (or the worktree), and a file or (ending
# in "/") a folder under it.
WATCHED: dict[str, tuple[tuple[str, str], ...]] = {
    "codex": (
        ("CODEX_HOME", "config.toml"),
        ("CODEX_HOME", ".env"),
        (WORKTREE, ".codex/"),
    ),
    "gemini": (
        ("GEMINI_CLI_HOME", ".env"),
        ("GEMINI_CLI_HOME", ".gemini/.env"),
        ("GEMINI_CLI_HOME", ".gemini/extensions/"),
        (WORKTREE, ".env"),
        (WORKTREE, ".gemini/"),
    ),
    "opencode": (
        *(
            ("XDG_CONFIG_HOME", f"opencode/{name}")
            for name in (
                "opencode.json",
                "opencode.jsonc",
                "config.json",
                "plugin/",
                "plugins/",
                "agent/",
                "agents/",
            )
        ),
        (WORKTREE, ".opencode/"),
    ),
}
FILE_LIMIT = 1000  # files looked at per program: past that, a change may go unseen

Seen = dict[str, str]  # a file, as `$VARIABLE/path` or `worktree/path`, and what it holds


def seen(program: str, home: Mapping[str, str], worktree: Path) -> Seen:
    """The configuration files of `program` in its private home (`home`: variable to folder)
    and in the worktree."""
    folders = {**home, WORKTREE: str(worktree)}
    found: Seen = {}
    for variable, name in WATCHED.get(program, ()):
        if variable not in folders:
            continue
        root = Path(folders[variable])
        shown = variable if variable == WORKTREE else f"${variable}"
        for path in itertools.islice(_files(root / name), FILE_LIMIT):
            found[f"{shown}/{path.relative_to(root)}"] = _held(path)
    return found


def changed(before: Seen, after: Seen) -> list[str]:
    """The files added, removed or rewritten between two looks."""
    names = before.keys() | after.keys()
    return sorted(name for name in names if before.get(name) != after.get(name))


def _files(path: Path) -> Iterator[Path]:
    """`path` when it is there, or every entry under it when it is a folder (links not
    followed)."""
    if not path.is_dir() or path.is_symlink():
        if os.path.lexists(path):
            yield path
        return
    for folder, folders, files in os.walk(path):
        for name in sorted(files + [f for f in folders if os.path.islink(Path(folder, f))]):
            yield Path(folder, name)


def _held(path: Path) -> str:
    """A digest of a regular file's bytes; what else is there, for anything else (never read:
    a FIFO would block, a link could lead anywhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"not opened: {exc.strerror}"
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
        return hashlib.file_digest(file, "sha256").hexdigest()
